"""A refused reply carries nothing of the answer through the proxy: plain and streaming,
``n > 1``, tool calls, reasoning, audio, logprobs, extra fields (a hostile upstream hides the
answer in every field; the raw bytes the client receives are searched for its tokens)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import openai
import pytest

from tests.guard.conftest import without_request_ids

REFUSAL = "I cannot answer."


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": question}], **kwargs}


@pytest.fixture
def leak_client(start_proxy: Callable[..., Any], hostile_upstream: Any,
                make_client: Callable[..., openai.OpenAI]) -> openai.OpenAI:
    return make_client(start_proxy(hostile_upstream[1].url))


def _body(raw: Any) -> bytes:
    """The raw bytes the client received (a stream is read to its end)."""
    return bytes(raw.http_response.read())


def _sse_events(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines()
            if line.startswith("data: {")]


@pytest.mark.parametrize("n", [1, 3])
def test_plain_refusal_leaks_nothing(leak_client: openai.OpenAI, hostile: Any, n: int) -> None:
    raw = leak_client.chat.completions.with_raw_response.create(**ask("leak dose", n=n))
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert hostile.leaked(_body(raw)) == []
    completion = raw.parse()
    assert [(c.index, c.message.content, c.message.tool_calls, c.finish_reason, c.logprobs)
            for c in completion.choices] == [(i, REFUSAL, None, "stop", None) for i in range(n)]
    # the prompt's tokens, none of the refused answer's (issue 38: its length leaked)
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens,
            completion.usage.total_tokens) == (9, 0, 9)


@pytest.mark.parametrize("n", [1, 3])
def test_stream_refusal_leaks_nothing(leak_client: openai.OpenAI, hostile: Any, n: int) -> None:
    raw = leak_client.chat.completions.with_raw_response.create(
        **ask("leak dose", n=n, stream=True, stream_options={"include_usage": True}))
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    body = _body(raw)
    assert body.endswith(b"data: [DONE]\n\n")
    assert hostile.leaked(body) == []
    texts: dict[int, str] = {}
    finishes: dict[int, str] = {}
    for event in _sse_events(body):
        for ch in event["choices"]:
            texts[ch["index"]] = texts.get(ch["index"], "") + (ch["delta"].get("content") or "")
            assert set(ch["delta"]) <= {"role", "content"}
            if ch["finish_reason"]:
                finishes[ch["index"]] = ch["finish_reason"]
    assert texts == dict.fromkeys(range(n), REFUSAL)
    assert finishes == dict.fromkeys(range(n), "stop")


def test_the_upstream_really_sends_the_answer(leak_client: openai.OpenAI, hostile: Any) -> None:
    """Control: a confident answer is delivered, tool call included (so the searches above
    can find what they look for)."""
    raw = leak_client.chat.completions.with_raw_response.create(**ask("leak sure dose"))
    assert raw.headers["x-utilityguard-decision"] == "answer"
    assert "4123" in hostile.leaked(_body(raw))
    call = raw.parse().choices[0].message.tool_calls[0]
    assert call.function.name == "prescribe"


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_is_decided_on_its_arguments(leak_client: openai.OpenAI, stream: bool) -> None:
    """content + tool_calls is an answer (never passthrough_refusal); unsure -> refused."""
    raw = leak_client.chat.completions.with_raw_response.create(
        **ask("leak dose", stream=stream))
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    body = without_request_ids(_body(raw).decode()).encode()
    assert b"tool_calls" not in body and b"prescribe" not in body and b"4123" not in body
