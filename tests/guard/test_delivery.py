"""One way to decide about a completion and deliver it (:mod:`guard.delivery`):
``Guard.apply`` (the decorator, the integrations) and the proxy deliver the same choices for
the same reply, every choice cleaned the same way."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import numpy as np
import pytest
from starlette.testclient import TestClient

from guard.proxy import create_app
from guard.proxy.build import build_guard
from guard.settings import Settings

QUESTION = "Capital of France?"


def choice(i: int, text: str, logprob: float) -> dict[str, Any]:
    return {"index": i, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text},
            "logprobs": {"content": [{"token": w, "logprob": logprob, "bytes": None,
                                      "top_logprobs": []} for w in text.split()]}}


#: The issue's two-choice reply: before, Guard.apply cleaned choice 0 only and delivered
#: ['Paris.', 'Paris!\nConfidence: 80%'].
TWO = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
       "choices": [choice(0, "Paris.\nConfidence: 90%", -0.01),
                   choice(1, "Paris!\nConfidence: 80%", -0.02)]}
#: Choice 1 unsure and leaking: refused by itself while choice 0 answers.
MIXED = {**TWO, "choices": [choice(0, "Paris.\nConfidence: 90%", -0.01),
                            choice(1, "Take 4123 mg\nConfidence: 10%", -3.0)]}


class FixedCost:
    def predict(self, texts: list[str]) -> Any:
        return np.full(len(texts), 4.0)  # C_R 2: threshold 0.4


def settings() -> Settings:
    return Settings(_env_file=None, upstream="http://upstream.test/v1", policy="none",
                    request_detector="none", confidence="logprobs+verbal")


def proxy_choices(reply: dict[str, Any], **body: Any) -> list[dict[str, Any]]:
    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=reply)

    app = create_app(settings(), httpx.MockTransport(upstream), cost_model=FixedCost())
    with TestClient(app) as client:
        r = client.post("/v1/chat/completions", json={
            "model": "m", "n": 2, "logprobs": True,
            "messages": [{"role": "user", "content": QUESTION}], **body})
    assert r.status_code == 200, r.text
    out: list[dict[str, Any]] = r.json()["choices"]
    return out


def apply_choices(reply: dict[str, Any]) -> list[dict[str, Any]]:
    given = copy.deepcopy(reply)
    out, record = build_guard(settings(), FixedCost()).apply(QUESTION, given)
    assert given == reply  # the input is not modified
    assert record.decision == "answer"
    choices: list[dict[str, Any]] = out["choices"]
    return choices


@pytest.mark.parametrize("reply", [pytest.param(TWO, id="two-answers"),
                                   pytest.param(MIXED, id="one-refused")])
def test_apply_and_the_proxy_deliver_the_same_choices(reply: dict[str, Any]) -> None:
    assert apply_choices(reply) == proxy_choices(reply)


def test_every_choice_is_cleaned() -> None:
    assert [c["message"]["content"] for c in apply_choices(TWO)] == ["Paris.", "Paris!"]
    assert [c["message"]["content"] for c in apply_choices(MIXED)] == \
        ["Paris.", "I cannot answer."]


def test_a_stream_delivers_the_same_text() -> None:
    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=TWO)  # an upstream that ignores stream: true

    app = create_app(settings(), httpx.MockTransport(upstream), cost_model=FixedCost())
    with TestClient(app) as client:
        r = client.post("/v1/chat/completions", json={
            "model": "m", "n": 2, "stream": True,
            "messages": [{"role": "user", "content": QUESTION}]})
    from guard.proxy.streaming import assemble, parse_sse

    streamed = assemble(parse_sse(r.content))["choices"]
    assert [c["message"]["content"] for c in streamed] == \
        [c["message"]["content"] for c in apply_choices(TWO)]
