"""One pricing rule: the decorator and the proxy price the same chat the same — every text of
it, the maximum over its question segments (guard.segments)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import openai
from numpy.typing import NDArray

from guard import DecisionRecord, Guard, guarded

PARTS = [{"type": "text", "text": "What is the maximum"},
         {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
         {"type": "text", "text": "daily dose?"}]
MESSAGES = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "an earlier question"},
            {"role": "assistant", "content": "an earlier answer"},
            {"role": "user", "content": PARTS}]
#: The costliest segment under TextCost (it counts line breaks): the last message's two text
#: parts joined by a newline — every text of the chat is priced, this one costs most.
EXPECTED_QUERY = "What is the maximum\ndaily dose?"


class TextCost:
    """A cost that depends on every character of the query (a space and a newline differ)."""

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.array([1.0 + len(t) / 10 + 7.0 * t.count("\n") for t in texts])


def test_decorator_and_proxy_price_the_same_query(start_proxy: Callable[..., Any],
                                                  make_client: Callable[..., openai.OpenAI]
                                                  ) -> None:
    expected = float(TextCost().predict([EXPECTED_QUERY])[0])
    seen: list[DecisionRecord] = []

    @guarded(Guard(TextCost(), detector=None), on_decision=seen.append)
    def ask(messages: list[dict[str, Any]]) -> tuple[str, float]:
        return "It is 4 g.", 0.99

    ask(messages=MESSAGES)
    assert seen[0].cost == expected

    served = start_proxy(cost_model=TextCost())
    raw = make_client(served).chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES)  # type: ignore[arg-type]
    assert raw.headers["x-utilityguard-cost"] == f"{expected:.6g}"
