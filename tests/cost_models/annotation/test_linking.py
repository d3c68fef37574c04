"""Linking tuples: frequent winners meet each other; anchors span the cost scale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cost_models.annotation.fit import Judgment
from cost_models.annotation.linking import cost_anchors, frequent_winners, most_shares
from guard.cli import main
from utilityguard_base.exceptions import InvalidValueError

TUPLES = {"t1": ["a", "b", "c", "d"], "t2": ["a", "e", "f", "g"], "t3": ["b", "e", "h", "i"]}
JUDGMENTS = [Judgment("t1", "a", "d"), Judgment("t2", "a", "g"), Judgment("t3", "e", "i"),
             Judgment("t3", "b", "i", judge="j2")]  # t3 judged twice, judges split


def test_most_shares_count_each_judgment_of_each_tuple() -> None:
    shares = most_shares(TUPLES, JUDGMENTS)
    assert shares["a"] == (2, 2)  # in t1 and t2, chosen both times
    assert shares["b"] == (1, 3)  # t1 once, t3 twice; chosen in one t3 judgment
    assert shares["e"] == (1, 3)
    assert shares["i"] == (0, 2)


def test_frequent_winners_by_share() -> None:
    assert frequent_winners(TUPLES, JUDGMENTS, 1.0) == ["a"]
    assert frequent_winners(TUPLES, JUDGMENTS, 0.3) == ["a", "b", "e"]
    assert frequent_winners(TUPLES, JUDGMENTS, 0.3, ids=["a", "e"]) == ["a", "e"]
    with pytest.raises(InvalidValueError):
        frequent_winners(TUPLES, JUDGMENTS, 0.0)
    with pytest.raises(InvalidValueError, match="unknown tuple"):
        most_shares(TUPLES, [Judgment("t9", "a", "b")])


def test_anchors_are_spread_over_the_cost_scale() -> None:
    costs = {f"x{n:03d}": float(n) for n in range(200)}  # cost = rank
    anchors = cost_anchors(costs, 20, seed=3)
    assert len(set(anchors)) == 20
    # two per decile of 20 items each
    assert sorted(int(a[1:]) // 20 for a in anchors) == sorted(list(range(10)) * 2)
    assert anchors == sorted(anchors, key=lambda a: costs[a])
    assert cost_anchors(costs, 20, seed=3) == anchors  # the seed fixes the draw
    # 13 over 10 bins: one per bin, the 3 extra from the top bins
    assert sorted(int(a[1:]) // 20 for a in cost_anchors(costs, 13, seed=1)) == \
        [0, 1, 2, 3, 4, 5, 6, 7, 7, 8, 8, 9, 9]
    with pytest.raises(InvalidValueError):
        cost_anchors(costs, 0, seed=0)


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_link_and_anchored_tuples(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    ids = [f"q{n}" for n in range(12)]
    items = _write(tmp_path / "items.jsonl", [
        {"id": i, "question": f"question {i}", "group": "high" if n < 6 else "low",
         "cost": float(n + 1)} for n, i in enumerate(ids)])
    tuples = _write(tmp_path / "tuples.jsonl", [
        {"tuple_id": f"t{k}", "items": ids[k * 4:k * 4 + 4]} for k in range(3)])
    # q0, q4, q8 chosen "most" every time; q1 once of two
    judgments = _write(tmp_path / "j.jsonl", [
        {"tuple_id": "t0", "best": "q0", "worst": "q3"},
        {"tuple_id": "t0", "best": "q1", "worst": "q3"},
        {"tuple_id": "t1", "best": "q4", "worst": "q7"},
        {"tuple_id": "t2", "best": "q8", "worst": "q11"}])
    out = tmp_path / "link.jsonl"
    assert main(["annotate", "link", "--tuples", str(tuples), "--judgments", str(judgments),
                 "--data", str(items), "--min-share", "0.5", "--ratio", "1", "--min-per-item",
                 "1", "--out", str(out)]) == 0
    link = [json.loads(x) for x in out.read_text().splitlines()]
    members = {i for t in link for i in t["items"]}
    assert members == {"q0", "q1", "q4", "q8"}  # share >= 0.5: q0 1/2, q1 1/2, q4 1, q8 1
    assert all(t["tuple_id"].startswith("tl") for t in link)
    assert "4 items chosen 'most'" in capsys.readouterr().out

    new = _write(tmp_path / "new.jsonl", [
        {"id": f"n{k}", "question": f"new {k}", "group": "low"} for k in range(10)])
    out2 = tmp_path / "new_tuples.jsonl"
    assert main(["annotate", "tuples", "--data", str(new), "--anchors", str(items),
                 "--anchor-share", "0.5", "--prefix", "tn", "--out", str(out2)]) == 0
    made = [json.loads(x) for x in out2.read_text().splitlines()]
    used = {i for t in made for i in t["items"]}
    anchors = used - {f"n{k}" for k in range(10)}
    assert len(anchors) == 5 and anchors <= set(ids)  # half as many anchors as new items
    assert len(made) == round(1.25 * 15)
    assert all(t["tuple_id"].startswith("tn") for t in made)
    assert "(5 of them anchors" in capsys.readouterr().out

    clash = _write(tmp_path / "clash.jsonl", [{"id": "q0", "question": "x", "group": "low"}] +
                   [{"id": f"m{k}", "question": "y", "group": "low"} for k in range(4)])
    assert main(["annotate", "tuples", "--data", str(clash), "--anchors", str(items),
                 "--out", str(tmp_path / "c.jsonl")]) == 2
    assert "ids also in" in capsys.readouterr().err
