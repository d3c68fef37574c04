"""Shared fakes for the guard tests: cost models that need no trained artifact."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from guard import Guard

# importing litellm fetches its model-cost map from the internet unless told to use the copy
# it ships: tests talk to 127.0.0.1 only
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class FixedCost:
    """A cost model that predicts the same ``E[L]`` for every query and counts its calls."""

    def __init__(self, cost: float) -> None:
        self.cost = cost
        self.calls = 0

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        self.calls += 1
        return np.full(len(texts), self.cost, dtype=np.float64)


class KeywordCost:
    """High cost for medical-sounding queries, low otherwise (a stand-in for the real model)."""

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.array(
            [20.0 if any(w in t.lower() for w in ("dose", "mg", "drug")) else 0.5 for t in texts]
        )


@pytest.fixture(scope="module")
def shipped_guard() -> Guard:
    """The guard as a user gets it: the shipped detector and cost model (one per module)."""
    return Guard()


def data_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL file of test data."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def fixed_cost() -> Callable[[float], FixedCost]:
    return FixedCost


@pytest.fixture
def guard_with_cost() -> Callable[..., Guard]:
    def make(cost: float = 8.0, **kwargs: Any) -> Guard:
        return Guard(FixedCost(cost), **{"policy": None, **kwargs})  # the bare rule

    return make


@pytest.fixture
def keyword_cost() -> KeywordCost:
    return KeywordCost()


class HostileAnswer:
    """An answer that spells itself in every field a provider may send (content, logprobs,
    tool calls, a legacy function call, reasoning, audio, annotations, the ``refusal`` field,
    extra fields, other samples, usage), and the search for its tokens in a serialized
    object. Shared by the decorator's and the proxy's leak tests."""

    #: Every token of the answer; none may appear in a refused reply.
    TOKENS = ("4123", "milligrams", "prescribe", "zolpidemdose", "thinkingsecret",
              "reasonsecret", "audiosecret", "transcriptsecret", "extrasecret",
              "choiceextra", "samplesecret", "annotationsecret", "legacysecret",
              "usagesecret", "refusalfieldsecret")

    @staticmethod
    def logprobs(text: str, value: float) -> dict[str, Any]:
        return {"content": [{"token": t, "logprob": value, "bytes": list(t.encode()),
                             "top_logprobs": [{"token": t, "logprob": value, "bytes": None}]}
                            for t in text.split()], "refusal": None}

    def reply(self, *, logprob: float = -3.0, n: int = 2) -> dict[str, Any]:
        """The completion: choice 0 carries everything; choices 1.. are other samples."""
        first = "4123 milligrams"
        choice0 = {
            "index": 0, "finish_reason": "tool_calls",
            "logprobs": self.logprobs(first, logprob), "choice_extra": "choiceextra",
            "message": {
                "role": "assistant", "content": first, "refusal": "refusalfieldsecret",
                "reasoning_content": "thinkingsecret 4123", "reasoning": "reasonsecret",
                "audio": {"id": "audiosecret", "data": "audiosecret", "expires_at": 1,
                          "transcript": "transcriptsecret 4123 milligrams"},
                "annotations": [{"type": "url_citation", "url_citation": {
                    "url": "https://x/annotationsecret", "title": "annotationsecret",
                    "start_index": 0, "end_index": 1}}],
                "tool_calls": [{"id": "call_prescribe", "type": "function", "function": {
                    "name": "prescribe",
                    "arguments": '{"drug": "zolpidemdose", "mg": 4123}'}}],
                "function_call": {"name": "legacysecret", "arguments": "{\"mg\": 4123}"},
                "x_extra": "extrasecret",
            },
        }
        samples = [{"index": i, "finish_reason": "stop",
                    "logprobs": self.logprobs("samplesecret", -0.1),
                    "message": {"role": "assistant",
                                "content": f"samplesecret {i} milligrams"}}
                   for i in range(1, n)]
        return {"id": "chatcmpl-hostile", "object": "chat.completion", "created": 1700000000,
                "model": "m", "system_fingerprint": "fp_1", "choices": [choice0, *samples],
                "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21,
                          "note": "usagesecret",
                          "completion_tokens_details": {"reasoning_tokens": 4}},
                "x_top_extra": "extrasecret"}

    def chunks(self, *, logprob: float = -3.0, n: int = 2) -> list[dict[str, Any]]:
        """The same answer as a stream: every field arrives in a delta."""
        whole = self.reply(logprob=logprob, n=n)
        head = {k: whole[k] for k in ("id", "created", "model", "system_fingerprint")}
        out: list[dict[str, Any]] = []

        def chunk(i: int, delta: dict[str, Any], lp: Any = None, finish: Any = None,
                  **extra: Any) -> None:
            out.append({**head, "object": "chat.completion.chunk", "x_top_extra": "extrasecret",
                        "choices": [{"index": i, "delta": delta, "logprobs": lp,
                                     "finish_reason": finish, **extra}]})

        for ch in whole["choices"]:
            i, msg = ch["index"], ch["message"]
            chunk(i, {"role": "assistant", "content": ""})
            for key in ("reasoning_content", "reasoning", "refusal", "x_extra"):
                if key in msg:
                    chunk(i, {key: msg[key]})
            if "audio" in msg:
                chunk(i, {"audio": msg["audio"]})
            if "tool_calls" in msg:
                chunk(i, {"tool_calls": [{"index": 0, **msg["tool_calls"][0]}]})
            if "function_call" in msg:
                chunk(i, {"function_call": msg["function_call"]})
            chunk(i, {"content": msg["content"]}, ch["logprobs"], choice_extra="choiceextra")
            chunk(i, {}, finish=ch["finish_reason"])
        out.append({**head, "object": "chat.completion.chunk", "choices": [],
                    "usage": whole["usage"]})
        return out

    def leaked(self, obj: Any) -> list[str]:
        """The answer's tokens found anywhere in the serialized ``obj`` (an object with
        ``model_dump_json``, bytes/str, or JSON data)."""
        if hasattr(obj, "model_dump_json"):
            text = obj.model_dump_json()
        elif isinstance(obj, bytes):
            text = obj.decode("utf-8", errors="replace")
        elif isinstance(obj, str):
            text = obj
        else:
            text = json.dumps(obj)
        text = without_request_ids(text)
        return [t for t in self.TOKENS if t in text.lower()]


#: The guard's own request ids (uuid4 hex): random digits that can spell an answer's number.
REQUEST_ID = re.compile(r"\b[0-9a-f]{32}\b")


def without_request_ids(text: str) -> str:
    """``text`` without the guard's request ids: a leak check must not fail because a random
    id happens to contain the answer's digits ("e4123b0d...")."""
    return REQUEST_ID.sub("", text)


@pytest.fixture(scope="session")
def hostile() -> HostileAnswer:
    """The answer that hides itself everywhere (see :class:`HostileAnswer`)."""
    return HostileAnswer()


ROOT = Path(__file__).parents[2]


def readme_blocks(heading: str, lang: str, page: str = "README.md") -> list[str]:
    """The fenced ``lang`` code blocks of the section of ``page`` (README.md or a docs page,
    relative to the repository) that starts with ``heading``."""
    text = (ROOT / page).read_text()
    start = text.index(heading)
    following = re.search(r"\n#{2,3} ", text[start + len(heading):])
    section = text[start:start + len(heading) + following.start() if following else None]
    blocks = section.split(f"```{lang}\n")[1:]
    return [b.split("```", 1)[0] for b in blocks]


@pytest.fixture(scope="session")
def readme() -> Any:
    """``readme(heading, lang, page="README.md")``: the code blocks of a section of the README
    or a docs page, as the user reads them."""
    return readme_blocks
