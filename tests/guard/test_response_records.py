"""The one response-record model and reader: JSONL, CSV (dotted or JSON confidence), parquet;
errors name the file, the row, the record's id and the field."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

from cost_models.datasets import parse_bool
from guard.exceptions import RecordError
from guard.response_records import ResponseRecord, read_response_records
from utilityguard_base.exceptions import InvalidValueError


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(True, True, id="bool"), pytest.param(0, False, id="int-0"),
    pytest.param(1.0, True, id="float-1"), pytest.param(" TRUE ", True, id="upper-spaced"),
    pytest.param("no", False, id="no"), pytest.param("y", True, id="y"),
    pytest.param("F", False, id="F"), pytest.param("", None, id="empty"),
    pytest.param(None, None, id="none"), pytest.param(math.nan, None, id="nan"),
])
def test_parse_bool_accepts_the_usual_spellings(value: Any, expected: bool | None) -> None:
    assert parse_bool(value) is expected


@pytest.mark.parametrize("value", ["maybe", 2, 0.5, "tru", [True]])
def test_parse_bool_rejects_anything_else(value: Any) -> None:
    with pytest.raises(InvalidValueError, match="expected true/false"):
        parse_bool(value)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_records_in_file_order(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "r.jsonl", [
        {"id": "a", "model": "m", "response": "Paris", "answered": True, "correct": True,
         "confidence": {"logprob_mean": -0.1, "verbal": None}, "latency_ms": 12},
        {"id": 2, "answered": False, "correct": None},
    ])
    first, second = read_response_records(path)
    assert (first.id, first.answered, first.correct) == ("a", True, True)
    assert first.confidence.get("logprob_mean") == -0.1 and first.confidence.get("verbal") is None
    assert first.model_extra == {"latency_ms": 12}
    assert (second.id, second.answered, second.correct) == ("2", False, None)
    assert second.confidence.is_empty


def test_csv_with_dotted_and_json_confidence(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, ["id", "answered", "correct", "confidence.verbal", "answerable",
                               "cost"])
        w.writeheader()
        w.writerow({"id": "x", "answered": "yes", "correct": "0", "confidence.verbal": "0.7",
                    "answerable": "true", "cost": "4.5"})
        w.writerow({"id": "y", "answered": "false", "correct": "", "confidence.verbal": "",
                    "answerable": "f", "cost": "1"})
    x, y = read_response_records(path)
    assert (x.answered, x.correct, x.confidence.verbal, x.answerable, x.cost) == (
        True, False, 0.7, True, 4.5)
    assert (y.answered, y.correct, y.confidence.verbal, y.answerable, y.cost) == (
        False, None, None, False, 1.0)
    cell = ResponseRecord.model_validate({"answered": "1", "confidence": '{"consistency": 0.4}'})
    assert cell.confidence.consistency == 0.4


@pytest.mark.parametrize(("row", "needle"), [
    pytest.param({"id": "q", "correct": True}, "row 1 (id 'q'), missing field 'answered'",
                 id="no-answered"),
    pytest.param({"id": "q", "answered": "maybe"}, "field 'answered': expected true/false",
                 id="bad-bool"),
    pytest.param({"answered": True, "confidence": {"verbal": 1.5}},
                 "row 1, field 'confidence.verbal'", id="verbal-over-1"),
    pytest.param({"answered": True, "confidence": {"logprob_mean": 0.3}},
                 "field 'confidence.logprob_mean'", id="positive-logprob"),
    pytest.param({"answered": True, "confidence": {"telepathy": 0.3}},
                 "field 'confidence.telepathy'", id="unknown-signal"),
    pytest.param({"answered": True, "cost": 0}, "field 'cost': must be a finite number > 0",
                 id="zero-cost"),
    pytest.param({"answered": True, "cost": math.nan}, "field 'cost': NaN is not allowed",
                 id="nan-cost"),
    pytest.param({"answered": True, "confidence": "{not json"},
                 "field 'confidence': expected a JSON object", id="bad-json-cell"),
])
def test_a_bad_record_names_file_row_and_field(tmp_path: Path, row: dict[str, Any],
                                               needle: str) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [row])
    with pytest.raises(RecordError) as info:
        read_response_records(path)
    assert str(info.value).startswith(f"{path}, ")
    assert needle in str(info.value)


@pytest.mark.parametrize(("content", "needle"), [
    pytest.param(None, "no such file", id="missing"),
    pytest.param(b"", "no records", id="empty"),
    pytest.param(b'{"answered": tru\n', "line 1: invalid JSON", id="bad-json"),
    pytest.param(b'{"q": "caf\xe9"}\n', "not UTF-8", id="latin-1"),
])
def test_a_bad_file_is_a_record_error(tmp_path: Path, content: bytes | None,
                                      needle: str) -> None:
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(RecordError, match=needle):
        read_response_records(path)
