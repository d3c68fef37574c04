"""Bench inputs: dataset items joined with graded response records by ``id``."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cost_models.datasets import DatasetItem
from policies.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
SIGNALS = ("logprob_mean", "logprob_low10", "verbal", "consistency")
SHIPPED_RESPONSES = "data/smollm2/responses.jsonl"


class BenchError(InvalidValueError):
    """Bench inputs that cannot be used; the message names the file and the record."""


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

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def canonical(self) -> NDArray[np.intp]:
        """Positions sorted by id: folds and bootstrap resamples are drawn over this order,
        so results do not depend on the order of the items or responses files."""
        return np.asarray(np.argsort(np.array(self.ids, dtype=object), kind="stable"),
                          dtype=np.intp)


def _flag(value: Any, where: str, *, nullable: bool = False) -> bool | None:
    if isinstance(value, bool):
        return value
    if value is None and nullable:
        return None
    raise BenchError(f"{where}: expected true/false{' or null' if nullable else ''}, "
                     f"got {value!r}")


def _signal(conf: dict[str, Any], name: str, where: str) -> float:
    v = conf.get(name)
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BenchError(f"{where}: confidence.{name} must be a finite number or null, got {v!r}")
    if name in ("verbal", "consistency") and not 0.0 <= v <= 1.0:
        raise BenchError(f"{where}: confidence.{name} must be a probability in [0, 1], got {v!r}")
    return float(v)


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
    recs: dict[str, dict[str, Any]] = {}
    unmatched: set[str] = set()
    model = None
    for n, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{responses}, line {n}"
        try:
            r = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchError(f"{where}: invalid JSON ({exc.msg})") from None
        if not isinstance(r, dict) or "id" not in r:
            raise BenchError(f"{where}: a response record needs an 'id'")
        rid = str(r["id"])
        if rid in recs or rid in unmatched:
            raise BenchError(f"{where}: duplicate response for id {rid!r}")
        if rid not in by_item:  # the bench uses the ids both files have, and says so
            unmatched.add(rid)
            continue
        if rid in recs:
            raise BenchError(f"{where}: duplicate response for id {rid!r}")
        for key in ("answered",):
            if key not in r:
                raise BenchError(f"{where}: missing field '{key}'")
        recs[rid] = r
        model = model or r.get("model")
    if not recs:
        raise BenchError(f"{responses}: no response records" + (
            f" for the dataset's ids ({len(unmatched)} record(s), none with an id in the "
            "dataset)" if unmatched else ""))
    order = [it.id for it in items if it.id in recs]
    sig: dict[str, list[float]] = {s: [] for s in SIGNALS}
    answered, correct = [], []
    for rid in order:
        r, where = recs[rid], f"{responses}, record {rid}"
        d = _flag(r["answered"], f"{where}, field 'answered'")
        c = _flag(r.get("correct"), f"{where}, field 'correct'", nullable=True)
        if d and by_item[rid].answerable and c is None:
            raise BenchError(f"{where}, field 'correct': required for an answered, answerable item")
        answered.append(bool(d))
        correct.append(bool(c) and bool(by_item[rid].answerable))
        conf = r.get("confidence") or {}
        if not isinstance(conf, dict):
            raise BenchError(f"{where}, field 'confidence': expected an object")
        for s in SIGNALS:
            sig[s].append(_signal(conf, s, where))
    sel = [by_item[i] for i in order]
    return BenchData(
        ids=order, questions=[it.question for it in sel], domains=[it.domain for it in sel],
        answerable=np.array([it.answerable for it in sel], dtype=bool),
        cost=np.array([it.cost for it in sel], dtype=np.float64),
        answered=np.array(answered, dtype=bool), correct=np.array(correct, dtype=bool),
        signals={s: np.array(v, dtype=np.float64) for s, v in sig.items()},
        responses_file=str(responses), responses_sha256=hashlib.sha256(raw).hexdigest(),
        model=model, missing_responses=len(items) - len(order),
        unmatched_responses=len(unmatched),
    )
