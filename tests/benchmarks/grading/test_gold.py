"""The rule grader against the gold sample: 300 SmolLM2 records graded by reading."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading.agreement import (
    Agreement,
    main,
    read_gold,
    reading_vs_gold,
    rules_vs_gold,
)

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
    assert_grades_consistent(gold)


def test_the_rules_on_the_tuning_samples_stay_at_the_measured_level() -> None:
    # since the fourth sample, all three seen samples are tuning data: the rules of issue 22
    # were changed on them; the first two agreed with 886 of 900. Issue 35's rules (tuned on
    # them again) agree with 892: 298 of the first 300, 594 of the second 600 (SmolLM2
    # 294/300, Gemma 300/300)
    first, second = read_gold(GOLD), read_gold(HELDOUT)
    assert rules_vs_gold(first).agree >= 298
    for model, floor in (("smollm2-135m-instruct", 294), ("gemma-3-270m", 300)):
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
    assert_grades_consistent(gold)


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


def assert_grades_consistent(gold: list[dict[str, Any]]) -> None:
    """An abstention has no correctness, an answer to a refusal-required item is wrong, an
    answer to an answerable item is right or wrong."""
    for r in gold:
        if not r["answered"]:
            assert r["correct"] is None
        elif not r["answerable"]:
            assert r["correct"] is False
        else:
            assert isinstance(r["correct"], bool)


# The fourth sample (issue 22): its shape, its readers, nothing shared with earlier samples;
# agreement on it measured once, after the last rule change.

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
    assert_grades_consistent(gold)


def test_the_fourth_sample_is_the_selected_records_with_grades_added() -> None:
    graded = read_gold(FRESH2)
    selected = read_gold(DATA / "gold_fresh2_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in graded] == selected


def test_the_rules_on_the_fourth_sample_stay_at_the_measured_level() -> None:
    # measured once after issue 22's last rule change (d2d7b08): SmolLM2 334/360 (92.8%),
    # Gemma 250/252 (99.2%). Issue 35 used it as tuning data: SmolLM2 339/360, Gemma 250/252.
    # A later change that loses any of these records fails here.
    gold = read_gold(FRESH2)
    for model, floor in (("smollm2-135m-instruct", 339), ("gemma-3-270m", 250)):
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor, (model, result.table())


def test_a_second_reading_is_compared_record_by_record(tmp_path: Path) -> None:
    gold = [{"id": "a", "model": "m", "answer_type": "text", "answered": True, "correct": True},
            {"id": "a", "model": "n", "answer_type": "text", "answered": False, "correct": None},
            {"id": "b", "model": "m", "answer_type": "choice", "answered": True,
             "correct": False}]
    other = [{"id": "b", "model": "m", "answered": True, "correct": False},
             {"id": "a", "model": "n", "answered": True, "correct": False},  # disagrees
             {"id": "a", "model": "m", "answered": True, "correct": True}]
    result = reading_vs_gold(gold, other)
    assert (result.agree, result.total, result.disagreements) == (2, 3, ["n:a"])
    with pytest.raises(ValueError, match="no grade for m:b"):
        reading_vs_gold(gold, other[1:])


def test_the_second_reading_of_the_fourth_sample_covers_it_and_names_its_readers() -> None:
    # four readers who had read none of the samples graded all 612 records again, blind to
    # the first reading; measured once: SmolLM2 356/360, Gemma 252/252
    repeat = read_gold(DATA / "gold_fresh2_repeat.jsonl")
    assert {(r["id"], r["model"]) for r in repeat} == {
        (r["id"], r["model"]) for r in read_gold(FRESH2)} and len(repeat) == 612
    assert {r["reader"] for r in repeat} == {f"claude-reader-r{k}" for k in range(1, 5)}
    result = reading_vs_gold(read_gold(FRESH2), repeat, ("model",))
    assert result.by_type["smollm2-135m-instruct"][0] >= 356
    assert result.by_type["gemma-3-270m"][0] == 252


# The fifth sample (issue 35): the strong model and the two tiny models, 240 records each,
# drawn to measure the precision of "correct", split in tune and test halves before any rule
# changed; the rules of issue 35 were changed on the tune halves (and the four samples above),
# then the test halves were scored once.

STRONG = DATA / "gold_strong.jsonl"
MODELS = ("claude-blind", "gemma-3-270m", "smollm2-135m-instruct")


def test_the_fifth_sample_covers_three_models_in_two_halves_and_names_its_reader() -> None:
    gold = read_gold(STRONG)
    assert len(gold) == 720 and len({(r["model"], r["id"]) for r in gold}) == 720
    assert Counter(r["model"] for r in gold) == {m: 240 for m in MODELS}
    halves = Counter((r["model"], r["split"]) for r in gold)
    assert all(119 <= halves[(m, h)] <= 121 for m in MODELS for h in ("tune", "test"))
    assert {r["reader"] for r in gold} == {"claude-reader-i35"}
    earlier = {(r.get("model", "smollm2-135m-instruct"), r["id"])
               for name in (*EARLIER, "gold_fresh2.jsonl") for r in read_gold(DATA / name)}
    assert not earlier & {(r["model"], r["id"]) for r in gold}
    assert_grades_consistent(gold)
    for model in MODELS:  # enough replies read as right to measure precision on "correct"
        assert sum(1 for r in gold if r["model"] == model and r["correct"]) >= 80


def test_the_fifth_sample_is_the_selected_records_with_grades_added() -> None:
    graded = read_gold(STRONG)
    selected = read_gold(DATA / "gold_strong_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in graded] == selected


# Measured once on the test halves after the last rule change (at c1d5cd4; the one later
# change, a thousands-comma fix, moves no gold record): record agreement and precision of
# "correct" per model. Each floor is the level reached or 97%, whichever is lower:
#   claude-blind  agreement 113/120 (94.2%, below 97%: floor 113)   precision 80/80 (floor 97%)
#   gemma-3-270m  agreement 117/119 (98.3%: floor 97%)              precision 51/52 (floor 97%)
#   smollm2       agreement 106/119 (89.1%, below 97%: floor 106)   precision 39/47 (floor 39/47)
# The rules changed after the sixth sample was drawn were written on both halves (the test
# halves are tuning data since then): claude-blind 120/120, SmolLM2 114/119 and 40/43 now;
# the floors hold that level (or 97%, whichever is lower).
TEST_FLOORS = {"claude-blind": (0.97, 0.97), "gemma-3-270m": (0.97, 0.97),
               "smollm2-135m-instruct": (114 / 119, 40 / 43)}


def test_the_rules_on_the_fifth_samples_test_halves_stay_at_the_measured_level() -> None:
    gold = [r for r in read_gold(STRONG) if r["split"] == "test"]
    for model, (agreement, precision) in TEST_FLOORS.items():
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        right, credited = result.precision()
        assert result.agree / result.total >= agreement - 1e-9, (model, result.table())
        assert credited and right / credited >= precision - 1e-9, (model, result.table())


def test_the_rules_on_the_fifth_samples_tune_halves_stay_at_the_tuned_level() -> None:
    # tuning data: how well the rules fit what they were changed on (claude-blind 120/120,
    # Gemma 121/121, SmolLM2 114/121; precision 80/80, 52/52, 42/47)
    gold = [r for r in read_gold(STRONG) if r["split"] == "tune"]
    for model, floor, right_floor in (("claude-blind", 120, 80), ("gemma-3-270m", 121, 52),
                                      ("smollm2-135m-instruct", 114, 42)):
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor and result.precision()[0] >= right_floor, result.table()


def test_precision_counts_only_what_the_rules_credit() -> None:
    a = Agreement()
    a.add("x", "m", (True, True), (True, True))
    a.add("y", "m", (True, True), (True, False))
    a.add("z", "m", (True, False), (True, True))  # a miss, not a false credit
    a.add("w", "n", (False, None), (False, None))
    assert a.precision("m") == (1, 2) and a.precision("n") == (0, 0) and a.precision() == (1, 2)
    table = a.table("model")
    assert "| m | 1 | 3 | 33.3% |" in table and "| 2 | 1 | 50.0% |" in table
    assert "| n | 1 | 1 | 100.0% | 20.7%-100.0% | 0 | 0 | - | - |" in table


def test_the_agreement_command_can_hide_which_records_disagree(capsys: object) -> None:
    assert main([str(STRONG), "--split", "test", "--by", "model", "--no-list"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "precision of correct" in out and "disagreements:" not in out


def test_a_stratified_sample_is_weighed_back_to_its_population(tmp_path: Path) -> None:
    # two strata of one model: the credited replies (share 0.2 of the model's replies), all
    # four read as the rules grade them, and the others (share 0.8), one of two agreeing: a
    # random sample would agree 0.2 * 4/4 + 0.8 * 1/2 = 0.6, not the unweighted 5/6
    from benchmarks.grading.agreement import weighted_agreement

    def rec(i: int, answered: bool, correct: bool | None) -> dict[str, Any]:
        return {"id": f"q{i}", "model": "m", "answer_type": "text", "answerable": True,
                "question": "What is the capital of France?", "reference": ["Paris"],
                "response": "The capital of France is Paris.", "answered": answered,
                "correct": correct}

    # the rules grade every one of these replies (answered, correct)
    gold = [rec(i, True, True) for i in range(5)] + [rec(5, True, False)]
    strata = [{"id": f"q{i}", "model": "m", "stratum": "correct" if i < 4 else "other",
               "share": 0.2 if i < 4 else 0.8} for i in range(6)]
    assert weighted_agreement(gold, strata) == pytest.approx({"m": 0.6})
    with pytest.raises(ValueError, match="no stratum"):
        weighted_agreement(gold, strata[:-1])


# The sixth sample (issue 35): fresh records of the three models, read by three readers who
# wrote no rule, every record a test record; its strata (the grade the rules gave when it was
# drawn) are kept apart from the readers in gold_strong2_strata.jsonl.

STRONG2 = DATA / "gold_strong2.jsonl"


def test_the_sixth_sample_is_fresh_and_names_its_readers() -> None:
    gold = read_gold(STRONG2)
    assert Counter(r["model"] for r in gold) == {"claude-blind": 120, "gemma-3-270m": 108,
                                                  "smollm2-135m-instruct": 64}
    assert len({(r["model"], r["id"]) for r in gold}) == len(gold) == 292
    assert {r["split"] for r in gold} == {"test"}
    assert {r["reader"] for r in gold} == {"claude-reader-i35-fresh"}
    earlier = {(r.get("model", "smollm2-135m-instruct"), r["id"])
               for name in (*EARLIER, "gold_fresh2.jsonl", "gold_strong.jsonl")
               for r in read_gold(DATA / name)}
    assert not earlier & {(r["model"], r["id"]) for r in gold}
    assert_grades_consistent(gold)


def test_the_sixth_sample_is_the_selected_records_with_grades_added() -> None:
    graded = read_gold(STRONG2)
    selected = read_gold(DATA / "gold_strong2_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in graded] == selected
    strata = read_gold(DATA / "gold_strong2_strata.jsonl")
    assert [(s["id"], s["model"]) for s in strata] == [(r["id"], r["model"]) for r in selected]
    for model in {s["model"] for s in strata}:  # the two strata's shares add up to one
        shares = {s["stratum"]: s["share"] for s in strata if s["model"] == model}
        assert set(shares) == {"correct", "other"}
        assert sum(shares.values()) == pytest.approx(1.0, abs=1e-5)


def test_the_rules_on_the_sixth_sample_stay_at_the_measured_level(capsys: object) -> None:
    # measured once after the rules of 47fb6b4 (the card): claude-blind 110/120, precision
    # 70/70; Gemma 107/108, 57/58; SmolLM2 61/64, 13/14. A later change that loses any of
    # these records fails here (and the sample is no longer a first look once a rule is
    # changed on it: the card must say so).
    gold = read_gold(STRONG2)
    for model, floor, right, credited in (("claude-blind", 110, 70, 70),
                                          ("gemma-3-270m", 107, 57, 58),
                                          ("smollm2-135m-instruct", 61, 13, 14)):
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor, (model, result.table())
        got_right, got_credited = result.precision()
        assert got_right >= right and got_credited - got_right <= credited - right, \
            (model, result.table())
    assert main([str(STRONG2), "--by", "model", "--no-list", "--strata",
                 str(DATA / "gold_strong2_strata.jsonl")]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    # 90.9% weighted when measured; 94.0% since the tenth round's rules read three more of
    # its records as the reader did (premise rejections, a contested value question)
    assert "strata weighted by their shares" in out and "claude-blind 94.0%" in out


def test_the_second_reading_of_the_sixth_sample_covers_it_and_agrees() -> None:
    # the second reading, compared once: 291 of 292 records graded alike (the card)
    gold = read_gold(STRONG2)
    second = read_gold(DATA / "gold_strong2_second.jsonl")
    assert {r["reader"] for r in second} == {"claude-reader-i35-second"}
    assert sorted((r["model"], r["id"]) for r in second) == \
        sorted((r["model"], r["id"]) for r in gold)
    result = reading_vs_gold(gold, second, ("model",))
    assert result.agree >= 291 and result.disagreements == ["smollm2-135m-instruct:sci-r-008"]


@pytest.mark.parametrize("number, name, before", [("seventh", "gold_strong3", ("gold_strong2",)),
                                                  ("eighth", "gold_strong4",
                                                   ("gold_strong2", "gold_strong3"))])
def test_the_seventh_and_eighth_samples_are_fresh_strong_model_records(
        number: str, name: str, before: tuple[str, ...]) -> None:
    gold = read_gold(DATA / f"{name}.jsonl")
    assert len(gold) == 150 and {r["model"] for r in gold} == {"claude-blind"}
    assert {r["reader"] for r in gold} == {f"claude-reader-i35-{number}-{k}" for k in (1, 2)}
    assert {r["split"] for r in gold} == {"test"}
    earlier = {(r.get("model", "smollm2-135m-instruct"), r["id"])
               for f in (*EARLIER, "gold_fresh2.jsonl", "gold_strong.jsonl",
                         *(f"{b}.jsonl" for b in before))
               for r in read_gold(DATA / f)}
    assert not earlier & {(r["model"], r["id"]) for r in gold}
    assert_grades_consistent(gold)
    selected = read_gold(DATA / f"{name}_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in gold] == selected
    strata = read_gold(DATA / f"{name}_strata.jsonl")
    assert Counter(s["stratum"] for s in strata) == {"correct": 50, "other": 100}


def test_the_rules_on_the_seventh_sample_stay_at_the_level_reached() -> None:
    # the seventh sample (gold_strong3.jsonl) is tuning data since the third round of rules:
    # held at the level the rules reach there (claude-blind 150/150, precision 50/50)
    gold = read_gold(DATA / "gold_strong3.jsonl")
    result = rules_vs_gold(gold)
    assert result.agree >= 150, result.table()
    assert result.precision() == (50, 50), result.table()


def test_the_rules_on_the_eighth_sample_stay_at_the_measured_level() -> None:
    # measured once after the third round of rules (the card): 143/150, precision 50/50
    result = rules_vs_gold(read_gold(DATA / "gold_strong4.jsonl"))
    assert result.agree >= 143, result.table()
    assert result.precision() == (50, 50), result.table()


def test_the_ninth_sample_is_the_fresh_smollm2_collection_read_by_three_readers() -> None:
    gold = read_gold(DATA / "gold_smollm2_fresh.jsonl")
    assert len(gold) == 187 and {r["model"] for r in gold} == {"smollm2-135m-instruct-t0.7"}
    assert {r["reader"] for r in gold} == {f"claude-reader-i35-ninth-{k}" for k in (1, 2, 3)}
    assert {r["split"] for r in gold} == {"test"}
    assert_grades_consistent(gold)
    selected = read_gold(DATA / "gold_smollm2_fresh_sample.jsonl")
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in gold] == selected
    strata = read_gold(DATA / "gold_smollm2_fresh_strata.jsonl")
    assert Counter(s["stratum"] for s in strata) == {"correct": 87, "other": 100}


def test_the_rules_on_the_ninth_sample_stay_at_the_measured_level() -> None:
    # measured once, with the rules of 72d763f (the card): 155/187, precision 63/87 — far
    # below the 97% goal; the floor only keeps a rule change from making it worse (the tenth
    # round was written on it: 164/187, 63/80 since, a tuning figure)
    result = rules_vs_gold(read_gold(DATA / "gold_smollm2_fresh.jsonl"))
    assert result.agree >= 155, result.table()
    right, credited = result.precision()
    assert credited <= 87 and right >= 63, result.table()


TENTH = DATA / "gold_tenth.jsonl"
ELEVENTH = DATA / "gold_eleventh.jsonl"


def assert_read_selection(name: str, models: dict[str, int], reader: str,
                          strata: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    """The gold file ``name`` is its selection (``<name>_sample.jsonl``, record for record) with
    a reader's grades added, ``models`` records per model, read by ``reader``-1 to -8, its
    strata as ``<name>_strata.jsonl`` counts them; returns the gold records."""
    gold = read_gold(DATA / f"{name}.jsonl")
    assert Counter(r["model"] for r in gold) == models
    assert len({(r["id"], r["model"]) for r in gold}) == sum(models.values())
    assert {r["reader"] for r in gold} == {f"{reader}-{k}" for k in range(1, 9)}
    assert {r["split"] for r in gold} == {"test"}
    assert_grades_consistent(gold)
    grade_keys = {"answered", "correct", "note", "reader"}
    assert [{k: v for k, v in r.items() if k not in grade_keys} for r in gold] == read_gold(
        DATA / f"{name}_sample.jsonl")
    assert Counter((s["model"], s["stratum"]) for s in read_gold(
        DATA / f"{name}_strata.jsonl")) == strata
    return gold


def assert_floors(gold: list[dict[str, Any]], floors: dict[str, tuple[int, int, int]]) -> None:
    """Per model: at least ``agree`` records agree, at least ``right`` credits are right and no
    more credits are wrong than ``credited - right`` (``floors[model] = (agree, right,
    credited)``)."""
    for model, (floor, right, credited) in floors.items():
        result = rules_vs_gold([r for r in gold if r["model"] == model])
        assert result.agree >= floor, (model, result.table())
        got_right, got_credited = result.precision()
        assert got_right >= right and got_credited - got_right <= credited - right, \
            (model, result.table())


def test_the_tenth_sample_is_the_selection_read_by_eight_readers() -> None:
    assert_read_selection(
        "gold_tenth", {"smollm2-135m-instruct-t0.7": 198, "claude-blind-fresh": 300},
        "claude-reader-i35-tenth",
        {("smollm2-135m-instruct-t0.7", "correct"): 98,
         ("smollm2-135m-instruct-t0.7", "other"): 100, ("claude-blind-fresh", "all"): 300})


def test_the_rules_on_the_tenth_sample_stay_at_the_measured_level() -> None:
    # measured once, with the rules of 78f3fc9 (the card): SmolLM2 174/198, precision 80/98;
    # the strong model 271/300, precision 152/152. Below the 97% goal for both; the floors
    # keep a rule change from making it worse unseen (the eleventh round was written on it:
    # 179/198, 80/93 and 282/300, 154/154 since, tuning figures)
    assert_floors(read_gold(TENTH), {"smollm2-135m-instruct-t0.7": (174, 80, 98),
                                     "claude-blind-fresh": (271, 152, 152)})


def test_the_eleventh_sample_is_the_selection_read_by_eight_readers() -> None:
    gold = assert_read_selection(
        "gold_eleventh", {"smollm2-135m-instruct-t0.7-again": 177, "gemma-3-270m-t0.7": 127,
                          "claude-blind-fresh": 285},
        "claude-reader-i35-eleventh",
        {("smollm2-135m-instruct-t0.7-again", "correct"): 77,
         ("smollm2-135m-instruct-t0.7-again", "other"): 100,
         ("gemma-3-270m-t0.7", "correct"): 27, ("gemma-3-270m-t0.7", "other"): 100,
         ("claude-blind-fresh", "all"): 285})
    # no reply an earlier sample read for the same item was selected again
    earlier = {(r["id"], r["response"]) for r in read_gold(TENTH) + read_gold(
        DATA / "gold_smollm2_fresh.jsonl") + read_gold(DATA / "gold_strong.jsonl")}
    assert not earlier & {(r["id"], r["response"]) for r in gold}


def test_the_rules_on_the_eleventh_sample_stay_at_the_measured_level() -> None:
    # measured once, with the rules of f9f9406 (the card): SmolLM2 157/177, precision 61/77;
    # Gemma 123/127, 25/27; the strong model 259/285, 131/131. Below the 97% goal but for
    # Gemma's agreement; the floors keep a rule change from making it worse unseen
    assert_floors(read_gold(ELEVENTH), {"smollm2-135m-instruct-t0.7-again": (157, 61, 77),
                                        "gemma-3-270m-t0.7": (123, 25, 27),
                                        "claude-blind-fresh": (259, 131, 131)})
