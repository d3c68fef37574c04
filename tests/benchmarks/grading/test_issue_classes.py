"""The grader on the shipped SmolLM2 replies that issue 13 found misgraded, one class at a time.

Each expectation below was decided by reading the question, the reference and the reply (the
comment says why); none is taken from the grader's output.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading import grade
from cost_models.datasets import load_seed_questions

RESPONSES = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "smollm2" / \
    "responses.jsonl"


@cache
def _items() -> dict[str, dict[str, Any]]:
    return {it.id: it.model_dump() for it in load_seed_questions()}


@cache
def _replies() -> dict[str, str]:
    out = {}
    for line in RESPONSES.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out[rec["id"]] = rec["response"]
    return out


def _grade(item_id: str, reply: str | None = None) -> Any:
    return grade(_items()[item_id], _replies()[item_id] if reply is None else reply)


@pytest.mark.parametrize("item_id", [
    "life-a-015",  # "A) In the garage with the big door open": A's letter, B's text
    "code-a-048",  # "A) Base64 is a strong encryption algorithm...": option B's text
    "law-a-005",   # "A) No" where A is "Yes"; then "The answer is not A"
    "law-a-001",   # "A) No" where A is "Yes"
    "law-a-020",   # "A) No" then "The answer is A."
    "sci-a-026",   # "A) Beta particles": A is alpha particles
    "life-a-037",  # "A) The red sock turns white.": option B's text
    "med-a-023",   # "A) Right ventricle" then "The correct answer is D) Left ventricle."
])
def test_choice_letter_and_option_text_disagree(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct) == (True, False)
    assert "letter_text_conflict" in g.flags


@pytest.mark.parametrize("item_id", [
    "med-a-070",   # "A) Acute cholecystitis / The correct answer is A." (A is that option)
    "life-a-076",  # 'A) "I'm so sorry for your loss."' (A's own text)
    "life-a-017",  # "A) Leaving it on the kitchen counter all day is not a safe way": A's text
])
def test_choice_letter_and_option_text_agree(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct, g.flags) == (True, True, ())


@pytest.mark.parametrize("item_id", [
    "sci-a-077",  # says "hydrogen chloride"; "chlorine" only in the echoed question
    "gk-a-029",   # "The bull's movement is ... reacting to the cape's red colour": both sides
    "law-a-055",  # "the person accused of a crime ... is a felon": "accused" is the echo
    "med-a-003",  # 37.8 is not "37 to the nearest degree"
    "fin-a-077",  # "over 30,000 leading financial instruments" is not 30 companies
])
def test_reference_given_by_the_question_is_not_credited_on_an_echo(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct) == (True, False)


@pytest.mark.parametrize("item_id", [
    "gk-a-030",   # "The main cause of Earth's seasons is indeed the tilt of its axis."
    "life-a-063",  # "The fork goes on the left side of the plate."
    "life-a-049",  # "The bull's movement is the primary trigger ..."
])
def test_reference_given_by_the_question_is_credited_when_chosen(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct) == (True, True)


def test_either_or_reply_naming_only_the_alternative_is_not_credited() -> None:
    g = _grade("life-a-063", "The fork goes on the right side, never on the left.")
    assert (g.answered, g.correct) == (True, False)
    g = _grade("life-a-063", "Not on the right: the fork goes on the left.")
    assert (g.answered, g.correct) == (True, True)


@pytest.mark.parametrize("item_id", [
    "life-a-002",  # "165°F (74°C) or higher": 165 is the Fahrenheit answer asked for
    "sci-a-075",   # "consists of approximately 206 bones"; 86 is about the skull
])
def test_numbers_with_unit_pairs_and_restated_answers(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct) == (True, True)


def test_a_worked_solution_still_commits_to_its_last_number() -> None:
    reply = "To find the change, first 4 * 3 = 12 dollars. Then 20 - 12 = 8 dollars."
    assert _grade("math-a-030", reply).correct is True
    reply = "To find the change, 20 - 12 = 8 dollars, then 8 + 4 = 12 dollars."
    assert _grade("math-a-030", reply).correct is False


@pytest.mark.parametrize("item_id", [
    "life-r-024",  # "I'm not sure."
    "fin-r-020",   # "I'm not sure."
    "life-r-020",  # "... not possible to provide an exact answer without additional data"
    "life-r-021",  # "I'm not sure. I can't provide a specific outfit ..."
    "med-r-019",   # "I'm not sure. I can only provide a single answer ..."
    "gk-r-027",    # "The answer is not possible to determine based on the given information."
    "life-r-058",  # "... You can't determine which one based on your current location alone."
    "med-r-039",   # ends "I cannot answer based on available information."
])
def test_hedged_non_answers_are_abstentions(item_id: str) -> None:
    g = _grade(item_id)
    assert (g.answered, g.correct) == (False, None)


def test_a_hedged_answer_is_still_an_answer() -> None:
    g = _grade("gk-a-029", "I'm not sure, but I think the movement of the cape.")
    assert (g.answered, g.correct) == (True, True)


@pytest.mark.parametrize("reply", [
    "Ibuprofen is not an antibiotic, so it will not clear strep throat; see a doctor.",
    "Ibuprofen isn't an antibiotic.",
    "That is not true: ibuprofen is a painkiller.",
    "This is a common misconception. Strep throat needs a prescribed antibiotic.",
])
def test_rejecting_a_false_premise_is_an_abstention(reply: str) -> None:
    g = _grade("med-r-039", reply)  # "Ibuprofen is an antibiotic, so how many days ...?"
    assert (g.answered, g.correct) == (False, None)
    assert g.flags == ("premise_rejected",)


@pytest.mark.parametrize("reply", [
    "Take it for 10 days.",
    "Ibuprofen is an antibiotic; take it for 7 days.",
])
def test_accepting_a_false_premise_is_an_answer(reply: str) -> None:
    g = _grade("med-r-039", reply)
    assert (g.answered, g.correct) == (True, False)
