"""Loading UtilityBench-shaped data from files the tests write: column mapping, validation
with messages that name the file, row and field, and the offline Hugging Face path."""

from __future__ import annotations

import csv
import json
import math
import socket
import sys
import time
import types
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cost_models import datasets
from cost_models.datasets import DatasetItem, load_utilitybench, read_rows, resolve_columns
from guard.exceptions import DatasetError

ODD = {
    "prompt_text": ["How many mg of acetaminophen a day?", "Capital of Peru?", "Who wins?"],
    "L_value": [40.0, 0.2, 1.5],
    "should_abstain": [False, False, True],
    "uid": ["m1", "g1", "x1"],
    "gold": [["4000 mg", "4 g"], ["Lima"], []],
    "extra_note": ["a", "b", "c"],
}


def _parquet(path: Path, columns: dict[str, list[Any]]) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _csv(path: Path, rows: list[dict[str, Any]], encoding: str = "utf-8") -> Path:
    with path.open("w", newline="", encoding=encoding) as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_parquet_with_odd_columns_loads_with_explicit_columns(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "bench.parquet", ODD)
    items = load_utilitybench(path, {"question": "prompt_text", "cost": "L_value"})
    assert [it.id for it in items] == ["m1", "g1", "x1"]
    assert [it.question for it in items] == ODD["prompt_text"]
    assert [it.cost for it in items] == [40.0, 0.2, 1.5]
    # should_abstain is inverted into answerable
    assert [it.answerable for it in items] == [True, True, False]
    assert items[0].reference == ["4000 mg", "4 g"]
    assert items[2].reference == []
    # unmapped columns are kept as extra fields
    assert items[1].model_dump()["extra_note"] == "b"
    assert "prompt_text" not in items[0].model_dump()


def test_parquet_loads_by_name_candidates(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "bench.parquet", {
        "Prompt": ["q one?", "q two?"], "L": [3.0, 0.5], "Is_Answerable": [1, 0],
        "Subject": ["law", "math"], "Dataset": ["legalbench", "gsm8k"],
        "answers": [["x"], ["7"]], "answer_format": ["text", "number"],
    })
    items = load_utilitybench(path)
    assert [it.question for it in items] == ["q one?", "q two?"]
    assert [it.cost for it in items] == [3.0, 0.5]
    assert [it.answerable for it in items] == [True, False]
    assert [it.domain for it in items] == ["law", "math"]
    assert [it.source for it in items] == ["legalbench", "gsm8k"]
    assert [it.answer_type for it in items] == ["text", "number"]
    assert [it.id for it in items] == ["1", "2"]  # no id column: the row number


@pytest.mark.parametrize(
    ("column", "values", "expected"),
    [
        pytest.param("should_abstain", ["true", "false"], [False, True], id="should_abstain"),
        pytest.param("unanswerable", [1, 0], [False, True], id="unanswerable"),
        pytest.param("needs_refusal", ["yes", "no"], [False, True], id="needs_refusal"),
        pytest.param("answerable", ["Y", "n"], [True, False], id="answerable-letters"),
    ],
)
def test_answerability_columns(tmp_path: Path, column: str, values: list[Any],
                               expected: list[bool]) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [
        {"question": "q?", "cost": 1.0, column: v} for v in values])
    assert [it.answerable for it in load_utilitybench(path)] == expected


def test_explicit_answerable_column_wins_over_candidates(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [
        {"question": "q?", "cost": 1.0, "answerable": True, "ok_to_answer": False}])
    (item,) = load_utilitybench(path, {"answerable": "ok_to_answer"})
    assert item.answerable is False


def test_csv_with_json_list_references(tmp_path: Path) -> None:
    path = _csv(tmp_path / "d.csv", [
        {"id": "a", "question": "Largest planet?", "cost": "0.5", "answerable": "true",
         "reference": json.dumps(["Jupiter", "jupiter (planet)"]), "answer_type": "text"},
        {"id": "b", "question": "Dose?", "cost": "12", "answerable": "False",
         "reference": "", "answer_type": "number"},
        {"id": "c", "question": "2+2?", "cost": "1e-1", "answerable": "1",
         "reference": "4", "answer_type": "number"},
    ])
    items = load_utilitybench(path)
    assert items[0].reference == ["Jupiter", "jupiter (planet)"]
    assert items[1].reference == []
    assert items[2].reference == ["4"]
    assert [it.cost for it in items] == [0.5, 12.0, 0.1]
    assert [it.answerable for it in items] == [True, False, True]


