"""``Guard.apply`` (and so ``@guarded``) with ``n > 1``: when choice 0 answers, every further
choice is judged by itself; one the guard refuses is replaced by an allow-listed refused
choice, in a plain dict and in the official client's ``ChatCompletion`` alike."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from guard import Guard, last_decision
from guard.confidence.extractors import LogprobExtractor
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT
from tests.guard.conftest import FixedCost

LEAK = "take 4123 milligrams"


def _choice(i: int, text: str, logprob: float, **message: Any) -> dict[str, Any]:
    return {"index": i, "finish_reason": "stop",
            "logprobs": {"content": [{"token": w, "logprob": logprob, "bytes": None,
                                      "top_logprobs": []} for w in text.split()]},
            "message": {"role": "assistant", "content": text, **message}}


def mixed() -> dict[str, Any]:
    """Choice 0 sure (p = 0.99), choices 1 and 2 unsure (p = 0.05) and leaking."""
    return {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [_choice(0, "Paris", -0.01),
                        _choice(1, LEAK, -3.0, reasoning_content=LEAK),
                        _choice(2, LEAK + " daily", -3.0)]}


def guard(mode: str = "enforce") -> Guard:
    # L = 4, C_R = 2: threshold 0.4
    return Guard(FixedCost(4.0), c_r=2.0, mode=mode, extractors=[LogprobExtractor()], policy=None)


@pytest.mark.parametrize("kind", ["dict", "ChatCompletion"])
def test_unsure_choices_are_refused_when_choice_0_answers(kind: str) -> None:
    reply: Any = mixed() if kind == "dict" else ChatCompletion.model_validate(mixed())
    out, record = guard().apply("Capital of France?", reply)
    assert record.decision == "answer" and record.p == pytest.approx(math.exp(-0.01))
    assert last_decision() == record  # choice 0's decision, not a later choice's
    assert type(out) is type(reply)
    data = out if isinstance(out, dict) else out.model_dump()
    assert LEAK not in json.dumps(data) and "4123" not in json.dumps(data)
    assert [c["message"]["content"] for c in data["choices"]] == \
        ["Paris", DEFAULT_REFUSAL_TEXT, DEFAULT_REFUSAL_TEXT]
    assert data["choices"][1]["logprobs"] is None
    assert reply == (mixed() if kind == "dict" else ChatCompletion.model_validate(mixed()))


def test_choices_that_pass_are_kept() -> None:
    reply = mixed()
    for ch in reply["choices"]:
        for t in ch["logprobs"]["content"]:
            t["logprob"] = -0.01
    out, _ = guard().apply("Capital of France?", reply)
    assert out == reply


def test_shadow_mode_keeps_every_choice() -> None:
    out, record = guard("shadow").apply("Capital of France?", mixed())
    assert record.mode == "shadow" and out == mixed()


@pytest.mark.parametrize(("n", "limit"), [(1, None), (3, 1), (0, None)])
def test_one_choice_delivered_has_nothing_more_to_judge(n: int, limit: int | None) -> None:
    """One choice delivered (or none): no further choice is refused, and the decision
    remembered is still choice 0's, even after another decision was made in between."""
    g = guard()
    reply = mixed()
    reply["choices"] = reply["choices"][:n]
    _, record = g.apply("Capital of France?", mixed())
    g.decide("Other?", "I cannot answer.", confidence=0.5)  # another decision, remembered
    assert last_decision() != record
    assert g.refused_choices("Capital of France?", reply, record, limit=limit) == {}
    assert last_decision() == record
