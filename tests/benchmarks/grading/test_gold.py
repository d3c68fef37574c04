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


def test_the_rules_on_the_tuning_samples_stay_at_the_measured_level() -> None:
    # since the fourth sample, all three seen samples are tuning data: the rules of issue 22
    # were changed on them; the first two agree with 886 of 900: 294 of the first 300, 592 of
    # the second 600 (SmolLM2 292/300, Gemma 300/300)
    first, second = read_gold(GOLD), read_gold(HELDOUT)
    assert rules_vs_gold(first).agree >= 294
    for model, floor in (("smollm2-135m-instruct", 292), ("gemma-3-270m", 300)):
        result = rules_vs_gold([r for r in second if r["model"] == model])
        assert result.agree >= floor, (model, result.table())


FRESH = GOLD.parent / "gold_fresh.jsonl"


def test_the_fresh_sample_covers_both_models_and_every_style_and_names_its_readers() -> None:
    gold = read_gold(FRESH)
    assert len(gold) == 548 and len({(r["model"], r["id"]) for r in gold}) == 548
    assert len({r["id"] for r in gold}) < 548  # ids repeat across models: keyed by (id, model)
    cells = Counter((r["model"], r["style"]) for r in gold)
    assert len(cells) == 18 and min(cells.values()) >= 24
    assert {r["split"] for r in gold} == {"test"}
    assert {r["reader"] for r in gold} == {f"claude-reader-f{k}" for k in range(1, 5)}
    earlier = {(r.get("model", "smollm2-135m-instruct"), r["id"])
               for r in read_gold(GOLD) + read_gold(HELDOUT)}
    assert not earlier & {(r["model"], r["id"]) for r in gold}
    for r in gold:
        if not r["answered"]:
            assert r["correct"] is None
        elif not r["answerable"]:
            assert r["correct"] is False


def test_the_rules_on_the_fresh_sample_stay_at_the_measured_level() -> None:
    # measured once after the third round's last rule change: SmolLM2 277/296 (93.6%), Gemma
    # 247/252 (98.0%). The fourth round tuned the rules on this sample too (it is seen data
    # now): SmolLM2 288/296, Gemma 252/252. A rule change that loses any of these fails here.
    gold = read_gold(FRESH)
    for model, floor in (("smollm2-135m-instruct", 288), ("gemma-3-270m", 252)):
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor, (model, result.table())


def test_disagreements_are_keyed_by_model_and_id() -> None:
    gold = read_gold(FRESH)
    result = rules_vs_gold(gold)
    n = result.total - result.agree
    assert len(set(result.disagreements)) == len(result.disagreements) == n
