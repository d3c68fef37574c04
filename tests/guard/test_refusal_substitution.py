"""A refused reply carries nothing of the answer: the decorator, sync and async, on openai
``ChatCompletion`` objects and on dicts, with every field a provider can hide an answer in.

Each test serializes the refused object and searches it for every token of the answer.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from numpy.typing import NDArray
from openai.types.chat import ChatCompletion

from guard import DecisionRecord, Guard, guarded
from guard.refusal_substitution import refused_completion

if TYPE_CHECKING:
    from tests.guard.conftest import HostileAnswer

Q = "What is the maximum daily dose of zolpidem for an adult?"
REFUSAL = "I cannot answer."


class FixedCost:
    def __init__(self, cost: float) -> None:
        self.cost = cost

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.full(len(texts), self.cost)


def _call(kind: str, value: Any) -> Any:
    seen: list[DecisionRecord] = []
    guard = Guard(FixedCost(20.0), policy=None)
    if kind == "sync":
        def ask(question: str) -> Any:
            return value
        fn: Any = guarded(guard, on_decision=seen.append)(ask)
    else:
        async def ask_async(question: str) -> Any:
            await asyncio.sleep(0)
            return value
        fn = guarded(guard, on_decision=seen.append)(ask_async)
    out = fn(Q)
    if inspect.iscoroutine(out):
        out = asyncio.run(out)
    return out, seen[0]


def test_the_hostile_reply_spells_every_token(hostile: HostileAnswer) -> None:
    """The fixture is a real check: each token is present before the refusal."""
    for build in (lambda r: r, ChatCompletion.model_validate):
        assert sorted(hostile.leaked(build(hostile.reply()))) == sorted(hostile.TOKENS)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("shape", ["dict", "ChatCompletion"])
@pytest.mark.parametrize("n", [1, 3])
def test_decorator_refusal_leaks_nothing(kind: str, shape: str, n: int,
                                        hostile: HostileAnswer) -> None:
    raw = hostile.reply(n=n)
    reply: Any = raw if shape == "dict" else ChatCompletion.model_validate(raw)
    before = copy.deepcopy(raw) if shape == "dict" else reply.model_dump_json()
    out, record = _call(kind, reply)
    assert record.decision == "refuse"
    assert hostile.leaked(out) == []
    assert type(out) is type(reply)
    data = out if shape == "dict" else out.model_dump(exclude_none=True)
    assert [c["message"] for c in data["choices"]] == [
        {"role": "assistant", "content": REFUSAL}] * n
    assert [c["finish_reason"] for c in data["choices"]] == ["stop"] * n
    assert [c["index"] for c in data["choices"]] == list(range(n))
    # the envelope stays (a client can still match ids, count its prompt's tokens); the
    # completion's count would tell the refused answer's length (issue 38): 0
    assert (data["id"], data["model"], data["created"]) == ("chatcmpl-hostile", "m", 1700000000)
    assert (data["usage"]["prompt_tokens"], data["usage"]["completion_tokens"],
            data["usage"]["total_tokens"]) == (9, 0, 9)
    # the caller's object is untouched
    assert (raw if shape == "dict" else reply.model_dump_json()) == before


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_tool_call_is_decided_not_passed_through(kind: str, hostile: HostileAnswer) -> None:
    """content null + tool_calls is an answer: confident -> delivered, unsure -> refused."""
    def tool_reply(logprob: float, name: str = "prescribe") -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "logprobs": hostile.logprobs("call", logprob),
                             "message": {"role": "assistant", "content": None, "tool_calls": [
                                 {"id": "t1", "type": "function", "function": {
                                     "name": name, "arguments": '{"mg": 4123}'}}]}}]}

    out, record = _call(kind, tool_reply(-0.001))
    assert record.decision == "answer"
    assert out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == \
        '{"mg": 4123}'
    for name in ("prescribe", "I cannot answer"):  # a refusal-looking name is still a call
        out, record = _call(kind, tool_reply(-3.0, name))
        assert record.decision == "refuse"
        assert "tool_calls" not in out["choices"][0]["message"]
        assert out["choices"][0]["finish_reason"] == "stop"
        assert "4123" not in json.dumps(out)


def test_own_refusal_with_reasoning_keeps_only_its_words(hostile: HostileAnswer) -> None:
    """The model's own refusal, where the guard would answer (p = 0.999 against a threshold
    of 0.86), is delivered in its words, but nothing else of the reply."""
    raw = hostile.reply(logprob=-0.001, n=2)
    raw["choices"][0]["message"].update(content="I'm sorry, I can't help with that.",
                                        tool_calls=None, function_call=None)
    out, record = _call("sync", raw)
    assert record.decision == "passthrough_refusal"
    assert out["choices"][0]["message"] == {"role": "assistant",
                                            "content": "I'm sorry, I can't help with that."}
    assert hostile.leaked(out) == []


def test_shadow_mode_delivers_the_reply_unchanged(hostile: HostileAnswer) -> None:
    raw = hostile.reply()
    out, record = Guard(FixedCost(20.0), mode="shadow", policy=None).apply(Q, raw)
    assert record.decision == "refuse" and out is raw


def test_refused_chunk_uses_delta() -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "4123", "reasoning_content": "x"},
                          "logprobs": None, "finish_reason": None}]}
    assert refused_completion(chunk, REFUSAL)["choices"] == [
        {"index": 0, "delta": {"role": "assistant", "content": REFUSAL}, "logprobs": None,
         "finish_reason": "stop"}]


def test_a_refusals_usage_tells_nothing_of_the_refused_answer() -> None:
    # issue 38: a refusal kept usage.completion_tokens, the length of the refused answer
    from guard.refusal_substitution import refused_usage

    usage = {"prompt_tokens": 12, "completion_tokens": 250, "total_tokens": 262,
             "prompt_tokens_details": {"cached_tokens": 4, "note": "x"},
             "completion_tokens_details": {"reasoning_tokens": 200}, "queue_time": 0.3,
             "answer_chars": 900}
    assert refused_usage(usage) == {"prompt_tokens": 12, "completion_tokens": 0,
                                    "total_tokens": 12,
                                    "prompt_tokens_details": {"cached_tokens": 4}}
    assert refused_usage({"input_tokens": 3, "output_tokens": 9, "total_tokens": 12,
                          "output_tokens_details": {"reasoning_tokens": 5}}) == {
        "input_tokens": 3, "output_tokens": 0, "total_tokens": 3}
    assert refused_usage(None) is None and refused_usage({}) == {}
