"""``utilityguard metric FILE``: happy paths on JSONL/CSV/parquet and one-line errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import table1, utility_auc
from benchmarks.examples import EXAMPLE_FILE
from tests.helpers import run_cli

RECORDS: list[dict[str, Any]] = [
    {"id": "1", "answerable": True, "answered": True, "correct": True, "cost": 1.0,
     "confidence": {"logprob_mean": -0.1}},
    {"id": "2", "answerable": True, "answered": True, "correct": False, "cost": 8.0,
     "confidence": {"logprob_mean": -0.9}},
    {"id": "3", "answerable": True, "answered": False, "correct": None, "cost": 4.0,
     "confidence": {"logprob_mean": -1.5}},
    {"id": "4", "answerable": False, "answered": False, "correct": None, "cost": 2.0,
     "confidence": {"logprob_mean": -2.0}},
    {"id": "5", "answerable": False, "answered": True, "correct": False, "cost": 3.0,
     "confidence": {"logprob_mean": -0.9}},
]
COLUMNS: tuple[list[Any], list[Any], list[Any], list[Any]] = (
    [r["answerable"] for r in RECORDS],
    [r["answered"] for r in RECORDS],
    [r["correct"] for r in RECORDS],
    [r["cost"] for r in RECORDS],
)
SCORES = [r["confidence"]["logprob_mean"] for r in RECORDS]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for r in rows:
            writer.writerow({k: "" if v is None else v for k, v in r.items()})
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "metric", *argv)


# --------------------------------------------------------------------------- happy paths


def test_jsonl_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", RECORDS)
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    row = table1(*COLUMNS)
    assert f"UtilityAUC   {row.utility_auc:.4f}" in out
    assert "Ans. Acc     33.33%" in out
    assert "Ref. Acc     50.00%" in out
    assert "Answer Rate  60.00%" in out
    assert "n = 5" in out


def test_jsonl_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", RECORDS)
    code, out, _ = run(capsys, str(path), "--json", "--c-r", "8")
    assert code == 0
    result = json.loads(out)
    expected = table1(*COLUMNS, c_r=8.0).to_dict()
    assert result == {"file": str(path), "c_r": 8.0,
                      "score": "binary (answered=1, refused=0)", **expected}


def test_nested_score_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", RECORDS)
    code, out, _ = run(capsys, str(path), "--score", "confidence.logprob_mean", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["score"] == "confidence.logprob_mean"
    assert result["utility_auc"] == pytest.approx(utility_auc(*COLUMNS, SCORES))


def test_csv_with_flat_and_json_nested_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flat = [{**{k: v for k, v in r.items() if k != "confidence"},
             "confidence.logprob_mean": r["confidence"]["logprob_mean"],
             "confidence": json.dumps(r["confidence"])} for r in RECORDS]
    path = write_csv(tmp_path / "r.csv", flat)
    expected = utility_auc(*COLUMNS, SCORES)
    for _ in range(2):  # the dotted column, then (after dropping it) the JSON cell
        code, out, err = run(capsys, str(path), "--score", "confidence.logprob_mean", "--json")
        assert (code, err) == (0, "")
        assert json.loads(out)["utility_auc"] == pytest.approx(expected)
        flat = [{k: v for k, v in r.items() if k != "confidence.logprob_mean"} for r in flat]
        path = write_csv(tmp_path / "nested.csv", flat)


def test_parquet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(RECORDS), path)
    code, out, err = run(capsys, str(path), "--score", "confidence.logprob_mean", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["utility_auc"] == pytest.approx(utility_auc(*COLUMNS,
                                                                       SCORES))


def test_shipped_example_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(EXAMPLE_FILE), "--score", "confidence.logprob_mean",
                         "--json")
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["n"] == 24
    assert 0.0 <= result["utility_auc"] <= 1.0


# --------------------------------------------------------------------------- bad input


def _with(index: int, **change: Any) -> list[dict[str, Any]]:
    rows = [dict(r) for r in RECORDS]
    rows[index].update(change)
    for k, v in change.items():
        if v is _DROP:
            del rows[index][k]
    return rows


_DROP = object()


@pytest.mark.parametrize(
    ("rows", "extra", "needles"),
    [
        pytest.param(_with(1, answered=_DROP), (), ("row 2", "'answered'"),
                     id="missing-field"),
        pytest.param(_with(0, cost=_DROP), (), ("row 1", "'cost'"), id="missing-cost"),
        pytest.param(_with(2, cost=0.0), (), ("row 3", "'cost'", "> 0"), id="cost-zero"),
        pytest.param(_with(2, cost=-1.5), (), ("row 3", "'cost'"), id="cost-negative"),
        pytest.param(_with(3, cost=float("nan")), (), ("row 4", "'cost'", "NaN"),
                     id="cost-nan"),
        pytest.param(_with(3, cost=float("inf")), (), ("row 4", "'cost'"), id="cost-inf"),
        pytest.param(_with(0, cost="cheap"), (), ("row 1", "'cost'", "number"),
                     id="cost-text"),
        pytest.param(_with(0, cost=True), (), ("row 1", "'cost'"), id="cost-bool"),
        pytest.param(_with(4, answerable="maybe"), (), ("row 5", "'answerable'"),
                     id="answerable-text"),
        pytest.param(_with(1, answered=0.5), (), ("row 2", "'answered'"), id="answered-float"),
        pytest.param(_with(0, correct=None), (), ("row 1", "'correct'", "required"),
                     id="correct-missing-where-needed"),
        pytest.param(_with(0, correct="sometimes"), (), ("row 1", "'correct'"),
                     id="correct-text"),
        pytest.param(_with(1, confidence={}), ("--score", "confidence.logprob_mean"),
                     ("row 2", "'confidence.logprob_mean'"), id="score-missing"),
        pytest.param(_with(1, confidence={"logprob_mean": "low"}),
                     ("--score", "confidence.logprob_mean"),
                     ("row 2", "'confidence.logprob_mean'"), id="score-text"),
        pytest.param(_with(1, confidence={"logprob_mean": float("nan")}),
                     ("--score", "confidence.logprob_mean"),
                     ("row 2", "'confidence.logprob_mean'", "NaN"), id="score-nan"),
    ],
)
def test_bad_record_is_one_line_naming_file_row_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[dict[str, Any]],
    extra: tuple[str, ...], needles: tuple[str, ...],
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    code, out, err = run(capsys, str(path), *extra)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("utilityguard: error: ")
    assert str(path) in err
    for needle in needles:
        assert needle in err


def test_bad_csv_cell_names_file_row_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{k: v for k, v in r.items() if k != "confidence"} for r in RECORDS]
    rows[2]["cost"] = "nan"
    path = write_csv(tmp_path / "bad.csv", rows)
    code, _, err = run(capsys, str(path))
    assert code == 2 and err.count("\n") == 1
    assert str(path) in err and "row 3" in err and "'cost'" in err


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("make", "needles"),
    [
        pytest.param(lambda d: _write(d / "empty.jsonl", b""), ("no records",), id="empty"),
        pytest.param(lambda d: _write(d / "blank.jsonl", b"\n\n  \n"), ("no records",),
                     id="blank-lines"),
        pytest.param(lambda d: d / "missing.jsonl", ("no such file",), id="missing-file"),
        pytest.param(lambda d: _write(d / "broken.jsonl",
                                      b'{"answerable": true}\n{"answerable": tru\n'),
                     ("line 2", "invalid JSON"), id="invalid-json-line"),
        pytest.param(lambda d: _write(d / "list.jsonl", b"[1, 2]\n"),
                     ("line 1", "JSON object"), id="not-an-object"),
        pytest.param(lambda d: _write(d / "latin1.jsonl", b'{"q": "caf\xe9"}\n'),
                     ("UTF-8",), id="not-utf8"),
        pytest.param(lambda d: _write(d / "bad.parquet", b"not a parquet file"),
                     ("cannot read records",), id="bad-parquet"),
        pytest.param(lambda d: _write(d / "empty.csv", b""), ("no records",), id="empty-csv"),
    ],
)
def test_bad_file_is_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, needles: tuple[str, ...]
) -> None:
    path = make(tmp_path)
    code, out, err = run(capsys, str(path))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err
    for needle in needles:
        assert needle in err


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_bad_c_r(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", RECORDS)
    code, _, err = run(capsys, str(path), "--c-r", value)
    assert code == 2
    assert err.count("\n") == 1 and "--c-r" in err
