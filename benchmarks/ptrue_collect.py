"""P(True) for replies already collected: one extra call per record (``collect --ptrue-of``).

For each response record of a collected file, the model that wrote it is shown the question
and its own reply and asked whether the reply is correct (:mod:`guard.confidence.ptrue`);
P(True) is read from the first token's top log-probabilities. The output is a sidecar JSONL,
one row per record, append-only, flushed and fsynced per line and resumable like
``collect`` (:func:`benchmarks.resume.prepare_resume`); the records are asked in a seeded random
order, so a run stopped early leaves a uniform sample of them::

    {"id", "ptrue": float | null, "top": {token: logprob}, "model", "prompt_style",
     "latency_ms"}

:func:`attach_ptrue` puts the sidecar's values into response records' ``confidence.ptrue``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.resume import prepare_resume
from cost_models.datasets import DatasetItem
from guard.confidence.ptrue import ptrue_from_reply, ptrue_request
from guard.exceptions import CollectError, UpstreamError
from utilityguard_base.jsonl import append_jsonl, read_jsonl
from utilityguard_base.upstream import ChatClient

#: the seed of the order records are asked in (:func:`run_ptrue`)
ORDER_SEED = 21


async def ask_ptrue(client: ChatClient, model: str, question: str, answer: str, *,
                    style: str = "chat") -> tuple[float | None, dict[str, float] | None]:
    """One P(True) call: ``(P(True) or None, the first token's top log-probabilities)``."""
    body = {"model": model, **ptrue_request(question, answer, style=style)}
    path = "/completions" if style == "completion" else "/chat/completions"
    reply = await client.complete(body, path=path)
    return ptrue_from_reply(reply)


async def collect_ptrue(items: Sequence[DatasetItem], records: Sequence[Mapping[str, Any]],
                        out: Path, *, client: ChatClient, model: str, style: str = "chat",
                        skip: set[str] | None = None,
                        on_done: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Ask P(True) for every record whose id is an item and not in ``skip``; returns how many
    rows were written. One request at a time (a shared machine: one model server)."""
    by_id = {it.id: it for it in items}
    skip = skip or set()
    written = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        for rec in records:
            rid = str(rec.get("id"))
            item = by_id.get(rid)
            if item is None or rid in skip:
                continue
            t0 = time.perf_counter()
            try:
                p, top = await ask_ptrue(client, model, item.question,
                                         str(rec.get("response") or ""), style=style)
            except UpstreamError as exc:
                raise CollectError(f"P(True) for item {rid}: {exc}") from None
            row = {"id": rid, "ptrue": p, "top": top, "model": model, "prompt_style": style,
                   "latency_ms": round((time.perf_counter() - t0) * 1000.0, 1)}
            append_jsonl(f, row, durable=True)
            written += 1
            if on_done:
                on_done(row)
    return written


def run_ptrue(items: Sequence[DatasetItem], responses: Path, out: Path, *, upstream: str,
              model: str, style: str, api_key: str | None, timeout: float, retries: int,
              on_done: Callable[[dict[str, Any]], None] | None = None) -> int:
    """:func:`collect_ptrue` over the records of ``responses`` not yet in ``out``."""
    records = read_jsonl(responses)
    # a seeded random order: a run stopped early leaves a uniform sample of the items
    order = np.random.default_rng(ORDER_SEED).permutation(len(records))
    records = [records[i] for i in order]
    seen = prepare_resume(out)

    async def go() -> int:
        client = ChatClient(upstream, api_key=api_key, timeout=timeout, retries=retries)
        try:
            return await collect_ptrue(items, records, out, client=client, model=model,
                                       style=style, skip=seen, on_done=on_done)
        finally:
            await client.aclose()

    return asyncio.run(go())


def load_ptrue(path: Path) -> dict[str, float | None]:
    """``{id: P(True) or None}`` from a sidecar file (the first row per id is kept)."""
    out: dict[str, float | None] = {}
    if not path.exists():
        return out
    for row in read_jsonl(path):
        rid = str(row.get("id"))
        v = row.get("ptrue")
        if rid not in out:
            out[rid] = float(v) if isinstance(v, (int, float)) and 0 <= v <= 1 else None
    return out


def attach_ptrue(records: Sequence[dict[str, Any]], ptrue: Mapping[str, float | None]
                 ) -> list[dict[str, Any]]:
    """Copies of ``records`` with ``confidence.ptrue`` from ``ptrue`` (missing stays null)."""
    out = []
    for rec in records:
        r = dict(rec)
        conf = dict(r.get("confidence") or {})
        conf["ptrue"] = ptrue.get(str(r.get("id")))
        r["confidence"] = conf
        out.append(r)
    return out
