"""Datasets in the UtilityBench shape: the shipped seed set and loaders for any local file or
the real UtilityBench on Hugging Face.

Item contract (docs/design.md)::

    {"id", "question", "answerable": bool, "cost": float > 0, "domain", "source",
     "reference": [str, ...], "answer_type": "choice" | "number" | "text" | "code"}

Real UtilityBench's column names are not known offline, so columns are mapped from common
name candidates (``question``/``prompt``/``query``, ``cost``/``L``/``consequence_cost``,
``answerable`` or an inverted ``should_abstain``, ...), explicit ``columns=`` overrides win, and
a layout that cannot be mapped fails with the list of columns found.
"""

from __future__ import annotations

import csv
import json
import math
import numbers
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from utilityguard_base.bounds import OptionalCost
from utilityguard_base.exceptions import DatasetError, InvalidValueError
from utilityguard_base.jsonl import parse_jsonl

AnswerType = Literal["choice", "number", "text", "code"]


class DatasetItem(BaseModel):
    """One question in the UtilityBench shape (extra fields are kept)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    question: str = Field(min_length=1)
    answerable: bool
    cost: OptionalCost = None
    domain: str = "unknown"
    source: str = "unknown"
    reference: list[str] = Field(default_factory=list)
    answer_type: AnswerType = "text"


CANDIDATES: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "question_id", "uid", "sample_id", "idx", "index"),
    "question": ("question", "prompt", "query", "input", "problem", "text", "instruction"),
    "cost": ("cost", "L", "l", "L_i", "consequence_cost", "error_cost", "loss", "harm_cost",
             "consequence", "severity_cost"),
    "answerable": ("answerable", "is_answerable", "has_answer"),
    "domain": ("domain", "subject", "field", "category_domain"),
    "source": ("source", "dataset", "source_dataset", "origin", "subset"),
    "reference": ("reference", "references", "answer", "answers", "gold", "target",
                  "solution", "label"),
    "answer_type": ("answer_type", "answer_format", "type"),
}
#: Columns whose truth means "must refuse" (inverted into ``answerable``).
INVERTED_ANSWERABLE = ("should_abstain", "should_refuse", "refusal_required", "abstain",
                       "unanswerable", "needs_refusal")
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


def parse_bool(value: Any) -> bool | None:
    """The one boolean parser of records and datasets: ``True``/``False``, ``1``/``0`` and the
    strings ``true/false, yes/no, y/n, t/f, 1/0`` (any case, surrounding spaces ignored);
    ``None``, ``""`` and NaN are missing (``None``). Anything else is an
    :class:`~utilityguard_base.exceptions.InvalidValueError`.

    Examples
    --------
    >>> [parse_bool(v) for v in (True, 0, " Yes ", "f", "", None)]
    [True, False, True, False, None, None]
    >>> parse_bool("maybe")
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidValueError: expected true/false (or 1/0, yes/no), got...
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise InvalidValueError(f"expected true/false (or 1/0, yes/no), got {value!r}")