def test_csv_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = _csv(tmp_path / "excel.csv", [
        {"id": "a1", "question": "q?", "cost": "2", "answerable": "true"}], encoding="utf-8-sig")
    (item,) = load_utilitybench(path)
    assert item.id == "a1"


def test_json_list_file(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps([{"question": "q?", "cost": 2, "answerable": True}]))
    assert load_utilitybench(path)[0].cost == 2.0


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        pytest.param("d.jsonl", '{"question": "q"}\n{oops\n', r"d.jsonl, line 2: invalid JSON",
                     id="jsonl-bad-line"),
        pytest.param("d.jsonl", '{"question": "q"}\n[1, 2]\n',
                     r"d.jsonl, line 2: expected a JSON object", id="jsonl-not-object"),
        pytest.param("d.json", '[{"question": "q"},', r"d.json: invalid JSON", id="json-bad"),
        pytest.param("d.json", "[1, 2]", r"d.json: expected a JSON list of objects",
                     id="json-not-objects"),
    ],
)
def test_unreadable_files_name_the_file(tmp_path: Path, name: str, text: str,
                                        match: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(DatasetError, match=match):
        read_rows(tmp_path / name)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"nope\.parquet: no such file"):
        load_utilitybench(tmp_path / "nope.parquet")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    with pytest.raises(DatasetError, match=r"empty\.jsonl: no rows"):
        load_utilitybench(path)


def test_unknown_layout_lists_the_columns_found(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "odd.parquet", {"prompt_text": ["q?"], "L_value": [1.0],
                                               "verdict": ["ok"]})
    with pytest.raises(DatasetError, match=(
            r"cannot map required field\(s\) question, cost, answerable \(or should_abstain\); "
            r"columns found: prompt_text, L_value, verdict")):
        load_utilitybench(path)


def test_explicit_column_that_does_not_exist(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "odd.parquet", ODD)
    with pytest.raises(DatasetError, match=(
            r"column 'L' given for 'cost' is not in the data; columns found: prompt_text, "
            r"L_value, should_abstain")):
        load_utilitybench(path, {"question": "prompt_text", "cost": "L"})


def test_cost_is_optional_when_not_required(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "q?", "answerable": False}])
    (item,) = load_utilitybench(path, require_cost=False)
    assert item.cost is None
    with pytest.raises(DatasetError, match=r"cannot map required field\(s\) cost"):
        load_utilitybench(path)


@pytest.mark.parametrize(
    ("row", "match"),
    [
        pytest.param({"L_value": 0.0}, r"row 2, field L_value: cost must be > 0, got 0\.0",
                     id="zero-cost"),
        pytest.param({"L_value": -3.0}, r"row 2, field L_value: cost must be > 0", id="negative"),
        pytest.param({"L_value": math.nan}, r"row 2, field L_value: cost must be > 0, got nan",
                     id="nan-cost"),
        pytest.param({"L_value": math.inf}, r"row 2, field L_value: cost must be > 0",
                     id="inf-cost"),
        pytest.param({"L_value": "high"}, r"row 2, field L_value: not a number: 'high'",
                     id="text-cost"),
        pytest.param({"L_value": None}, r"row 2, field L_value: not a number: None",
                     id="missing-cost"),
        pytest.param({"should_abstain": "maybe"},
                     r"row 2, field should_abstain: expected a boolean .*'maybe'",
                     id="non-boolean"),
        pytest.param({"should_abstain": 2}, r"row 2, field should_abstain: expected a boolean",
                     id="two-is-not-boolean"),
        pytest.param({"prompt_text": "   "}, r"row 2, field prompt_text: empty or not text",
                     id="blank-question"),
        pytest.param({"prompt_text": None}, r"row 2, field prompt_text: empty or not text",
                     id="null-question"),
        pytest.param({"answer_type": "essay"}, r"row 2: .*answer_type", id="bad-answer-type"),
    ],
)
def test_bad_rows_name_the_file_row_and_field(tmp_path: Path, row: dict[str, Any],
                                              match: str) -> None:
    good = {"prompt_text": "Fine question?", "L_value": 1.0, "should_abstain": False,
            "answer_type": "text"}
    path = _jsonl(tmp_path / "bad.jsonl", [good, {**good, **row}])
    with pytest.raises(DatasetError, match=match) as failure:
        load_utilitybench(path, {"question": "prompt_text", "cost": "L_value"})
    assert str(failure.value).startswith(f"{path}, row 2")


