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


HELDOUT = GOLD.parent / "gold_heldout.jsonl"


def test_the_held_out_sample_covers_both_models_and_every_style() -> None:
    gold = read_gold(HELDOUT)
    assert len(gold) == 600 and len({(r["model"], r["id"]) for r in gold}) == 600
    models = Counter(r["model"] for r in gold)
    assert models == {"smollm2-135m-instruct": 300, "gemma-3-270m": 300}
    cells = Counter((r["model"], r["style"], r["split"]) for r in gold)
    assert len({s for _, s, _ in cells}) == 9  # eight growth styles and the original set
    assert all(n >= 6 for n in cells.values())  # both halves of every stratum
    for r in gold:
        if not r["answered"]:
            assert r["correct"] is None
        elif not r["answerable"]:
            assert r["correct"] is False


def test_the_rules_on_the_held_out_half_stay_above_the_measured_floor() -> None:
    # measured, not the goal: the goal is 97% per model (issue 22); the SmolLM2 test half
    # reached 91.9% (136/148) and Gemma 97.9% (143/146) when the rules were last changed.
    # This floor catches a rule change that loses ground on replies it was not tuned on.
    test = [r for r in read_gold(HELDOUT) if r["split"] == "test"]
    for model in ("smollm2-135m-instruct", "gemma-3-270m"):
        result = rules_vs_gold([r for r in test if r["model"] == model])
        assert result.rate >= 0.90, (model, result.table())