def parse_float(value: Any) -> float | None:
    """The one number parser of record fields: ints, floats and numeric strings; ``None``
    and ``""`` are missing (``None``); a bool, NaN or other text is an
    :class:`~utilityguard_base.exceptions.InvalidValueError`. Infinities are returned (the caller
    bounds the range).

    Examples
    --------
    >>> [parse_float(v) for v in (3, " 2.5 ", "", None)]
    [3.0, 2.5, None, None]
    >>> parse_float("nan")
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidValueError: NaN is not allowed
    """
    if value is None or value == "":
        return None
    if isinstance(value, (bool, np.bool_)):
        raise InvalidValueError(f"expected a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"expected a number, got {value!r}") from None
    if math.isnan(number):
        raise InvalidValueError("NaN is not allowed")
    return number


def _bool(value: Any, where: str) -> bool:
    try:
        parsed = parse_bool(value)
    except InvalidValueError:
        parsed = None
    if parsed is None:
        raise DatasetError(f"{where}: expected a boolean (true/false, 1/0), got {value!r}")
    return parsed


def _references(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("["):
            try:
                parsed = json.loads(s)
                if isinstance(parsed, list):
                    return [str(v) for v in parsed]
            except json.JSONDecodeError:
                pass
        return [s] if s else []
    if isinstance(value, Iterable):
        return [str(v) for v in value]
    return [str(value)]


def resolve_columns(
    found: Sequence[str], columns: Mapping[str, str] | None = None, *, require_cost: bool = True
) -> dict[str, str]:
    """Map contract fields to the file's columns; raise listing the columns found."""
    mapping: dict[str, str] = {}
    lower = {c.lower(): c for c in found}
    for field, names in CANDIDATES.items():
        if columns and field in columns:
            if columns[field] not in found:
                raise DatasetError(
                    f"column {columns[field]!r} given for {field!r} is not in the data; "
                    f"columns found: {', '.join(found)}"
                )
            mapping[field] = columns[field]
            continue
        for name in names:
            if name in found:
                mapping[field] = name
                break
            if name.lower() in lower:
                mapping[field] = lower[name.lower()]
                break
    if "answerable" not in mapping:
        for name in INVERTED_ANSWERABLE:
            if name in found or name.lower() in lower:
                mapping["_inverted_answerable"] = name if name in found else lower[name.lower()]
                break
    needed = ["question"] + (["cost"] if require_cost else [])
    missing = [f for f in needed if f not in mapping]
    if "answerable" not in mapping and "_inverted_answerable" not in mapping:
        missing.append("answerable (or should_abstain)")
    if missing:
        raise DatasetError(
            f"cannot map required field(s) {', '.join(missing)}; columns found: "
            f"{', '.join(found) or '(none)'}; pass explicit columns, e.g. --text-col/--cost-col"
        )
    return mapping


def items_from_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    origin: str,
    columns: Mapping[str, str] | None = None,
    require_cost: bool = True,
) -> list[DatasetItem]:
    """Validate raw rows into items; errors name ``origin``, the row and the field."""
    if not rows:
        raise DatasetError(f"{origin}: no rows")
    found = list(dict.fromkeys(k for r in rows[:50] for k in r))
    m = resolve_columns(found, columns, require_cost=require_cost)
    out: list[DatasetItem] = []
    for n, row in enumerate(rows, start=1):
        where = f"{origin}, row {n}"
        rec: dict[str, Any] = {k: v for k, v in row.items() if k not in m.values()}
        rec["id"] = str(row.get(m.get("id", ""), n)) if "id" in m else str(n)
        rec["question"] = row.get(m["question"])
        if "answerable" in m:
            rec["answerable"] = _bool(row.get(m["answerable"]), f"{where}, field answerable")
        else:
            col = m["_inverted_answerable"]
            rec["answerable"] = not _bool(row.get(col), f"{where}, field {col}")
        if "cost" in m:
            raw = row.get(m["cost"])
            try:
                cost = float(raw)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise DatasetError(f"{where}, field {m['cost']}: not a number: {raw!r}") from None
            if not math.isfinite(cost) or cost <= 0:
                raise DatasetError(f"{where}, field {m['cost']}: cost must be > 0, got {raw!r}")
            rec["cost"] = cost
        for field in ("domain", "source", "answer_type"):
            if field in m and row.get(m[field]) not in (None, ""):
                rec[field] = str(row[m[field]])
        if "reference" in m:
            rec["reference"] = _references(row.get(m["reference"]))
        if not isinstance(rec["question"], str) or not rec["question"].strip():
            raise DatasetError(f"{where}, field {m['question']}: empty or not text")
        try:
            out.append(DatasetItem(**rec))
        except ValueError as exc:
            first = str(exc).splitlines()
            raise DatasetError(f"{where}: {' '.join(first[:3])}") from None
    return out


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a JSONL, JSON (list), CSV or parquet file."""
    p = Path(path)
    if not p.exists():
        raise DatasetError(f"{p}: no such file")
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DatasetError(
                f"{p}: reading parquet needs pyarrow: pip install 'utilityguard[data]'"
            ) from None
        return list(pq.read_table(p).to_pylist())
    if suffix == ".csv":
        # utf-8-sig: a byte-order mark (spreadsheet exports) must not become part of the
        # first column's name
        with p.open(newline="", encoding="utf-8-sig") as f:
            return [dict(r) for r in csv.DictReader(f)]
    text = p.read_text(encoding="utf-8")
    if suffix == ".json" and text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{p}: invalid JSON ({exc})") from None
        if not all(isinstance(r, dict) for r in data):
            raise DatasetError(f"{p}: expected a JSON list of objects")
        return [dict(r) for r in data]
    return parse_jsonl(text, p)


def _load_hf(name: str, split: str, timeout: float) -> list[dict[str, Any]]:
    try:
        import datasets
    except ImportError:
        raise DatasetError(
            f"hf:{name}: loading from Hugging Face needs the 'datasets' package "
            "(pip install 'utilityguard[hf]'); or download the parquet and pass its path"
        ) from None
    if os.environ.get("HF_HUB_OFFLINE") != "1" and os.environ.get("HF_DATASETS_OFFLINE") != "1":
        try:
            socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        except OSError:
            raise DatasetError(
                f"hf:{name}: Hugging Face is not reachable from this machine; download the "
                "dataset elsewhere and pass the local parquet/JSONL path"
            ) from None
    try:
        ds = datasets.load_dataset(name, split=split)
    except Exception as exc:
        raise DatasetError(f"hf:{name}: could not load split {split!r}: {exc}") from None
    return [dict(r) for r in ds]


def load_utilitybench(
    source: str | os.PathLike[str],
    columns: Mapping[str, str] | None = None,
    *,
    split: str = "train",
    require_cost: bool = True,
    timeout: float = 5.0,
) -> list[DatasetItem]:
    """Load UtilityBench-shaped items from a local file or a Hugging Face id.

    ``source`` is a path (``.parquet``, ``.jsonl``, ``.json``, ``.csv``) or ``hf:owner/name``
    (also a bare ``owner/name`` that is not an existing path). ``columns`` maps contract
    fields to the file's column names, e.g. ``{"question": "prompt_text", "cost": "L"}``.
    """
    s = str(source)
    if s.startswith("hf:") or ("/" in s and not Path(s).exists() and s.count("/") == 1
                               and not Path(s).suffix):
        name = s.removeprefix("hf:")
        return items_from_rows(_load_hf(name, split, timeout), origin=f"hf:{name}",
                               columns=columns, require_cost=require_cost)
    return items_from_rows(read_rows(s), origin=s, columns=columns, require_cost=require_cost)


SEED_DIR = "data/seed"


def seed_path(name: str = "items.jsonl") -> Path:
    """Path of a file of the shipped seed set."""
    return Path(str(resources.files("cost_models").joinpath(SEED_DIR).joinpath(name)))


def load_seed() -> list[DatasetItem]:
    """The shipped seed set: 1,216 questions written for utilityguard, annotated with the
    paper's BWS + Bradley-Terry protocol (see ``cost_models/data/seed/README.md``). These are
    not UtilityBench's published values."""
    return load_utilitybench(seed_path())


def load_seed_questions() -> list[DatasetItem]:
    """Every question written for the seed set (1,248, no costs): :func:`load_seed`'s items
    plus the near-duplicates removed from it (``duplicates.jsonl``). Responses collected
    before the deduplication, and grades of them, refer to these."""
    return load_utilitybench(seed_path("questions.jsonl"), require_cost=False)
