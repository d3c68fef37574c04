"""The path the LiteLLM guardrail and the LangChain wrapper share
(:func:`guard.integrations.common.guarded_completion`): a reply that opens like a refusal
never overrides a refusal, and every message of the request is priced."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from guard import Guard
from guard.integrations.common import guarded_completion
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT
from guard.request_walk import walk

LEAK = "I cannot answer that. But here it is anyway: give her 8 grams."


class DoseCost:
    """L = 20 for a text that mentions a dose, else 0.5."""

    def predict(self, texts: Sequence[str]) -> Any:
        return np.array([20.0 if "dose" in t else 0.5 for t in texts])


def _completion(logprob: float) -> dict[str, Any]:
    tokens: list[dict[str, Any]] = [
        {"token": t, "logprob": logprob, "bytes": None, "top_logprobs": []}
        for t in LEAK.split(" ")]
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": LEAK},
                         "logprobs": {"content": tokens}, "finish_reason": "stop"}]}


def test_refusal_opening_with_low_confidence_is_refused() -> None:
    messages = [{"role": "system", "content": "What is the max dose of acetaminophen?"},
                {"role": "user", "content": "thanks"}]
    out, record = guarded_completion(Guard(DoseCost()), walk(messages),
                                     _completion(-2.0), keep_logprobs=False)
    assert record.cost == 20.0  # the system message was priced, not only "thanks"
    assert record.decision == "refuse"
    assert out["choices"][0]["message"]["content"] == DEFAULT_REFUSAL_TEXT


def test_refusal_opening_passes_where_the_guard_answers() -> None:
    out, record = guarded_completion(Guard(DoseCost()), ["What is the capital of France?"],
                                     _completion(-2.0), keep_logprobs=False)
    assert record.decision == "passthrough_refusal"
    assert out["choices"][0]["message"]["content"] == LEAK
