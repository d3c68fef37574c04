"""Streaming chat completions: buffered upstream SSE, re-emitted as valid chunks + [DONE]."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest

ANSWER = "The answer is 42."
REFUSAL = "I cannot answer."


def sse_events(raw: str) -> list[str]:
    """The data payloads of an SSE body, in order."""
    blocks = [b for b in raw.split("\n\n") if b.strip()]
    assert all(b.startswith("data: ") for b in blocks), raw
    return [b.removeprefix("data: ") for b in blocks]


@pytest.mark.parametrize("question, decision, text", [
    pytest.param("sure", "answer", ANSWER, id="answer"),
    pytest.param("dose unsure", "refuse", REFUSAL, id="refuse"),
    pytest.param("self-refuse", "passthrough_refusal", "I cannot answer that question.",
                 id="passthrough"),
])
def test_stream_sync_client(client: openai.OpenAI, chat: Any, fake: Any, question: str,
                            decision: str, text: str) -> None:
    raw = client.chat.completions.with_raw_response.create(**chat(question, stream=True))
    assert raw.headers["x-utilityguard-decision"] == decision
    assert raw.headers["content-type"].startswith("text/event-stream")
    chunks = list(raw.parse())
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert all(c.choices[0].logprobs is None for c in chunks)  # not asked for
    sent = fake.last_sent()["body"]
    assert sent["stream"] is True and "stream_options" not in sent and sent["logprobs"] is True


def test_stream_async_client(async_client: openai.AsyncOpenAI, chat: Any) -> None:
    async def collect(question: str) -> tuple[str, str]:
        raw = await async_client.chat.completions.with_raw_response.create(
            **chat(question, stream=True))
        text = "".join([c.choices[0].delta.content or "" async for c in raw.parse()
                        if c.choices])
        return raw.headers["x-utilityguard-decision"], text

    async def main() -> list[tuple[str, str]]:
        async with async_client:
            return list(await asyncio.gather(collect("sure"), collect("dose unsure")))

    assert asyncio.run(asyncio.wait_for(main(), 20)) == [("answer", ANSWER),
                                                        ("refuse", REFUSAL)]


@pytest.mark.parametrize("question", [pytest.param("sure", id="replayed"),
                                      pytest.param("dose unsure", id="synthesized")])
def test_raw_sse_ends_with_done(proxy: Any, chat: Any, question: str) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", json=chat(question, stream=True),
                   timeout=10)
    assert r.status_code == 200
    assert r.text.endswith("data: [DONE]\n\n")
    events = sse_events(r.text)
    assert events[-1] == "[DONE]" and events.count("[DONE]") == 1
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["id"] for c in chunks} == {"chatcmpl-fake"}
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)


def test_stream_logprobs_kept_when_asked(client: openai.OpenAI, chat: Any) -> None:
    chunks = list(client.chat.completions.create(**chat("sure", stream=True, logprobs=True)))
    tokens = [t.token for c in chunks if c.choices and c.choices[0].logprobs
              for t in c.choices[0].logprobs.content]
    assert tokens == ANSWER.split(" ")


@pytest.mark.parametrize("question", [pytest.param("sure", id="replayed"),
                                      pytest.param("dose unsure", id="synthesized")])
def test_stream_usage_when_asked(client: openai.OpenAI, chat: Any, fake: Any,
                                 question: str) -> None:
    chunks = list(client.chat.completions.create(
        **chat(question, stream=True, stream_options={"include_usage": True})))
    assert fake.last_sent()["body"]["stream_options"] == {"include_usage": True}
    usage = chunks[-1].usage
    assert chunks[-1].choices == [] and usage.prompt_tokens == 5
    # a refused stream counts none of the refused answer's tokens (issue 38)
    refused = question == "dose unsure"
    assert (usage.completion_tokens, usage.total_tokens) == ((0, 5) if refused else (5, 10))


def test_stream_n_choices(client: openai.OpenAI, chat: Any) -> None:
    chunks = list(client.chat.completions.create(**chat("dose unsure", stream=True, n=2)))
    texts: dict[int, str] = {}
    for c in chunks:
        for ch in c.choices:
            texts[ch.index] = texts.get(ch.index, "") + (ch.delta.content or "")
    assert texts == {0: REFUSAL, 1: REFUSAL}


def test_stream_tool_call(client: openai.OpenAI, chat: Any) -> None:
    chunks = list(client.chat.completions.create(**chat("tool sure", stream=True)))
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert calls[0].function.name == "lookup"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_stream_errors_before_body(client: openai.OpenAI, chat: Any) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(**chat("status-503", stream=True))
    assert info.value.status_code == 502
