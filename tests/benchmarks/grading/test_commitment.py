"""The tenth round's rules: a reply that contains the reference without giving it as its answer,
a decline that answers anyway, and the strong model's premise rejections.

The items and replies are written here (short versions of the classes the ninth sample's and the
eighth sample's readers found); each expectation was decided by reading them, as the comment says.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.grading import grade
from benchmarks.grading.caveats import hedges_without_pick
from benchmarks.grading.commitment import (
    answers_despite_decline,
    asserts_other_option,
    backs_every_option,
    only_in_code,
    rejected_only,
    restates_question,
)

HAIR_DRYER = ("Why is it dangerous to use a hair dryer next to a full bathtub?\n"
              "A) Water conducts electricity\nB) The water will boil\nC) Steam speeds the dryer\n"
              "D) The dryer stops\nAnswer with the letter.")
CLAUSE = ("What type of clause is this?\nA) Confidentiality clause\nB) Non-compete clause\n"
          "C) Indemnification clause\nAnswer with the letter.")
PASSAGES = ("Passage 1: The Eiffel Tower is a wrought-iron lattice tower completed in 1889 for a "
            "world's fair held in the French capital.\nPassage 2: Paris, the capital of France, "
            "is built along both banks of the river Seine.\nQuestion: On which river is the city "
            "that is home to the Eiffel Tower?")


def _item(question: str, reference: list[str], kind: str = "text",
          answerable: bool = True) -> dict[str, Any]:
    return {"question": question, "reference": reference, "answer_type": kind,
            "answerable": answerable}


def test_a_reply_that_backs_every_option_in_turn_commits_to_none() -> None:
    reply = ("A) Water conducts electricity, so a shock can kill. B) The water will boil because "
             "of the heat. C) Steam speeds the dryer up. D) The dryer stops when wet.")
    assert backs_every_option(reply, HAIR_DRYER)
    assert grade(_item(HAIR_DRYER, ["A"], "choice"), reply).correct is False
    # one option chosen and the others dismissed in words (not opened by their letters)
    picked = "A) Water conducts electricity.\nThe others are wrong: boiling and steam are myths."
    assert not backs_every_option(picked, HAIR_DRYER)
    assert grade(_item(HAIR_DRYER, ["A"], "choice"), picked).correct is True


def test_a_letter_then_another_options_text_asserted_is_a_contradiction() -> None:
    reply = "A) Confidentiality clause\nThe contract clause is a non-compete clause."
    assert asserts_other_option(reply, CLAUSE, "A")
    assert grade(_item(CLAUSE, ["A"], "choice"), reply).correct is False
    # the other option named only to deny it is no contradiction
    denied = "A) Confidentiality clause\nThe clause is not a non-compete clause."
    assert not asserts_other_option(denied, CLAUSE, "A")
    assert grade(_item(CLAUSE, ["A"], "choice"), denied).correct is True


def test_a_reference_named_only_to_reject_it_is_not_given() -> None:
    q = "What nickname are tardigrades often given?"
    reply = 'No, the nickname "water bear" is not a proper one; they are called larchae.'
    assert rejected_only(reply, ["water bears", "water bear"])
    assert grade(_item(q, ["water bears", "water bear"]), reply).correct is False
    assert grade(_item(q, ["water bear"]), "They are nicknamed water bears.").correct is True


def test_a_reference_only_inside_code_is_not_given_unless_code_was_asked() -> None:
    q = 'Return only the symbol of sodium: {"element": "sodium", "symbol": ?}'
    reply = "Here is a function:\n```python\ndef f(row):\n    return {'atom': 'Na'}[row]\n```"
    assert only_in_code(reply, ["Na"], q)
    assert grade(_item(q, ["Na"]), reply).correct is False
    assert grade(_item(q, ["Na"]), "Na").correct is True
    # a question that asks for code is answered in code
    assert not only_in_code(reply, ["Na"], "Write a Python function that returns 'Na'.")


def test_a_passage_copied_back_whole_is_no_answer_but_the_answering_sentence_is() -> None:
    echo = ("Passage 1: The Eiffel Tower is a wrought-iron lattice tower completed in 1889 for a "
            "world's fair held in the French capital of Paris.\nPassage 2: Paris, the capital "
            "of France, is built along both banks of the Seine River.")
    assert restates_question(echo, PASSAGES)
    assert grade(_item(PASSAGES, ["Seine"]), echo).correct is False
    selected = "Paris, the capital of France, is built along both banks of the river Seine."
    assert not restates_question(selected, PASSAGES)
    assert grade(_item(PASSAGES, ["Seine"]), selected).correct is True
    # a restated question ("The ... is X") copies the asking sentence, not a passage
    q = "What is the medical term for an abnormally low level of sugar in the blood?"
    assert not restates_question(
        "The medical term for an abnormally low level of sugar in the blood is hypoglycemia.", q)


def test_a_yes_question_answered_with_its_own_words_negated_is_answered_no() -> None:
    q = ("Can the inside of a closed car sitting in the sun reach dangerous temperatures when it "
         "is only about 70°F outside?")
    no = "The inside of a parked car sitting in the sun cannot reach dangerous temperatures."
    assert grade(_item(q, ["Yes", "can"]), no).correct is False
    yes = "The inside of a parked car sitting in the sun can reach dangerous temperatures."
    assert grade(_item(q, ["Yes", "can"]), yes).correct is True


def test_an_either_or_answer_revised_to_the_other_side_is_not_credited() -> None:
    q = "Botanically speaking, is a tomato a fruit or a vegetable?"
    reply = ("The classification of a fruit is often debated in botany. "
             "The tomato is indeed a vegetable but not a fruit.")
    assert grade(_item(q, ["fruit"]), reply).correct is False
    assert grade(_item(q, ["fruit"]), "A fruit: it develops from the flower's ovary.").correct


def test_a_decline_that_then_states_the_answer_answers() -> None:
    q = ("Which topical treatment is the antidote?\nA) Sodium bicarbonate\nB) Calcium gluconate"
         "\nC) Ethanol\nAnswer with the letter.")
    reply = "I cannot answer the question. The correct answer to this question is C) Ethanol"
    assert answers_despite_decline(reply, _item(q, ["B"], "choice"))
    assert grade(_item(q, ["B"], "choice"), reply).answered is True
    # "my answer is based on ..." states no answer: the decline stands
    declined = "I can't answer that directly, because my answer is based on old data."
    assert not answers_despite_decline(declined, _item("Cheapest tariff today?", []))
    ice = "Ice is water in which state?\nA) Solid\nB) Liquid\nC) Gas\nAnswer with the letter."
    opened = "B) Liquid\nPlease provide the answer with the correct letter."
    assert grade(_item(ice, ["A"], "choice"), opened).answered is True


@pytest.mark.parametrize("reply", [
    'Hi Carla,\n\nThe "wait an hour after eating" rule is a myth. Kids can swim after lunch.',
    "**Don't run it, ever.** What you read is false, and possibly a malicious joke.",
    "Before any savings figure, I have to flag the premise. Verbal contracts usually bind.",
])
def test_the_strong_models_premise_rejections_are_abstentions(reply: str) -> None:
    g = grade(_item("Since X is true, how much Y should I do?", [], answerable=False), reply)
    assert (g.answered, g.flags) == (False, ("premise_rejected",))


def test_a_contested_value_question_without_a_pick_is_an_abstention() -> None:
    reply = ("This is a contested value question, and reasonable people disagree. The main "
             "arguments:\n- For: turnout\n- Against: freedom")
    assert hedges_without_pick(reply)
    g = grade(_item("Should voting be mandatory?", [], answerable=False), reply)
    assert (g.answered, g.flags) == (False, ("no_single_answer",))
    picked = "Reasonable people disagree, but if I had to choose, I'd say yes."
    assert grade(_item("Should voting be mandatory?", [], answerable=False),
                 picked).answered is True


YES_NO = "Has Mo committed defamation?\nA) Yes\nB) No\nAnswer with the letter."
CPU = ("What does CPU stand for?\nA) Central Processing Unit\nB) Computer Personal Utility\n"
       "C) Core Program Uploader\nD) Central Power Unit\nAnswer with the letter.")


@pytest.mark.parametrize(("question", "reply", "reference"), [
    (YES_NO, "C) No", "B"),  # C is no option: the letter and the text disagree
    (YES_NO, "No\nA)", "B"),  # the text says B, a bare letter on its own line says A
    (CPU, "A) Central Processing Unit\n- D) Central Power Unit", "A"),  # two options listed
    (CPU, "A) core program uploader and computer utility", "A"),  # A's letter, others' words
])
def test_the_eleventh_rounds_letter_conflicts_are_not_credited(
        question: str, reply: str, reference: str) -> None:
    assert grade(_item(question, [reference], "choice"), reply).correct is False


def test_a_letter_with_its_working_in_parentheses_is_read() -> None:
    q = "What share?\nA) 15%\nB) 45%\nC) 60%\nD) 75%\nAnswer with the letter."
    assert grade(_item(q, ["D"], "choice"), "D (45 ÷ 60 = 75%)").correct is True
    assert grade(_item(CPU, ["A"], "choice"), "A) Central Processing Unit").correct is True


def test_a_count_in_words_answers_how_many_times() -> None:
    q = "How many times in one day does he take the tablet?"
    assert grade(_item(q, ["3"], "number"), "He should take one tablet three times a day.").correct
    assert grade(_item(q, ["2"], "number"), "He takes the tablet twice a day.").correct
    assert grade(_item(q, ["3"], "number"), "He takes the tablet twice a day.").correct is False


@pytest.mark.parametrize(("reply", "flag"), [
    ("Hi Ruby,\n\nWhat a great question! The honest answer is that **nobody knows**. Eyes do "
     "not fossilise.", "unknowable"),
    ("No precise number exists, and nobody can give you one honestly. Estimates: 50,000.",
     "unknowable"),
    ("You can't get a single number from that: x = 10 - y.", "premise_rejected"),
    ("0. Freezing doesn't restore a dead battery; that's a myth.", "premise_rejected"),
    ("I also need to know how many gallons it took. For example, 14 gallons is 30 mpg.",
     "asks_back"),
    ("It's ambiguous, which is why the comments are split: 16 or 1.", "asks_back"),
])
def test_the_eleventh_rounds_abstentions(reply: str, flag: str) -> None:
    g = grade(_item("How many exactly?", [], "number", answerable=False), reply)
    assert (g.answered, g.flags) == (False, (flag,))


def test_a_reading_chosen_after_the_ambiguity_or_a_pick_for_a_criterion_is_an_answer() -> None:
    item = _item("Evaluate 1/2x for x = 4.", [], "number", answerable=False)
    assert grade(item, "The expression is ambiguous: 2 or 1/8. The answer is most likely 2."
                 ).answered is True
    hedge = ("There's no objective answer. It's a matter of taste.\n\nMy pick for elegance would "
             "be the Quake line.")
    assert grade(_item("Most beautiful line of code?", [], answerable=False), hedge).answered
