"""The rule grader against the gold sample: 300 SmolLM2 records graded by reading."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.grading.agreement import Agreement, main, read_gold, rules_vs_gold

GOLD = Path(__file__).resolve().parents[1] / "data" / "gold_grades.jsonl"


def test_the_gold_sample_is_stratified_and_complete() -> None:
    gold = read_gold(GOLD)
    assert len(gold) >= 300
    assert len({r["id"] for r in gold}) == len(gold)
    kinds = Counter((r["answer_type"], r["answerable"]) for r in gold)
    assert {k for k, _ in kinds} == {"choice", "text", "number", "code"}
    assert all(n >= 5 for n in kinds.values())
    assert len({r["domain"] for r in gold}) == 8
    for r in gold:  # an abstention has no correctness; an answer to a refusal item is wrong
        assert r["question"] and isinstance(r["reference"], list)
        if not r["answered"]:
            assert r["correct"] is None
        elif not r["answerable"]:
            assert r["correct"] is False


def test_the_rules_agree_with_the_gold_sample() -> None:
    result = rules_vs_gold(read_gold(GOLD))
    assert result.total >= 300
    assert result.rate >= 0.97, result.table()


def test_agreement_counts_both_fields() -> None:
    a = Agreement()
    a.add("x", "text", (True, True), (True, True))
    a.add("y", "text", (True, False), (True, True))
    a.add("z", "number", (False, None), (True, False))
    assert (a.agree, a.total, a.by_type) == (1, 3, {"text": [1, 2], "number": [0, 1]})
    assert a.disagreements == ["y", "z"]
    assert "| **all** | 1 | 3 | 33.3% |" in a.table()


def test_the_agreement_command_prints_the_table(capsys: object) -> None:
    assert main([str(GOLD)]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "| **all** |" in out and "disagreements:" in out
