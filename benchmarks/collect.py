"""Collect graded model responses over a dataset through any OpenAI-compatible endpoint.

Each item is asked with the paper's Refusal Hint as the system prompt (temperature 0). With
``logprobs`` the reply's token log-probabilities are recorded; with ``verbal`` a second pass
asks for a stated confidence ("Confidence: N%"); with ``samples > 0`` that many extra replies
at temperature 0.7 give self-consistency (the share of replies agreeing with the greedy one).
Every reply is graded (:mod:`benchmarks.grading`).

The output is append-only JSONL, one response record per item, flushed and fsynced per line:
a killed run loses nothing it wrote, and a rerun skips the ids already present (a torn last
line is moved aside to ``<out>.torn`` first).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.grading import Grade, grade
from cost_models.datasets import DatasetItem
from guard.confidence import VERBAL_INSTRUCTION, logprob_signal, parse_verbal_confidence
from guard.confidence.consistency import consistency
from guard.refusal import REFUSAL_HINT
from policies.exceptions import InvalidValueError, UtilityGuardError

log = logging.getLogger(__name__)
CONFIDENCE_KINDS = ("logprobs", "verbal", "consistency")


class CollectError(UtilityGuardError, RuntimeError):
    """The upstream failed for an item after the retries."""


@dataclass
class CollectSettings:
    upstream: str
    model: str
    confidence: Sequence[str] = ("logprobs",)
    max_tokens: int = 256
    samples: int = 0
    api_key: str | None = None
    timeout: float = 300.0
    retries: int = 3
    extra: dict[str, Any] = field(default_factory=dict)


def grading_block(g: Grade) -> dict[str, Any]:
    """How a record was graded: the stage (``rules`` or ``judge``), whether the rules settled
    it, and their flags."""
    return {"stage": g.stage, "settled": g.settled, "flags": list(g.flags)}


def done_ids(out: Path) -> set[str]:
    """Ids already in ``out``; a torn last line (a killed write) is moved to ``out.torn``."""
    if not out.exists():
        return set()
    raw = out.read_bytes()
    lines = raw.split(b"\n")
    ids: set[str] = set()
    good_end = 0
    for k, line in enumerate(lines):
        if not line.strip():
            good_end += len(line) + (1 if k < len(lines) - 1 else 0)
            continue
        try:
            ids.add(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            if k == len(lines) - 1:  # only the last line can be torn by a kill
                torn = out.with_suffix(out.suffix + ".torn")
                torn.write_bytes(line)
                with out.open("r+b") as f:
                    f.truncate(good_end)
                log.warning("moved a torn last line of %s to %s", out, torn)
                break
            raise CollectError(f"{out}, line {k + 1}: not a response record") from None
        good_end += len(line) + 1
    else:
        if raw and not raw.endswith(b"\n"):  # a kill between a record and its newline:
            with out.open("ab") as f:        # end the line, or the next record joins it
                f.write(b"\n")
    return ids


async def _chat(
    client: httpx.AsyncClient, s: CollectSettings, system: str, question: str,
    *, logprobs: bool, temperature: float,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": s.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}],
        "max_tokens": s.max_tokens,
        "temperature": temperature,
        **s.extra,
    }
    if logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = 1
    last: Exception | None = None
    for attempt in range(s.retries):
        try:
            r = await client.post("/chat/completions", json=body)
            if r.status_code < 500 and r.status_code != 429:
                r.raise_for_status()
                data: dict[str, Any] = r.json()
                return data
            last = CollectError(f"upstream answered {r.status_code}: {r.text[:200]}")
        except httpx.HTTPStatusError as exc:
            raise CollectError(
                f"upstream answered {exc.response.status_code}: {exc.response.text[:200]}"
            ) from None
        except httpx.HTTPError as exc:
            last = exc
        if attempt + 1 < s.retries:
            await asyncio.sleep(min(8.0, 0.5 * 2**attempt))
    raise CollectError(f"upstream {s.upstream} failed after {s.retries} tries: {last}")


def _content(resp: dict[str, Any]) -> tuple[str, Any, str | None]:
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not choices or not isinstance(choices[0], dict):
        # not a completion (e.g. an error object with status 200): recording it as an empty
        # reply would count as the model refusing
        raise CollectError(f"upstream reply has no choices: {json.dumps(resp)[:200]}")
    choice = choices[0]
    msg = choice.get("message") or {}
    return str(msg.get("content") or ""), choice.get("logprobs"), choice.get("finish_reason")


async def collect_one(
    client: httpx.AsyncClient, s: CollectSettings, item: DatasetItem
) -> dict[str, Any]:
    """Ask, grade and build the response record of one item."""
    t0 = time.perf_counter()
    resp = await _chat(client, s, REFUSAL_HINT, item.question,
                       logprobs="logprobs" in s.confidence, temperature=0.0)
    text, lp, finish = _content(resp)
    g = grade(item.model_dump(), text)
    sig = logprob_signal(lp)
    conf: dict[str, float | None] = {
        "verbal": None,
        "logprob_mean": sig.mean if sig else None,
        "logprob_low10": sig.low10 if sig else None,
        "consistency": None,
    }
    record: dict[str, Any] = {"id": item.id, "response": text, "answered": g.answered,
                              "correct": g.correct, "confidence": conf,
                              "grading": grading_block(g)}
    if "verbal" in s.confidence:
        vresp = await _chat(client, s, REFUSAL_HINT + " " + VERBAL_INSTRUCTION, item.question,
                            logprobs=False, temperature=0.0)
        vtext = _content(vresp)[0]
        parsed = parse_verbal_confidence(vtext)
        conf["verbal"] = parsed.value if parsed else None
        record["verbal_response"] = vtext
    if s.samples > 0:
        samples = [text]
        for _ in range(s.samples):
            sresp = await _chat(client, s, REFUSAL_HINT, item.question, logprobs=False,
                                temperature=0.7)
            samples.append(_content(sresp)[0])
        # agreement of the greedy reply with all replies (itself included), refusals compared
        # as one answer
        conf["consistency"] = consistency(samples, item.answer_type, item.question,
                                          reference=text)
        record["sample_modal_share"] = consistency(samples, item.answer_type, item.question)
    usage = resp.get("usage") or {}
    record.update(model=s.model, finish_reason=finish,
                  completion_tokens=usage.get("completion_tokens"),
                  latency_ms=round((time.perf_counter() - t0) * 1000.0, 1))
    return record


async def collect(
    items: Sequence[DatasetItem],
    s: CollectSettings,
    out: Path,
    *,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Collect every item not yet in ``out``; returns how many records were written."""
    for kind in s.confidence:
        if kind not in CONFIDENCE_KINDS:
            raise InvalidValueError(
                f"unknown confidence {kind!r}; allowed: {', '.join(CONFIDENCE_KINDS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    seen = done_ids(out)
    todo = [it for it in items if it.id not in seen]
    headers = {"Authorization": f"Bearer {s.api_key}"} if s.api_key else {}
    written = 0
    async with httpx.AsyncClient(base_url=s.upstream.rstrip("/"), timeout=s.timeout,
                                 headers=headers, transport=transport) as client:
        with out.open("a", encoding="utf-8") as f:
            for item in todo:
                record = await collect_one(client, s, item)
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
                written += 1
                if on_done:
                    on_done(record)
    return written


def regrade(items: Sequence[DatasetItem], out: Path) -> tuple[int, int]:
    """Re-grade every record of ``out`` with the current grader, in place (atomically).

    The replies are kept; ``answered`` and ``correct`` are recomputed. Returns
    ``(records, changed)``.
    """
    by_id = {it.id: it for it in items}
    lines = out.read_text(encoding="utf-8").splitlines()
    records, changed = [], 0
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CollectError(f"{out}, line {n}: invalid JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise CollectError(f"{out}, line {n}: not a response record")
        item = by_id.get(str(rec.get("id")))
        if item is None:
            raise CollectError(f"{out}, line {n}: id {rec.get('id')!r} is not in the dataset")
        g = grade(item.model_dump(), rec.get("response"))
        if (g.answered, g.correct) != (rec.get("answered"), rec.get("correct")):
            changed += 1
        rec["answered"], rec["correct"] = g.answered, g.correct
        rec["grading"] = grading_block(g)
        records.append(rec)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                   encoding="utf-8")
    tmp.replace(out)
    return len(records), changed
