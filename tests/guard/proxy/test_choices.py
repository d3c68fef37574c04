"""``n > 1``: every choice the client receives was judged. Choice 0 decides the request
(its record, headers and body object); each further choice is decided on by itself and, when
the guard refuses it, replaced by an allow-listed refusal. The hostile upstream (``mixed``):
choice 0 is confident, the others unsure, and they say and reason :data:`MIXED_LEAK`."""

from __future__ import annotations

from typing import Any

import httpx
import openai

from guard.refusal_detection import DEFAULT_REFUSAL_TEXT
from tests.guard.proxy.conftest import ANSWER, CLIENT_KEY, MIXED_LEAK, Served, ask


def test_unsure_choices_are_refused_when_choice_0_answers(proxy: Served) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", json=ask("a mixed question", n=3),
                   headers={"authorization": f"Bearer {CLIENT_KEY}"}, timeout=10.0)
    assert r.status_code == 200
    assert MIXED_LEAK not in r.text and "400 mg" not in r.text  # nothing of them
    body = r.json()
    assert body["utilityguard"]["decision"] == "answer"
    assert r.headers["x-utilityguard-refused-choices"] == "1,2"
    choices = body["choices"]
    assert [c["message"]["content"] for c in choices] == [ANSWER] + [DEFAULT_REFUSAL_TEXT] * 2
    assert [c["index"] for c in choices] == [0, 1, 2]
    for c in choices[1:]:
        assert c == {"index": c["index"], "message": {"role": "assistant",
                                                      "content": DEFAULT_REFUSAL_TEXT},
                     "logprobs": None, "finish_reason": "stop"}


def test_unsure_choices_are_refused_in_a_stream(client: openai.OpenAI) -> None:
    texts: dict[int, str] = {}
    for chunk in client.chat.completions.create(**ask("a mixed question", n=3, stream=True)):
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + (c.delta.content or "")
    assert texts == {0: ANSWER, 1: DEFAULT_REFUSAL_TEXT, 2: DEFAULT_REFUSAL_TEXT}


def test_choices_that_pass_are_delivered(proxy: Served) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", json=ask("a sure question", n=3),
                   headers={"authorization": f"Bearer {CLIENT_KEY}"}, timeout=10.0)
    assert [c["message"]["content"] for c in r.json()["choices"]] == [ANSWER] * 3
    assert "x-utilityguard-refused-choices" not in r.headers


def test_shadow_mode_delivers_every_choice(overriding_client: openai.OpenAI) -> None:
    reply: Any = overriding_client.chat.completions.create(
        **ask("a mixed question", n=3), extra_headers={"x-utilityguard-mode": "shadow"})
    assert reply.choices[0].message.content == ANSWER
    assert all(MIXED_LEAK in c.message.content for c in reply.choices[1:])