def test_dataset_item_contract() -> None:
    item = DatasetItem(id="a", question="q?", answerable=True, cost=2.0, note="kept")
    assert item.model_dump()["note"] == "kept"
    assert (item.domain, item.source, item.reference, item.answer_type) == (
        "unknown", "unknown", [], "text")
    with pytest.raises(ValueError, match=r"cost must be a finite number > 0"):
        DatasetItem(id="a", question="q?", answerable=True, cost=0.0)
    with pytest.raises(ValueError, match="frozen"):
        item.cost = 3.0  # type: ignore[misc]


def test_resolve_columns_prefers_exact_names_then_case_insensitive() -> None:
    mapping = resolve_columns(["Question", "question", "COST", "Should_Abstain"])
    assert mapping["question"] == "question"
    assert mapping["cost"] == "COST"
    assert mapping["_inverted_answerable"] == "Should_Abstain"


def test_resolve_columns_lists_none_for_no_columns() -> None:
    with pytest.raises(DatasetError, match=r"columns found: \(none\)"):
        resolve_columns([])


def _without_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # import datasets -> ImportError


@pytest.mark.parametrize("source", ["hf:leiqf/UtilityBench", "leiqf/UtilityBench"])
def test_hugging_face_without_the_datasets_package_fails_fast(
    monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    _without_datasets(monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dialled = _record_connections(monkeypatch)
    with pytest.raises(DatasetError, match=r"hf:leiqf/UtilityBench: .*'datasets' package"):
        load_utilitybench(source)
    assert dialled == []  # fast: nothing tried the network (no wall-clock bound needed)


def _record_connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every connection or sleep the code under test attempts (none is made)."""
    dialled: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        dialled.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(time, "sleep", refuse)
    return dialled


def _fake_datasets(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    module = types.ModuleType("datasets")

    def load_dataset(name: str, split: str) -> list[dict[str, Any]]:
        calls.append(name)
        raise ConnectionError(f"Couldn't reach '{name}' on the Hub (LocalEntryNotFoundError)")

    module.load_dataset = load_dataset  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", module)


def test_hugging_face_offline_gives_a_dataset_error_quickly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    _fake_datasets(monkeypatch, calls)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dialled = _record_connections(monkeypatch)
    with pytest.raises(DatasetError, match=r"hf:leiqf/UtilityBench: could not load split "
                                           r"'train': Couldn't reach"):
        load_utilitybench("hf:leiqf/UtilityBench")
    assert dialled == []  # quickly: no probe, no retry, no wait
    assert calls == ["leiqf/UtilityBench"]


def test_hugging_face_unreachable_is_checked_before_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    _fake_datasets(monkeypatch, calls)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    probes: list[tuple[tuple[str, int], float]] = []

    def unreachable(address: tuple[str, int], timeout: float) -> None:
        probes.append((address, timeout))
        raise OSError("Name or service not known")

    monkeypatch.setattr(datasets.socket, "create_connection", unreachable)
    with pytest.raises(DatasetError, match="Hugging Face is not reachable"):
        load_utilitybench("hf:leiqf/UtilityBench", timeout=0.5)
    assert probes == [(("huggingface.co", 443), 0.5)]
    assert calls == []


def test_hugging_face_rows_are_mapped_like_files(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("datasets")
    module.load_dataset = lambda name, split: [  # type: ignore[attr-defined]
        {"prompt": "q?", "L": 4.0, "should_refuse": False}]
    monkeypatch.setitem(sys.modules, "datasets", module)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (item,) = load_utilitybench("hf:owner/name", split="test")
    assert (item.question, item.cost, item.answerable) == ("q?", 4.0, True)


def test_a_local_path_with_a_slash_is_not_a_hugging_face_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_datasets(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    _jsonl(tmp_path / "data" / "items.jsonl", [{"question": "q?", "cost": 1, "answerable": 1}])
    assert load_utilitybench("data/items.jsonl")[0].cost == 1.0
    with pytest.raises(DatasetError, match="no such file"):
        load_utilitybench("data/missing.jsonl")
