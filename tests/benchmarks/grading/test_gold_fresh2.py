"""The fourth gold sample (issue 22): its shape, its readers, and nothing shared with earlier
samples. Agreement on it is measured once, after the last rule change."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.grading.agreement import read_gold, rules_vs_gold

DATA = Path(__file__).resolve().parents[1] / "data"
FRESH2 = DATA / "gold_fresh2.jsonl"
EARLIER = ("gold_grades.jsonl", "gold_heldout.jsonl", "gold_fresh.jsonl")


def test_the_fourth_sample_covers_both_models_and_every_style_and_names_its_readers() -> None:
    gold = read_gold(FRESH2)
    assert len(gold) == 612 and len({(r["model"], r["id"]) for r in gold}) == 612
    cells = Counter((r["model"], r["style"]) for r in gold)
    assert len(cells) == 18
    assert {n for (m, _), n in cells.items() if m == "smollm2-135m-instruct"} == {40}
    assert {n for (m, _), n in cells.items() if m == "gemma-3-270m"} == {28}
    for (model, style), n in cells.items():  # half answerable in every stratum
        answerable = sum(1 for r in gold
                         if (r["model"], r["style"]) == (model, style) and r["answerable"])
        assert answerable == n // 2
    assert {r["split"] for r in gold} == {"test"}
    assert {r["reader"] for r in gold} == {f"claude-reader-g{k}" for k in range(1, 6)}
    earlier = {(r.get("model", "smollm2-135m-instruct"), r["id"])
               for name in EARLIER for r in read_gold(DATA / name)}
    assert not earlier & {(r["model"], r["id"]) for r in gold}
    for r in gold:
        if not r["answered"]:
            assert r["correct"] is None
        elif not r["answerable"]:
            assert r["correct"] is False
        else:
            assert isinstance(r["correct"], bool)


def test_the_fourth_sample_is_the_selected_records_with_grades_added() -> None:
    graded = read_gold(FRESH2)
    selected = read_gold(DATA / "gold_fresh2_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in graded] == selected


def test_the_rules_on_the_fourth_sample_stay_at_the_measured_level() -> None:
    # a regression floor at the level measured once, after the last rule change (d2d7b08):
    # SmolLM2 334/360 (92.8%), Gemma 250/252 (99.2%). The goal (97% per model) is not met
    # for SmolLM2; a later change that loses any of these records fails here.
    gold = read_gold(FRESH2)
    for model, floor in (("smollm2-135m-instruct", 334), ("gemma-3-270m", 250)):
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor, (model, result.table())
