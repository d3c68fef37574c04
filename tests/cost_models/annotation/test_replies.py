"""``annotate judge --replies``: recorded raw judge replies become judgments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.cli import main


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_raw_replies_are_parsed_over_the_tuple_order(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    items = _write(tmp_path / "items.jsonl", [{"id": i, "question": f"q {i}"} for i in "abcdefgh"])
    tuples = _write(tmp_path / "tuples.jsonl", [{"tuple_id": "t1", "items": ["c", "a", "d", "b"]},
                                                {"tuple_id": "t2", "items": list("efgh")}])
    replies = _write(tmp_path / "raw.jsonl", [
        {"tuple_id": "t1", "judge": "j1", "reply": "BEST: 3\nWORST: 2\nWHY: d could poison"},
        {"tuple_id": "t1", "judge": "j-repeat", "reply": "**BEST:** 1\n**WORST:** 4"},
        {"tuple_id": "t2", "judge": "j2", "reply": "BEST: 4\nWORST: 1"}])
    out = tmp_path / "judgments.jsonl"
    assert main(["annotate", "judge", "--tuples", str(tuples), "--data", str(items),
                 "--replies", str(replies), "--out", str(out)]) == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert got == [  # item 3 of t1 is "d", item 2 is "a"
        {"tuple_id": "t1", "best": "d", "worst": "a", "judge": "j1"},
        {"tuple_id": "t1", "best": "c", "worst": "b", "judge": "j-repeat"},
        {"tuple_id": "t2", "best": "h", "worst": "e", "judge": "j2"}]
    # a rerun adds nothing (every judge's reply is already in --out)
    assert main(["annotate", "judge", "--tuples", str(tuples), "--data", str(items),
                 "--replies", str(replies), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3


def test_an_unparseable_or_missing_reply_fails_that_tuple(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    items = _write(tmp_path / "items.jsonl", [{"id": i, "question": f"q {i}"} for i in "abcdefgh"])
    tuples = _write(tmp_path / "tuples.jsonl", [{"tuple_id": "t1", "items": list("abcd")},
                                                {"tuple_id": "t2", "items": list("efgh")}])
    replies = _write(tmp_path / "raw.jsonl", [
        {"tuple_id": "t1", "judge": "j1", "reply": "BEST: 2\nWORST: 2"}])
    out = tmp_path / "j.jsonl"
    assert main(["annotate", "judge", "--tuples", str(tuples), "--data", str(items),
                 "--replies", str(replies), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "2 tuple(s) failed" in printed and "two different items" in printed
    assert "no recorded reply for t2" in printed
    assert out.read_text() == ""
