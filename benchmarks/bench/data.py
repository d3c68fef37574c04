"""Bench inputs: dataset items joined with graded response records by ``id``.

A ``ptrue.jsonl`` beside a responses file (``collect --ptrue-of``: one P(True) row per record)
fills ``confidence.ptrue`` where the record has none.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.ptrue_collect import load_ptrue
from cost_models.datasets import DatasetItem
from guard.decision_records import REPLY_SIGNALS
from guard.exceptions import RecordError
from guard.response_records import ResponseRecord, read_response_records
from utilityguard_base.exceptions import BenchError

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
#: The signals the bench reads (the guard's order of preference).
SIGNALS = REPLY_SIGNALS
SHIPPED_RESPONSES = "data/smollm2/responses.jsonl"
#: P(True) rows beside a responses file (``collect --ptrue-of``), joined by id
PTRUE_FILE = "ptrue.jsonl"


def shipped_responses() -> Path:
    """The SmolLM2-135M-Instruct responses on the seed set, shipped with the package."""
    return Path(str(resources.files("benchmarks").joinpath(SHIPPED_RESPONSES)))


def shipped_response_files() -> list[Path]:
    """Every model's shipped responses on the seed set (``data/<model>/responses.jsonl``),
    SmolLM2 first; the bench's default."""
    root = Path(str(resources.files("benchmarks").joinpath("data")))
    files = sorted(root.glob("*/responses.jsonl"))
    first = shipped_responses()
    return [first, *[f for f in files if f.resolve() != first.resolve()]]


@dataclass
class BenchData:
    """Aligned per-item arrays (one entry per item that has a response)."""

    ids: list[str]
    questions: list[str]
    domains: list[str]
    answerable: BoolArray
    cost: FloatArray
    answered: BoolArray
    correct: BoolArray
    signals: dict[str, FloatArray]
    responses_file: str
    responses_sha256: str
    model: str | None
    missing_responses: int = 0
    #: response records whose id is not in the dataset (not used; e.g. items since removed)
    unmatched_responses: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    texts: list[str | None] = field(default_factory=list)  # the replies; None: not recorded

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def canonical(self) -> NDArray[np.intp]:
        """Positions sorted by id: folds and bootstrap resamples are drawn over this order,
        so results do not depend on the order of the items or responses files."""
        return np.asarray(np.argsort(np.array(self.ids, dtype=object), kind="stable"),
                          dtype=np.intp)


def load_bench(items: list[DatasetItem], responses: Path) -> BenchData:
    """Join ``items`` with the response records in ``responses`` (JSONL)."""
    if not responses.exists():
        raise BenchError(f"{responses}: no such file")
    raw = responses.read_bytes()
    by_item: dict[str, DatasetItem] = {}
    for it in items:
        if it.id in by_item:  # one response would be joined to (and counted for) both
            raise BenchError(f"dataset: duplicate item id {it.id!r}")
        by_item[it.id] = it
    for it in items:
        if it.cost is None:
            raise BenchError(f"item {it.id}: the bench needs a cost for every item")
    try:
        records = read_response_records(responses)
    except RecordError as exc:
        raise BenchError(str(exc)) from None
    recs: dict[str, ResponseRecord] = {}
    unmatched: set[str] = set()
    model = None
    for n, r in enumerate(records, start=1):
        where = f"{responses}, row {n}"
        if r.id is None:
            raise BenchError(f"{where}: a response record needs an 'id'")
        if r.id in recs or r.id in unmatched:
            raise BenchError(f"{where}: duplicate response for id {r.id!r}")
        if r.id not in by_item:  # the bench uses the ids both files have, and says so
            unmatched.add(r.id)
            continue
        recs[r.id] = r
        model = model or r.model
    if not recs:
        raise BenchError(f"{responses}: no response records for the dataset's ids "
                         f"({len(unmatched)} record(s), none with an id in the dataset)")
    order = [it.id for it in items if it.id in recs]
    ptrue = load_ptrue(responses.parent / PTRUE_FILE)
    sig: dict[str, list[float]] = {s: [] for s in SIGNALS}
    answered, correct = [], []
    texts: list[str | None] = []
    for rid in order:
        r, where = recs[rid], f"{responses}, record {rid}"
        if r.answered and by_item[rid].answerable and r.correct is None:
            raise BenchError(f"{where}, field 'correct': required for an answered, answerable item")
        answered.append(r.answered)
        texts.append(r.response)
        correct.append(bool(r.correct) and bool(by_item[rid].answerable))
        for s_ in SIGNALS:
            value = r.confidence.get(s_)
            if value is None and s_ == "ptrue":
                value = ptrue.get(rid)
            sig[s_].append(math.nan if value is None else value)
    sel = [by_item[i] for i in order]
    return BenchData(
        ids=order, questions=[it.question for it in sel], domains=[it.domain for it in sel],
        answerable=np.array([it.answerable for it in sel], dtype=bool),
        cost=np.array([it.cost for it in sel], dtype=np.float64),
        answered=np.array(answered, dtype=bool), correct=np.array(correct, dtype=bool),
        signals={s: np.array(v, dtype=np.float64) for s, v in sig.items()},
        responses_file=str(responses), responses_sha256=hashlib.sha256(raw).hexdigest(),
        model=model, missing_responses=len(items) - len(order), texts=texts,
        unmatched_responses=len(unmatched),
    )
