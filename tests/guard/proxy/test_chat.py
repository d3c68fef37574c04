"""Non-streaming chat completions through the proxy, driven by the official openai client.

Fake costs and confidences (see conftest): with C_R = 2, ``sure`` (p = 0.99) at L = 4
(threshold 0.4) is answered; ``dose unsure`` (p = 0.135) at L = 20 (threshold 0.857) refused.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import openai
import pytest

ANSWER = "The answer is 42."
REFUSAL = "I cannot answer."


@pytest.mark.parametrize("logprobs", [pytest.param(False, id="no-logprobs"),
                                      pytest.param(True, id="client-logprobs")])
def test_answer_passes_through_unchanged(client: openai.OpenAI, chat: Any, fake: Any,
                                         logprobs: bool) -> None:
    extra = {"logprobs": True} if logprobs else {}
    raw = client.chat.completions.with_raw_response.create(**chat("What is 6 x 7? sure",
                                                                  **extra))
    completion = raw.parse()
    assert raw.headers["x-utilityguard-decision"] == "answer"
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].finish_reason == "stop"
    assert completion.id == "chatcmpl-fake" and completion.usage is not None
    sent = fake.last_sent()["body"]
    assert sent["logprobs"] is True  # the guard asked for them, or the client did
    # a client asking for logprobs itself gets its request sent as it is (no top_logprobs)
    assert sent.get("top_logprobs") == (None if logprobs else 1)
    if logprobs:
        tokens = completion.choices[0].logprobs.content
        assert [t.token for t in tokens] == ANSWER.split(" ")
    else:
        assert completion.choices[0].logprobs is None


def test_refused_reply_carries_refusal_and_headers(client: openai.OpenAI, chat: Any) -> None:
    raw = client.chat.completions.with_raw_response.create(
        **chat("What dose of acetaminophen is safe? unsure", logprobs=True))
    completion = raw.parse()
    choice = completion.choices[0]
    assert choice.message.content == REFUSAL
    assert choice.logprobs is None  # the refused answer's tokens must not leak
    assert choice.finish_reason == "stop"
    h = raw.headers
    assert h["x-utilityguard-decision"] == "refuse"
    assert (h["x-utilityguard-cost"], h["x-utilityguard-threshold"]) == ("20", "0.857143")
    assert h["x-utilityguard-confidence"] == "0.135335"
    assert h["x-utilityguard-mode"] == "enforce"
    assert re.fullmatch(r"[0-9a-f]{32}", h["x-utilityguard-request-id"])


def test_model_refusal_passes_through(client: openai.OpenAI, chat: Any) -> None:
    """Where the guard would answer (L = 4, p = 0.99), the model's own words pass."""
    raw = client.chat.completions.with_raw_response.create(**chat("self-refuse sure"))
    assert raw.headers["x-utilityguard-decision"] == "passthrough_refusal"
    assert raw.parse().choices[0].message.content == "I cannot answer that question."


def test_model_refusal_below_threshold_is_the_guards(client: openai.OpenAI, chat: Any) -> None:
    """Below the threshold (L = 20, p = 0.135) the guard's refusal, not the model's words."""
    raw = client.chat.completions.with_raw_response.create(**chat("dose self-refuse unsure"))
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert raw.parse().choices[0].message.content == REFUSAL


def test_async_client_answer_and_refusal(async_client: openai.AsyncOpenAI, chat: Any) -> None:
    async def main() -> tuple[Any, Any]:
        async with async_client:
            return await asyncio.gather(
                async_client.chat.completions.with_raw_response.create(**chat("sure")),
                async_client.chat.completions.with_raw_response.create(**chat("dose unsure")))

    ok, refused = asyncio.run(asyncio.wait_for(main(), 20))
    assert ok.headers["x-utilityguard-decision"] == "answer"
    assert ok.parse().choices[0].message.content == ANSWER
    assert refused.headers["x-utilityguard-decision"] == "refuse"
    assert refused.parse().choices[0].message.content == REFUSAL


def test_unknown_fields_are_forwarded_untouched(client: openai.OpenAI, chat: Any,
                                                fake: Any) -> None:
    extra = {"repetition_penalty": 1.1, "custom": {"nested": [1, "two", None]}}
    client.chat.completions.create(**chat("sure", top_logprobs=3, logprobs=True, seed=7),
                                   extra_body=extra)
    sent = fake.last_sent()["body"]
    assert sent["repetition_penalty"] == 1.1 and sent["custom"] == extra["custom"]
    assert (sent["seed"], sent["top_logprobs"], sent["model"]) == (7, 3, "fake-model")
    assert sent["messages"] == [{"role": "user", "content": "sure"}]
    assert "n" not in sent and "stream" not in sent


def test_reply_fields_are_kept(proxy: Any, chat: Any) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", json=chat("sure"), timeout=10)
    body = r.json()
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert body["x_extra"] == "kept" and body["system_fingerprint"] == "fp_fake"
    assert body["choices"][0]["logprobs"] is None


@pytest.mark.parametrize("question, decision, text", [
    pytest.param("sure", "answer", ANSWER, id="answer"),
    pytest.param("dose unsure", "refuse", REFUSAL, id="refuse"),
])
def test_client_n_gets_every_choice(client: openai.OpenAI, chat: Any, question: str,
                                    decision: str, text: str) -> None:
    raw = client.chat.completions.with_raw_response.create(**chat(question, n=2))
    completion = raw.parse()
    assert raw.headers["x-utilityguard-decision"] == decision
    assert [c.message.content for c in completion.choices] == [text, text]


def test_list_content_and_system_messages(client: openai.OpenAI, fake: Any) -> None:
    messages: Any = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "What dose?"},
                                     {"type": "text", "text": "unsure"}]},
    ]
    raw = client.chat.completions.with_raw_response.create(model="m", messages=messages)
    assert raw.headers["x-utilityguard-cost"] == "20"  # priced on the text parts
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert fake.last_sent()["body"]["messages"] == messages


def test_tool_call_is_delivered(client: openai.OpenAI, chat: Any) -> None:
    completion = client.chat.completions.create(**chat("tool sure"))
    call = completion.choices[0].message.tool_calls[0]
    assert (call.function.name, call.function.arguments) == ("lookup", '{"q": "42"}')


def test_models_and_healthz(client: openai.OpenAI, proxy: Any) -> None:
    assert [m.id for m in client.models.list()] == ["fake-model"]
    assert client.models.retrieve("fake-model").id == "fake-model"
    with pytest.raises(openai.NotFoundError, match="no model other"):
        client.models.retrieve("other")
    r = httpx.get(proxy.url + "/healthz", timeout=10)
    assert (r.status_code, r.json()) == (200, {"status": "ok"})
