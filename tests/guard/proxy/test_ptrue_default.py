"""``--confidence ptrue`` (one extra call per reply) and the default policy of ``serve``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from guard.confidence.ptrue import PTRUE_INSTRUCTION
from guard.policy import load_shipped_default
from tests.guard.proxy.conftest import FakeUpstream, Served, ask, openai_client


def _ptrue_calls(fake: FakeUpstream) -> list[dict[str, Any]]:
    return [r["body"] for r in fake.requests[fake.test_start:]
            if r["body"].get("messages", [{}])[0].get("content") == PTRUE_INSTRUCTION]


def test_ptrue_is_asked_once_per_reply(start_proxy: Callable[..., Served],
                                       fake: FakeUpstream) -> None:
    served = start_proxy(confidence="ptrue")
    client = openai_client(served)
    reply = client.chat.completions.with_raw_response.create(**ask("What is 6 * 7?"))
    calls = _ptrue_calls(fake)
    assert len(calls) == 1
    body = calls[0]
    assert body["max_tokens"] == 1 and body["top_logprobs"] == 20
    assert "Proposed answer: The answer is 42." in body["messages"][1]["content"]
    assert reply.headers["x-utilityguard-decision"] == "answer"


def test_a_verdict_without_true_or_false_is_no_signal(start_proxy: Callable[..., Served],
                                                      fake: FakeUpstream) -> None:
    served = start_proxy(confidence="ptrue")
    client = openai_client(served)
    client.chat.completions.create(**ask("no-verdict: what is 6 * 7?"))
    assert len(_ptrue_calls(fake)) == 1  # asked, and the reply was still decided


def test_a_model_refusal_is_not_asked_about(start_proxy: Callable[..., Served],
                                            fake: FakeUpstream) -> None:
    served = start_proxy(confidence="ptrue")
    openai_client(served).chat.completions.create(**ask("self-refuse please"))
    assert _ptrue_calls(fake) == []


def test_without_policy_serve_decides_with_the_default(start_proxy: Callable[..., Served],
                                                       fake: FakeUpstream) -> None:
    default = load_shipped_default()
    served = start_proxy(policy=None)
    reply = openai_client(served).chat.completions.with_raw_response.create(
        **ask("What is 6 * 7?"))
    assert reply.headers["x-utilityguard-policy"] == default.label
    bare = start_proxy(policy="none")
    reply = openai_client(bare).chat.completions.with_raw_response.create(
        **ask("What is 6 * 7?"))
    assert "x-utilityguard-policy" not in reply.headers


@pytest.mark.parametrize("kind", ["caller", "consistency"])
def test_the_default_needs_its_signal(start_proxy: Callable[..., Served], fake: FakeUpstream,
                                      kind: str) -> None:
    """A proxy that reads neither the stated confidence nor logprobs gets no default
    calibrator: the bare rule."""
    served = start_proxy(policy=None, confidence=kind)
    reply = openai_client(served).chat.completions.with_raw_response.create(
        **ask("What is 6 * 7?"))
    assert "x-utilityguard-policy" not in reply.headers


def test_a_proxy_reading_the_stated_confidence_keeps_the_default(
        start_proxy: Callable[..., Served], fake: FakeUpstream) -> None:
    """The default policy reads the verbal signal too (issue 35): ``--confidence verbal``
    decides with it."""
    served = start_proxy(policy=None, confidence="verbal")
    reply = openai_client(served).chat.completions.with_raw_response.create(
        **ask("What is 6 * 7?"))
    assert reply.headers["x-utilityguard-policy"] == load_shipped_default().label


def test_the_guard_reads_the_ptrue_the_proxy_put_in_its_view() -> None:
    from guard.confidence.ptrue import PTRUE_KEY, PTrueExtractor
    from guard.core import Guard

    g = Guard(policy=None, extractors=[PTrueExtractor()], signal="ptrue")
    view = {"choices": [{"message": {"role": "assistant", "content": "42"}}], PTRUE_KEY: 0.3}
    # L = 4, C_R = 2: answer iff p >= 0.4
    _, record = g.apply("q", view, cost=4.0)
    assert (record.signal, record.p, record.decision) == ("ptrue", 0.3, "refuse")
