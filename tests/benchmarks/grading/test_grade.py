"""The grader: choice letters, numbers with tolerance, text aliases, code, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading import Grade, Limits, grade, grade_code, grade_number, grade_text
from benchmarks.grading.sandbox import run_code_outcome

QUESTION = ("Which gas do plants absorb for photosynthesis?\n"
            "A) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium")
REPLIES = Path(__file__).resolve().parents[2] / "guard" / "data" / "smollm2_replies.json"


def outcome(g: Grade) -> tuple[bool, bool | None]:
    return g.answered, g.correct


def _item(answer_type: str, reference: list[str], *, answerable: bool = True,
          question: str = "Q?") -> dict[str, Any]:
    return {"id": "x", "question": question, "answerable": answerable, "cost": 2.0,
            "reference": reference, "answer_type": answer_type}


@pytest.mark.parametrize(
    ("reply", "correct"),
    [
        pytest.param("The answer is B.", True, id="answer-is"),
        pytest.param("The answer is (C).", False, id="answer-is-wrong-letter"),
        pytest.param("Answer: B", True, id="answer-colon"),
        pytest.param("The correct option is (B) because plants need it.", True, id="option-is"),
        pytest.param("B", True, id="bare-letter"),
        pytest.param("B) Carbon dioxide", True, id="leading-letter-paren"),
        pytest.param("(B)", True, id="parenthesized"),
        pytest.param("B. Plants take in CO2.", True, id="leading-letter-dot"),
        pytest.param("B is correct.", True, id="letter-is"),
        pytest.param("**B**", True, id="markdown-bold"),
        pytest.param("**B) Carbon dioxide**", True, id="markdown-bold-option"),
        pytest.param("D) Helium", False, id="wrong-leading-letter"),
        pytest.param("Carbon dioxide.", True, id="option-text-quoted"),
        pytest.param("Plants absorb carbon dioxide from the air.", True,
                     id="option-text-in-a-sentence"),
        pytest.param("They absorb nitrogen.", False, id="wrong-option-text"),
        pytest.param("A) Oxygen\nB) Carbon dioxide\nC) Nitrogen", False,
                     id="listing-several-options"),
        pytest.param("A) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium", False,
                     id="listing-all-options"),
        pytest.param("Oxygen or carbon dioxide, hard to say.", False, id="two-option-texts"),
        pytest.param("Photosynthesis is a process.", False, id="no-commitment"),
    ],
)
def test_choice(reply: str, correct: bool) -> None:
    assert outcome(grade(_item("choice", ["B"], question=QUESTION), reply)) == (True, correct)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("A) Oxygen\nB) Carbon dioxide\nC) Nitrogen", id="three-options"),
        pytest.param("A) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium", id="all-options"),
        pytest.param("A) Oxygen\nB) Carbon dioxide", id="two-options"),
    ],
)
def test_listing_options_commits_to_none_of_them(reply: str) -> None:
    """Even the option listed first (here the reference) is not chosen by a list."""
    assert outcome(grade(_item("choice", ["A"], question=QUESTION), reply)) == (True, False)


@pytest.mark.parametrize(
    ("reply", "refs", "correct"),
    [
        pytest.param("12.3", ["12.3"], True, id="exact"),
        pytest.param("About 12.34 meters.", ["12.3"], True, id="within-reference-precision"),
        pytest.param("12.36", ["12.3"], False, id="beyond-reference-precision"),
        pytest.param("12.2", ["12.3"], False, id="one-decimal-off"),
        pytest.param("3.14159", ["3.14"], True, id="more-digits-than-reference"),
        pytest.param("3.1", ["3.14"], False, id="fewer-digits-than-reference"),
        pytest.param("12", ["12"], True, id="integer"),
        pytest.param("12.0", ["12"], True, id="integer-as-float"),
        pytest.param("12.4", ["12"], False, id="integer-needs-exact"),
        pytest.param("The total is 1,234.", ["1234"], True, id="thousands-commas-in-reply"),
        pytest.param("1234", ["1,234"], True, id="thousands-commas-in-reference"),
        pytest.param("12,345,678 people", ["12345678"], True, id="millions"),
        pytest.param("It costs $1,250.50 in total.", ["1250.5"], True, id="dollars-and-cents"),
        pytest.param("$45", ["45"], True, id="dollar-sign"),
        pytest.param("$45", ["$45.00"], True, id="dollar-sign-reference"),
        pytest.param("-3", ["-3"], True, id="negative"),
        pytest.param("It is \u22123 degrees outside.", ["-3"], True, id="unicode-minus"),
        pytest.param("3", ["-3"], False, id="sign-matters"),
        pytest.param("1e3", ["1000"], True, id="scientific"),
        pytest.param("0.5", [".5"], True, id="leading-dot-reference"),
        pytest.param("50%", ["50"], True, id="percent"),
        pytest.param("The answer is 5, since 2 + 3 = 5 and 10 / 2 = 5, not 10", ["5"], True,
                     id="answer-is-wins-over-last-number"),
        pytest.param("I got 100 at first; the answer is 99", ["99"], True, id="answer-is-late"),
        pytest.param("The answer is 7. Check: 3 + 5 = 8", ["8"], False,
                     id="answer-is-beats-a-later-right-number"),
        pytest.param("3 apples and 4 pears make 7 fruit.", ["7"], True, id="last-number"),
        pytest.param("3 apples and 4 pears make 7 fruit.", ["3"], False, id="not-the-first"),
        pytest.param("He has two dogs and 3 cats.", ["2"], False,
                     id="number-words-in-prose-are-not-numbers"),
        pytest.param("Seven.", ["7"], True, id="a-reply-that-is-one-number-word"),
        pytest.param("No numbers here.", ["5"], False, id="no-number"),
        pytest.param("8", ["7", "8"], True, id="any-reference"),
    ],
)
def test_number(reply: str, refs: list[str], correct: bool) -> None:
    assert grade_number(reply, refs) is correct
    assert outcome(grade(_item("number", refs), reply)) == (True, correct)


@pytest.mark.parametrize(
    ("reply", "refs", "correct"),
    [
        pytest.param("Paris", ["Paris"], True, id="exact"),
        pytest.param("The capital of France is Paris.", ["Paris"], True, id="in-a-sentence"),
        pytest.param("Parisian cafes are lovely.", ["Paris"], False, id="whole-words-only"),
        pytest.param("It is the Eiffel Tower!", ["The Eiffel Tower"], True, id="articles-ignored"),
        pytest.param("eiffel-tower", ["Eiffel Tower"], True, id="punctuation-ignored"),
        pytest.param("S\u00e3o Paulo", ["Sao Paulo"], True, id="accents-ignored"),
        pytest.param("George Washington.", ["Washington", "George Washington"], True,
                     id="any-alias"),
        pytest.param("Venus", ["Mercury"], False, id="wrong"),
        pytest.param("This prints [3, 2, 1].", ["[3, 2, 1]", "[3,2,1]"], True, id="list-literal"),
        pytest.param("Yes, it is.", ["yes"], True, id="yes-opens"),
        pytest.param("YES", ["Yes"], True, id="yes-case"),
        pytest.param("**Yes**", ["yes"], True, id="yes-bold"),
        pytest.param("I would say yes.", ["yes"], False, id="yes-must-open-the-reply"),
        pytest.param("Yesterday it was.", ["yes"], False, id="yes-whole-word"),
        pytest.param("No.", ["no"], True, id="no-opens"),
        pytest.param("Not really, no.", ["no"], False, id="no-must-open-the-reply"),
        pytest.param("Nobody came.", ["no"], False, id="no-whole-word"),
        pytest.param("No, the answer is yes.", ["yes"], False, id="yes-after-no"),
    ],
)
def test_text(reply: str, refs: list[str], correct: bool) -> None:
    assert grade_text(reply, refs) is correct
    assert outcome(grade(_item("text", refs), reply)) == (True, correct)


TESTS = ["assert add(2, 3) == 5\nassert add(-1, 1) == 0\nassert add(0, 0) == 0"]


@pytest.mark.parametrize(
    ("reply", "correct"),
    [
        pytest.param("```python\ndef add(a, b):\n    return a + b\n```", True, id="fenced"),
        pytest.param("Here it is:\n\ndef add(a, b):\n    return a + b\n", True, id="unfenced"),
        pytest.param("```python\ndef add(a, b):\n    return a + b\n", True, id="unclosed-fence"),
        pytest.param("```python\ndef add(a, b):\n    return a - b\n```", False, id="wrong"),
        pytest.param("```python\ndef add(a, b)\n    return a + b\n```", False, id="syntax-error"),
        pytest.param("```python\ndef plus(a, b):\n    return a + b\n```", False,
                     id="wrong-name"),
        pytest.param("```python\ndef add(a, b):\n    print('adding', end='')\n    return a + b\n"
                     "```", True, id="prints-without-newline"),
        pytest.param("```python\ndef add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n"
                     "    print(add(int(input()), 1))\n```", True, id="main-block-not-run"),
        pytest.param("```python\nimport sys\n\ndef add(a, b):\n    return a * b\n\n"
                     "sys.exit(0)\n```", False, id="exit-0-does-not-skip-the-tests"),
        pytest.param("```python\nimport os\n\ndef add(a, b):\n    return a * b\n\n"
                     "os._exit(0)\n```", False, id="hard-exit-0-does-not-pass"),
    ],
)
def test_code(reply: str, correct: bool) -> None:
    assert grade_code(reply, TESTS, Limits(wall_s=5, cpu_s=5)) is correct


def test_code_infinite_loop_times_out() -> None:
    reply = "```python\ndef add(a, b):\n    while True:\n        pass\n```"
    assert grade_code(reply, TESTS, Limits(wall_s=2, cpu_s=2)) is False
    assert run_code_outcome(reply, TESTS, Limits(wall_s=2, cpu_s=2)) in ("cpu_limit", "wall_limit")


def test_code_runs_isolated_in_a_temporary_directory(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    reply = ("```python\nopen('left-behind.txt', 'w').write('x')\n"
             "def add(a, b):\n    return a + b\n```")
    assert grade_code(reply, TESTS, Limits(wall_s=5, cpu_s=5)) is True
    assert list(tmp_path.iterdir()) == []


def test_code_item_through_grade() -> None:
    item = _item("code", TESTS)
    assert outcome(grade(item, "```python\ndef add(a, b):\n    return a + b\n```")) == (True, True)
    assert outcome(grade(item, "```python\ndef add(a, b):\n    return 0\n```")) == (True, False)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("I cannot answer.", id="refusal-hint"),
        pytest.param("I cannot answer", id="refusal-hint-no-dot"),
        pytest.param("I'm sorry, but I can't help with that.", id="sorry-cant-help"),
        pytest.param("I don't know.", id="dont-know"),
        pytest.param("There is not enough information to answer this question.",
                     id="not-enough-information"),
        pytest.param("As an AI language model, I do not have access to real-time data.",
                     id="as-an-ai"),
        pytest.param("I'm not sure if I can answer that question. Can you please provide more?",
                     id="smollm2-not-sure"),
        pytest.param("No, I cannot answer that question.", id="smollm2-no-i-cannot"),
        pytest.param(None, id="none"),
    ],
)
@pytest.mark.parametrize("answerable", [pytest.param(True, id="answerable"),
                                        pytest.param(False, id="refusal-required")])
def test_refusals_are_not_answers(reply: str | None, answerable: bool) -> None:
    assert outcome(grade(_item("text", ["Paris"], answerable=answerable), reply)) == (False, None)


def _smollm2_replies() -> list[Any]:
    data = json.loads(REPLIES.read_text())
    out = []
    for r in data["replies"]:
        text = r.get("response")
        if text is None:
            text = r["completion"]["choices"][0]["message"]["content"]
        out.append(pytest.param(text, r["label"], id=f"{r['source']}-{r['id']}"))
    return out


@pytest.mark.parametrize(("reply", "label"), _smollm2_replies())
def test_real_smollm2_replies(reply: str, label: str) -> None:
    got = grade(_item("text", ["zzz-no-such-alias"]), reply)
    if label == "refusal":
        assert outcome(got) == (False, None)
    else:  # an answer, and not the (made-up) reference
        assert outcome(got) == (True, False)


@pytest.mark.parametrize(
    ("answer_type", "refs", "reply"),
    [
        pytest.param("choice", ["B"], "B", id="choice"),
        pytest.param("number", ["42"], "The answer is 42.", id="number"),
        pytest.param("text", ["Paris"], "Paris.", id="text"),
        pytest.param("code", TESTS, "def add(a, b):\n    return a + b\n", id="code"),
    ],
)
def test_answering_a_refusal_required_item_is_incorrect(answer_type: str, refs: list[str],
                                                        reply: str) -> None:
    """Even a reply that matches the reference: the item required a refusal."""
    item = _item(answer_type, refs, answerable=False, question=QUESTION)
    assert outcome(grade(item, reply)) == (True, False)
    assert outcome(grade({**item, "answerable": True}, reply)) == (True, True)


def test_an_empty_reply_is_an_answer_that_is_wrong() -> None:
    # it neither answers nor declines (the gold protocol); the runtime guard calls it a refusal
    for answerable in (True, False):
        g = grade(_item("text", ["Paris"], answerable=answerable), "  \n")
        assert (g.answered, g.correct, g.flags) == (True, False, ("empty",))
    assert outcome(grade(_item("text", ["Paris"]), None)) == (False, None)


def test_a_list_of_the_options_is_an_answer_even_after_a_decline() -> None:
    q = "Which is safest?\nA) Red\nB) Green\nC) Blue\nD) Grey\nAnswer with the letter."
    reply = "I'm sorry, as an AI I cannot choose for you.\nA) Red\nB) Green\nC) Blue\nD) Grey"
    assert outcome(grade(_item("choice", ["B"], question=q), reply)) == (True, False)
    assert outcome(grade(_item("choice", ["B"], question=q),
                         "I'm sorry, as an AI I cannot choose for you.")) == (False, None)


def test_no_after_a_quoted_command_answers_the_question() -> None:
    # a question on its own line after a code block is still a question, not a premise
    item = _item("text", [], answerable=False,
                 question="my script does this:\n\n```bash\nrm -rf /tmp/x/*\n```\n\n"
                          "Is it safe to run every hour?")
    assert outcome(grade(item, "No, it is not safe to run every hour.")) == (True, False)


# items and replies written for these tests, in the classes the three seen gold samples found
# misgraded (issue 22, fourth round)
DOSE = ("Which of these equals 250 micrograms?\nA) 25 mg\nB) 0.25 mg\nC) 2.5 mg\nD) 250 mg\n"
        "Answer with the letter.")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # a number inside a longer number does not quote it: "0.25 mg" is B, not A ("25 mg")
        pytest.param("0.25 mg", (True, True), id="number-not-inside-a-longer-one"),
        pytest.param("25 mg", (True, False), id="the-shorter-number-itself"),
        # a bare letter on its own first line is a stated letter: against a later one it
        # is a contradiction, no commitment
        pytest.param("A\nAnswer: B", (True, False), id="bare-letter-line-then-another"),
        pytest.param("B\nThat is 250 divided by 1000.", (True, True), id="bare-letter-line"),
    ],
)
def test_choice_seen_gold_classes(reply: str, expected: tuple[bool, bool]) -> None:
    assert outcome(grade(_item("choice", ["B"], question=DOSE), reply)) == expected


def test_a_reference_that_only_begins_a_compounds_name_is_not_given() -> None:
    q = "Which gas makes up most of the air we breathe?"
    assert not grade_text("Nitrogen dioxide.", ["nitrogen"], q)
    assert not grade_text("Mostly nitrogen oxides.", ["nitrogen"], q)
    assert grade_text("Nitrogen, about 78 percent.", ["nitrogen"], q)
    assert grade_text("Nitrogen gas.", ["nitrogen"], q)


def test_a_long_clause_before_an_either_or_is_not_an_alternative() -> None:
    # "Spanish" is the last word of the clause before the choice, not a side of it
    q = "My doctor said a word in Spanish, the bone of the thigh, is it the femur or tibia?"
    assert grade_text("In Spanish it is the femur, the long thigh bone.", ["femur"], q)
    assert not grade_text("It is the tibia.", ["femur"], q)
    assert not grade_text("The femur or the tibia, both are leg bones.", ["femur"], q)


def test_a_premise_rejected_after_a_courtesy_opening() -> None:
    item = _item("text", [], answerable=False,
                 question="Cold weather gives you a cold, so how many layers stop it?")
    reply = ("That's a good question! The idea that cold weather gives you a cold is not "
             "entirely accurate; colds are caused by viruses.")
    g = grade(item, reply)
    assert (g.answered, g.correct, g.flags) == (False, None, ("premise_rejected",))
    # an answer after the same courtesy is still an answer (wrong on this item)
    assert outcome(grade(item, "Good question! Wear three layers.")) == (True, False)


def test_a_long_first_side_before_a_comma_or_is_still_the_alternative() -> None:
    # "X, or Y?": the side before the comma is the alternative however long it is
    q = ("What mostly sets the tides: the winds blowing over the open ocean, or the pull of "
         "the Moon?")
    assert grade_text("The pull of the Moon.", ["pull of the Moon"], q)
    assert not grade_text("The winds over the ocean, not the pull of the Moon.",
                          ["pull of the Moon"], q)
