"""P(True): the extra call's request, reading the verdict's first token, the resumable sidecar."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.collect import CollectSettings, collect
from benchmarks.ptrue_collect import attach_ptrue, collect_ptrue, load_ptrue
from cost_models.datasets import DatasetItem
from guard.confidence.ptrue import PTRUE_INSTRUCTION, ptrue_from_top
from utilityguard_base.upstream import ChatClient

ITEMS = [DatasetItem(id=i, question=q, answerable=True, cost=2.0, reference=[r],
                     answer_type="number")
         for i, q, r in (("a", "What is 2 + 3?", "5"), ("b", "What is 10 - 4?", "6"))]


class Verdicts:
    """A fake upstream that answers the P(True) call with P(True) = 0.8 for a reply holding
    the right number and 0.1 otherwise, as chat or legacy-completion top logprobs."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        text = body.get("prompt") or body["messages"][-1]["content"]
        if "Proposed answer" not in text:  # the question itself (collect --confidence ptrue)
            return httpx.Response(200, json={"choices": [{"message": {
                "role": "assistant", "content": "5"}, "finish_reason": "stop"}]})
        right = "Proposed answer: 5" in text
        p = 0.8 if right else 0.1
        top = {" True": math.log(p * 0.9), " False": math.log((1 - p) * 0.9), " Maybe": -3.0}
        if "prompt" in body:
            lp: dict[str, Any] = {"tokens": [" True"], "top_logprobs": [top]}
            choice: dict[str, Any] = {"text": " True", "logprobs": lp}
        else:
            alts = [{"token": t, "logprob": v} for t, v in top.items()]
            lp = {"content": [{"token": "True", "logprob": alts[0]["logprob"],
                               "top_logprobs": alts}]}
            choice = {"message": {"role": "assistant", "content": "True"}, "logprobs": lp}
        return httpx.Response(200, json={"choices": [choice]})


def _run(records: list[dict[str, Any]], out: Path, up: Verdicts, style: str = "chat",
         skip: set[str] | None = None) -> int:
    async def go() -> int:
        client = ChatClient("http://fake/v1", transport=httpx.MockTransport(up), retries=1)
        try:
            return await collect_ptrue(ITEMS, records, out, client=client, model="m",
                                       style=style, skip=skip)
        finally:
            await client.aclose()
    return asyncio.run(go())


RECORDS = [{"id": "a", "response": "5"}, {"id": "b", "response": "It is 7."},
           {"id": "zzz", "response": "not an item"}]


@pytest.mark.parametrize("style", ["chat", "completion"])
def test_ptrue_is_the_true_share_of_the_first_token(tmp_path: Path, style: str) -> None:
    up = Verdicts()
    out = tmp_path / "ptrue.jsonl"
    assert _run(RECORDS, out, up, style) == 2  # the id that is not an item is not asked
    got = load_ptrue(out)
    assert got["a"] == pytest.approx(0.8) and got["b"] == pytest.approx(0.1)
    body = up.bodies[0]
    assert body["max_tokens"] == 1 and body["temperature"] == 0.0
    if style == "chat":
        assert body["messages"][0]["content"] == PTRUE_INSTRUCTION
        assert body["top_logprobs"] == 20 and body["logprobs"] is True
    else:
        assert body["prompt"].startswith(PTRUE_INSTRUCTION) and body["logprobs"] == 20


def test_rerun_skips_what_is_written(tmp_path: Path) -> None:
    up = Verdicts()
    out = tmp_path / "ptrue.jsonl"
    _run(RECORDS[:1], out, up)
    assert _run(RECORDS, out, up, skip={"a"}) == 1
    assert len(up.bodies) == 2 and len(out.read_text().splitlines()) == 2


def test_no_true_or_false_among_the_top_tokens_is_no_signal() -> None:
    assert ptrue_from_top({"Paris": -0.1, "The": -2.0}) is None
    assert ptrue_from_top({}) is None and ptrue_from_top(None) is None
    assert ptrue_from_top({"FALSE.": math.log(0.3), "yes": math.log(0.1)}) == pytest.approx(0.25)


def test_attach_leaves_missing_ids_null() -> None:
    recs = attach_ptrue([{"id": "a", "confidence": {"logprob_mean": -0.2}}, {"id": "c"}],
                        {"a": 0.7})
    assert recs[0]["confidence"] == {"logprob_mean": -0.2, "ptrue": 0.7}
    assert recs[1]["confidence"]["ptrue"] is None


def test_collect_with_ptrue_asks_once_more_per_item(tmp_path: Path) -> None:
    up = Verdicts()
    s = CollectSettings(upstream="http://fake/v1", model="m", confidence=("ptrue",))
    out = tmp_path / "r.jsonl"
    asyncio.run(collect(ITEMS, s, out, transport=httpx.MockTransport(up)))
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["confidence"]["ptrue"] for r in rows] == pytest.approx([0.8, 0.8])
    assert len(up.bodies) == 4
