"""The response record (what a model said, graded) and its one reader.

A response record is one row of ``utilityguard collect``'s output and the input of
``utilityguard calibrate``, ``utilityguard metric`` and the bench::

    {"id": str, "model": str | null, "response": str | null,
     "answered": bool, "correct": bool | null,
     "confidence": {"verbal", "logprob_mean", "logprob_low10", "consistency", "caller":
                    float | null}}

A metric record (``utilityguard metric``) may also carry the dataset fields ``answerable`` and
``cost`` inline. Any other field is kept (``record.model_extra``) and not checked.

:func:`read_response_records` reads JSONL, JSON, CSV or parquet. In a CSV, booleans are the
strings :func:`~cost_models.datasets.parse_bool` accepts, and ``confidence`` is a JSON object
in one cell or one ``confidence.<signal>`` column per signal. Every problem is a
:class:`RecordError` naming the file, the row and the field.

Examples
--------
>>> r = ResponseRecord.model_validate(
...     {"id": 7, "answered": "true", "correct": None, "confidence": {"verbal": 0.8}})
>>> r.id, r.answered, r.correct, r.confidence.get("verbal")
('7', True, None, 0.8)
"""

from __future__ import annotations

import json
import math
import os
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from cost_models.datasets import parse_bool, parse_float, read_rows
from guard.decision_records import Confidence
from guard.exceptions import DatasetError, RecordError
from utilityguard_base.bounds import problem

__all__ = ["ResponseRecord", "parse_response_record", "read_response_records"]

_Bool = Annotated[bool, BeforeValidator(parse_bool)]
_OptionalBool = Annotated[bool | None, BeforeValidator(parse_bool)]


def _text_or_none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


class ResponseRecord(BaseModel):
    """One graded response record (see the module docstring for the fields)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str | None = None
    model: Annotated[str | None, BeforeValidator(_text_or_none)] = None
    response: Annotated[str | None, BeforeValidator(_text_or_none)] = None
    answered: _Bool
    correct: _OptionalBool = None
    confidence: Confidence = Field(default_factory=Confidence)
    answerable: _OptionalBool = None
    cost: float | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"expected a string or an integer, got {value!r}")
        return str(value) if isinstance(value, int) else value

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> Any:
        if value is None or value == "":
            return {}
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                raise ValueError("expected a JSON object of signals") from None
        return value

    @field_validator("cost", mode="before")
    @classmethod
    def _cost(cls, value: Any) -> Any:
        cost = parse_float(value)
        if cost is not None and (not math.isfinite(cost) or cost <= 0):
            raise ValueError(f"must be a finite number > 0, got {value!r}")
        return cost


def _gather_confidence(row: dict[str, Any]) -> dict[str, Any]:
    """``confidence.<signal>`` columns (a CSV's shape) folded into one ``confidence`` object."""
    dotted = {k: v for k, v in row.items() if k.startswith("confidence.")}
    if not dotted:
        return row
    out = {k: v for k, v in row.items() if k not in dotted}
    conf = out.get("confidence")
    merged = dict(conf) if isinstance(conf, dict) else {}
    for key, value in dotted.items():
        if value not in (None, ""):
            merged[key.removeprefix("confidence.")] = float(value) if isinstance(
                value, str) else value
    out["confidence"] = merged
    return out


def _problem(error: Any) -> str:
    """One pydantic error as ``field 'x': what is wrong``."""
    field = ".".join(str(x) for x in error["loc"]) or "record"
    if error["type"] == "missing":
        return f"missing field '{field}'"
    return f"field '{field}': {problem(error)}"


def parse_response_record(row: dict[str, Any], where: str) -> ResponseRecord:
    """One record from one row; :class:`RecordError` naming ``where`` (plus the record's id)
    and the field."""
    if isinstance(row.get("id"), (str, int)) and not isinstance(row.get("id"), bool):
        where = f"{where} (id {str(row['id'])!r})"
    try:
        return ResponseRecord.model_validate(_gather_confidence(row))
    except ValidationError as exc:
        raise RecordError(f"{where}, {_problem(exc.errors()[0])}") from None
    except ValueError as exc:  # a confidence.<signal> cell that is not a number
        raise RecordError(f"{where}: {exc}") from None


def read_response_records(path: str | os.PathLike[str]) -> list[ResponseRecord]:
    """Every record of a JSONL / JSON / CSV / parquet file, in file order.

    Raises :class:`RecordError` for a missing or unreadable file, a file without records, or
    a row that is not a response record (the message names the file, the row and the field).
    """
    try:
        rows = read_rows(path)
    except DatasetError as exc:
        raise RecordError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except (ValueError, OSError) as exc:  # e.g. pyarrow's ArrowInvalid, a directory, bad CSV
        raise RecordError(f"{path}: cannot read records: {' '.join(str(exc).split())}"
                          ) from None
    if not rows:
        raise RecordError(f"{path}: no records")
    return [parse_response_record(row, f"{path}, row {n}") for n, row in enumerate(rows, 1)]
