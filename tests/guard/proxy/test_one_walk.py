"""A chat request walks the proxy's stages once each (issue 37): parse, price, forward (or
the early relay), decide, deliver — no stage entered twice, none skipped, in that order; the
guard prices it once and decides it once. Real servers on 127.0.0.1 and the official client:
a buffered reply, a stream held for the decision (L = 20 > C_R) and a stream relayed early
(L = 0.5 <= C_R: every p answers)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

import guard.proxy.early as early
import guard.proxy.pipeline as pipeline
from guard.core import Guard
from tests.guard.proxy.conftest import Served, openai_client

#: The stages as :mod:`guard.proxy.pipeline` and :mod:`guard.proxy.early` call them.
STAGES = {pipeline: ("parse", "priced", "forwarding", "forward", "relay", "decide", "deliver"),
          early: ("decide",)}


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every stage entered, in order (and ``Guard.price`` / ``Guard.decide`` calls)."""
    seen: list[str] = []

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            seen.append(name)
            return fn(*args, **kwargs)
        return inner

    for module, names in STAGES.items():
        for name in names:
            monkeypatch.setattr(module, name, wrap(name, getattr(module, name)))
    for name in ("price", "decide"):
        monkeypatch.setattr(Guard, name, wrap(f"Guard.{name}", getattr(Guard, name)))
    return seen


@pytest.mark.parametrize(("question", "stream", "expected"), [
    pytest.param("What is the dose?", False,
                 ["parse", "forwarding", "priced", "Guard.price", "decide", "Guard.decide",
                  "deliver"], id="buffered"),
    pytest.param("What is the dose?", True,
                 ["parse", "priced", "Guard.price", "forward", "decide", "Guard.decide",
                  "deliver"], id="stream-held"),
    pytest.param("a cheap question", True,
                 ["parse", "priced", "Guard.price", "relay", "decide", "Guard.decide"],
                 id="stream-early"),
])
def test_a_chat_request_enters_each_stage_once(
        start_proxy: Callable[..., Served], walked: list[str], question: str, stream: bool,
        expected: list[str]) -> None:
    served = start_proxy()
    client = openai_client(served)
    walked.clear()  # the proxy's warm-up at start prices and decides too
    messages: list[Any] = [{"role": "user", "content": question}]
    if stream:
        list(client.chat.completions.create(model="m", messages=messages, stream=True))
    else:
        client.chat.completions.create(model="m", messages=messages)
    assert walked == expected, walked
