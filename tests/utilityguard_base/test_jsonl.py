"""The one JSONL reader and writer (utilityguard_base.jsonl): expectations written from the
format."""

from __future__ import annotations

from pathlib import Path

import pytest

from utilityguard_base.exceptions import CollectError, DatasetError
from utilityguard_base.jsonl import append_jsonl, numbered_jsonl, read_jsonl, write_jsonl


def test_rows_round_trip_with_text_kept_as_written(tmp_path: Path) -> None:
    rows = [{"id": "a", "q": "Ist 3 > 2? — ja", "n": 1.5}, {"id": "b", "nested": {"x": [1]}}]
    path = tmp_path / "r.jsonl"
    assert write_jsonl(path, rows) == 2
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") == 2 and "— ja" in text  # one line a row, not \u-escaped
    assert read_jsonl(path) == rows
    assert not list(tmp_path.glob("*.tmp"))  # the temporary file was moved into place


def test_blank_lines_are_skipped_and_lines_keep_their_numbers() -> None:
    text = '{"a": 1}\n\n   \n{"a": 2}\n'
    assert numbered_jsonl(text, "t.jsonl") == [(1, {"a": 1}), (4, {"a": 2})]


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": 1}\n{"a": ', r"t\.jsonl, line 2: invalid JSON"),
    ('{"a": 1}\n\n"just a string"\n', r"t\.jsonl, line 3: expected a JSON object"),
])
def test_a_bad_line_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        read_jsonl(path)
    with pytest.raises(CollectError, match=message):  # the caller's own error class
        read_jsonl(path, CollectError)


def test_an_unreadable_file_is_an_error_of_the_tree(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"missing\.jsonl: cannot read"):
        read_jsonl(tmp_path / "missing.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"a": "\xe9"}\n')
    with pytest.raises(DatasetError, match="cannot read"):
        read_jsonl(tmp_path / "latin1.jsonl")


def test_append_adds_one_line_a_row(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    with path.open("a", encoding="utf-8") as f:
        append_jsonl(f, {"id": 1})
        append_jsonl(f, {"id": 2}, durable=True)
    assert path.read_text(encoding="utf-8") == '{"id": 1}\n{"id": 2}\n'
