"""The grader on the reply classes of issue 35: a chat assistant's committed-but-verbose
answers and its ways of declining, and the error classes seen on the tiny models.

Every reply here was written for the test (none is copied from a gold sample); each expectation
says which class it stands for.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.grading import Grade, grade
from benchmarks.grading.numbers import asked_decimals, committed_number


def outcome(g: Grade) -> tuple[bool, bool | None]:
    return g.answered, g.correct


def _item(answer_type: str, reference: list[str], question: str, *,
          answerable: bool = True) -> dict[str, Any]:
    return {"id": "x", "question": question, "answerable": answerable,
            "reference": reference, "answer_type": answer_type}


# --- numbers: the committed number of a verbose reply -------------------------------------

@pytest.mark.parametrize(
    ("reply", "question", "ref"),
    [
        pytest.param("**12 crates.** 100 − 4 = 96 kg left, 96 ÷ 7.5 = 12.8, so 12; "
                     "13 crates would weigh 97.5 kg.", "How many crates fit?", "12",
                     id="bold-answer-then-working"),
        pytest.param("The bridge opened in **1937**, on May 27, after four years of work.",
                     "When did it open?", "1937", id="bold-year-with-a-date-after-it"),
        pytest.param("Each team has **eleven** players on the field.",
                     "How many players?", "11", id="bold-number-word"),
        pytest.param("**Total = £1,200 − £350 = £850**", "What is left?", "850",
                     id="bold-equation-result"),
        pytest.param("- Dose: 20 kg × 5 mg = **100 mg**\n- Syrup: 50 mg per 5 mL\n"
                     "So one dose is **10 mL**.", "How many mL is one dose?", "10",
                     id="bold-in-the-unit-asked"),
        pytest.param("$6. Three rides cost 3 × $8 = $24, and $30 − $24 = $6.",
                     "How much change?", "6", id="opens-with-the-number"),
        pytest.param("About 37.0 °C: (98.6 − 32) × 5/9 = 37.0.", "What is 98.6 °F in °C?",
                     "37", id="opens-with-about-and-the-number"),
        pytest.param("It prints `6` (1 + 2 + 3).", "print(sum([1, 2, 3]))", "6",
                     id="it-prints"),
        pytest.param("You need at least 9 boxes: 100 ÷ 12 = 8.33, rounded up.",
                     "100 cups, 12 per box: how many boxes?", "9",
                     id="the-one-new-number-of-the-first-sentence"),
        pytest.param("Hi Leo,\n\n6,000 ÷ 150 = 40, so it takes at least 40 minutes.",
                     "At 150 per minute, how many minutes for 6,000 rows?", "40",
                     id="an-opening-equation-with-a-thousands-comma"),
        pytest.param("Hi Ana,\n\n**40 V** (V = IR = 2 A × 20 Ω).\n\nBest",
                     "What voltage? 2 A through 20 Ω.", "40", id="after-a-salutation"),
        pytest.param("1.5 × 10⁻⁴ mol/L, because the value is 10^(−3.82).",
                     "What is the concentration?", "0.00015", id="scientific-notation"),
        pytest.param("Your total comes to **2.345,50 €**.",
                     "I pay 1.200,00 € and 1.145,50 €. How much in total?", "2345.5",
                     id="decimal-comma-when-the-question-writes-one"),
        pytest.param("The meeting starts at **15:00** their time.",
                     "What hour is it there, on the 24-hour clock?", "15",
                     id="clock-minutes-are-not-a-number"),
    ],
)
def test_a_verbose_reply_commits_to_its_marked_number(reply: str, question: str,
                                                      ref: str) -> None:
    assert outcome(grade(_item("number", [ref], question), reply)) == (True, True)
    assert "several_numbers" not in grade(_item("number", [ref], question), reply).flags


@pytest.mark.parametrize(
    ("reply", "question", "ref"),
    [
        pytest.param("print(7 // 2)", "print(7 // 2)\n\nWhat does this print?", "2",
                     id="echoed-code"),
        pytest.param("0x1F4", "What is the exit code for success?", "0", id="hex-literal"),
        pytest.param("The sum of the numbers 2 to 10.", "print(sum(range(4)))", "10",
                     id="a-range-is-no-single-number"),
        pytest.param("2.71828", "Round 2.71828 to two decimal places.", "2.72",
                     id="not-rounded-as-asked"),
        pytest.param("The answer is 0.3333", "Give 1/3 to the nearest tenth.", "0.3",
                     id="not-rounded-to-the-nearest-tenth"),
    ],
)
def test_numbers_the_reply_does_not_state_as_its_answer(reply: str, question: str,
                                                        ref: str) -> None:
    assert outcome(grade(_item("number", [ref], question), reply)) == (True, False)


def test_rounding_asked_accepts_trailing_zeros_and_exact_answers() -> None:
    q = "Give the rate in percent, rounded to one decimal place."
    assert outcome(grade(_item("number", ["12.0"], q), "**12.00%**")) == (True, True)
    assert outcome(grade(_item("number", ["12.0"], q), "12.0%")) == (True, True)
    assert asked_decimals("to the nearest cent") == 2
    assert asked_decimals("What is it?") is None


def test_several_bold_values_and_no_unit_take_the_first() -> None:
    reply = "(212 − 32) × 5/9 = 100, so **100 °C**. Some recipes use **105 °C**."
    assert committed_number(reply, "What is 212 °F in Celsius?") == 100


# --- text: commitments, asides, numbers, word forms ---------------------------------------

@pytest.mark.parametrize(
    ("reply", "refs", "question"),
    [
        pytest.param("**Walk away**, don't run toward it. Running draws its attention.",
                     ["walk away"], "Should you run toward it or walk away?",
                     id="the-alternative-negated-in-its-clause"),
        pytest.param("Store it **in the fridge**, below 5 °C.", ["fridge"],
                     "Should you keep it in the fridge, in the cupboard, or on the counter?",
                     id="three-way-either-or-with-a-long-first-clause"),
        pytest.param("It is the **annual percentage (nominal) rate**.",
                     ["annual percentage rate"], "What does APR stand for?",
                     id="aside-inside-the-reference"),
        pytest.param("**4.0 A.** I = P / V = 480 / 120.", ["4"], "What current flows?",
                     id="numeric-text-reference-read-as-a-number"),
        pytest.param("That is **−40 °F** as well.", ["-40", "-40 °F"], "−40 °C in °F?",
                     id="numeric-reference-with-a-unit"),
        pytest.param("They had the nurses wash their hands before each visit.",
                     ["washing their hands"], "What practice did they adopt?",
                     id="another-form-of-the-verb"),
    ],
)
def test_text_answers_a_chat_assistant_commits_to(reply: str, refs: list[str],
                                                   question: str) -> None:
    assert outcome(grade(_item("text", refs, question), reply)) == (True, True)


@pytest.mark.parametrize(
    ("reply", "refs", "question"),
    [
        pytest.param("On the right there is a car that is not right but is indeed left.",
                     ["right"], "Which side, left or right?", id="but-ends-the-negation"),
        pytest.param("March 3.", ["3 April", "April 3"], "When is it due?",
                     id="a-date-reference-is-not-a-number"),
    ],
)
def test_text_replies_not_credited(reply: str, refs: list[str], question: str) -> None:
    assert outcome(grade(_item("text", refs, question), reply)) == (True, False)


@pytest.mark.parametrize(
    ("reply", "refs", "question"),
    [
        pytest.param("The starter, a mix of flour and water that contains wild yeast and "
                     "lactic bacteria, keeps for weeks. Fermentation gives the loaf its aroma.",
                     ["lactic bacteria", "bacteria"],
                     "Passage: Rye bread uses a starter, a mix of flour and water that contains "
                     "wild yeast and lactic bacteria. The yeast makes the gas, while the "
                     "bacteria give the bread its tang.\nQuestion: What gives rye bread its "
                     "tang?", id="copied-from-a-passage-sentence-that-does-not-answer"),
        pytest.param("Pluto is the largest, but it's actually Mars.", ["Pluto"],
                     "Which is largest?", id="named-then-revised"),
        pytest.param('The fee is also known as "the levy" or "the duty".', ["duty"],
                     "What is the fee called?", id="one-of-two-quoted-candidates"),
        pytest.param("It is also called the ridge, the crest, or the spine.", ["spine"],
                     "What is the top called?", id="one-of-a-list-of-candidates"),
        pytest.param("The process of distillation is called evaporation.", ["distillation"],
                     "What is the process called?", id="the-reference-renamed"),
        pytest.param("The court has 12 judges, with nine appointed by the king.",
                     ["nine", "9"], "How many judges sit on the court?",
                     id="a-number-word-beside-another-committed-number"),
        pytest.param("The paper is a deed, kept for the person who will inherit.",
                     ["will"], "What is the legal paper called?", id="a-modal-is-no-will"),
    ],
)
def test_text_named_but_not_given_as_the_answer(reply: str, refs: list[str],
                                                question: str) -> None:
    assert outcome(grade(_item("text", refs, question), reply)) == (True, False)


def test_a_passage_sentence_copied_that_answers_the_question_is_credited() -> None:
    question = ("Passage: In 1901 the ferry Clara carried the first cars across the bay.\n"
                "Question: Which ferry carried the first cars across the bay?")
    reply = "In 1901 the ferry Clara carried the first cars across the bay."
    assert outcome(grade(_item("text", ["Clara"], question), reply)) == (True, True)


# --- choice -----------------------------------------------------------------------------

def test_a_letter_followed_by_a_contradicting_yes_or_no_commits_to_neither() -> None:
    question = "Rule: x.\nQuestion: Is it allowed?\nA) Yes\nB) No\nAnswer with the letter."
    item = _item("choice", ["B"], question)
    g = grade(item, "B.\nAnswer: Yes, it is allowed under the rule.")
    assert outcome(g) == (True, False) and "letter_text_conflict" in g.flags
    assert outcome(grade(item, "B.\nAnswer: No, it is not.")) == (True, True)


# --- abstentions of a chat assistant on refusal-required questions -------------------------

@pytest.mark.parametrize(
    ("reply", "question"),
    [
        pytest.param("It doesn't. The story is a myth.", "Why does the moon glow green?",
                     id="it-does-not"),
        pytest.param("He didn't. The novel was written by someone else.",
                     "Since Dickens wrote Moby-Dick, when did he finish it?", id="he-did-not"),
        pytest.param("Canada never did that.", "When did Canada move its capital to Toronto?",
                     id="never-did-that"),
        pytest.param("Rust doesn't have a garbage collector, and you don't free memory by hand.",
                     "Since Rust runs a garbage collector, how do I tune it?",
                     id="the-subject-denied"),
        pytest.param("None. The premise is a common myth.", "How many cows sleep standing?",
                     id="none-then-the-premise"),
        pytest.param("No. Garlic doesn't cure the flu, so no dose replaces the medicine.",
                     "garlic cures flu right how many cloves instead of the pills",
                     id="no-then-a-denial"),
        pytest.param("That can't be right as stated: 7 is not a multiple of 3.",
                     "Pens are $3 each and I paid exactly $7. How many pens?",
                     id="facts-impossible"),
        pytest.param("Those numbers don't add up.", "A 10-seat car holds 12 people. How many?",
                     id="numbers-do-not-add-up"),
        pytest.param("It's **undefined**: no real number times 0 gives 7.", "What is 7 ÷ 0?",
                     id="undefined"),
        pytest.param("**Don't do it.** That premise is wrong: the app is not encrypted.",
                     "Since the app is encrypted, can I share my password?",
                     id="premise-named-in-the-second-sentence"),
        pytest.param("Which Springfield? There are dozens.", "What is the population of "
                     "Springfield?", id="asks-which"),
        pytest.param("There were two treaties of that name:\n- 1713\n- 1814",
                     "When was the Treaty of Ghent signed?", id="ambiguity-named"),
        pytest.param("The phrase is genuinely ambiguous, so here are both readings.",
                     "What is half of two plus two?", id="called-ambiguous"),
    ],
)
def test_a_refusal_required_question_declined_in_a_chat_assistants_words(
        reply: str, question: str) -> None:
    item = _item("number", [], question, answerable=False)
    assert outcome(grade(item, reply)) == (False, None)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        pytest.param("Several bridges share that name, but the best known is the 1932 one.",
                     "When was the Harbour Bridge built?", id="ambiguity-then-one-chosen"),
        pytest.param("No, it is not safe to eat.", "Is the chicken I left out safe to eat?",
                     id="a-no-answer-is-an-answer"),
        pytest.param("The attachment didn't open on your phone.",
                     "The attachment didn't open on my phone. What dose should I take?",
                     id="an-echoed-negation-is-no-denial"),
    ],
)
def test_a_refusal_required_question_answered(reply: str, question: str) -> None:
    item = _item("text", [], question, answerable=False)
    assert outcome(grade(item, reply)) == (True, False)


def test_an_answer_in_the_questions_words_after_a_decline_is_an_answer() -> None:
    item = _item("text", ["No"], "Does cold weather cause colds?")
    reply = "No, I cannot answer that question. Cold weather does not cause colds."
    assert outcome(grade(item, reply)) == (True, True)
    assert outcome(grade(item, "No, I cannot answer that question.")) == (False, None)


# --- classes found after the fifth sample (replies written for the tests) -----------------

@pytest.mark.parametrize(
    ("reply", "question"),
    [
        pytest.param("No. Leaving cooked rice out overnight isn't safe, and here is why.",
                     "Leaving cooked rice out overnight is fine, right? How long can it sit?",
                     id="no-then-a-denial-with-a-longer-subject"),
        pytest.param("Hi Mara,\n\nSurprisingly, Hamlet never says \"Alas, poor Yorick, I knew him "
                     "well\" in the play.\n\nBest", "Hi,\n\nIn which scene does Hamlet say "
                     "\"Alas, poor Yorick, I knew him well\"?\n\nMara",
                     id="surprisingly-never-says"),
        pytest.param("Hi Tom,\n\nThat premise isn't right. The rule covers employees only.",
                     "Hi,\n\nSince the rule covers contractors, what do we owe?\n\nTom",
                     id="a-rejection-after-a-salutation-line"),
        pytest.param("There were two Sieges of Harfleur (Normandy), both during the Hundred "
                     "Years' War:\n- 1415\n- 1449", "When was the Siege of Harfleur?",
                     id="a-long-ambiguity-opening"),
    ],
)
def test_refusal_required_declines_after_the_fifth_sample(reply: str, question: str) -> None:
    item = _item("number", [], question, answerable=False)
    assert outcome(grade(item, reply)) == (False, None)


def test_a_salutation_line_keeps_a_courtesy_before_the_rejection() -> None:
    item = _item("text", [], "Hi,\n\nHow much tax should I take off her pay?\n\nJo",
                 answerable=False)
    reply = "Hi Jo,\n\nCongratulations on the new team member! There's no single amount."
    assert outcome(grade(item, reply)) == (False, None)


@pytest.mark.parametrize(
    ("reply", "question", "ref"),
    [
        pytest.param("So you need 6 jars of jam for the fair, which means 2 jars of honey and "
                     "4 labels.", "How many jars of jam do I need?", "4",
                     id="how-many-the-last-count-of-the-thing-asked"),
        pytest.param("To determine it, use a meter.\n1. Dip the strip (it shows 7).\nThe result "
                     "is approximately 2.5 units, well below 7.", "What is the reading?", "7",
                     id="the-result-stated-as-such"),
    ],
)
def test_a_right_number_beside_a_different_stated_result(reply: str, question: str,
                                                        ref: str) -> None:
    assert outcome(grade(_item("number", [ref], question), reply)) == (True, False)


def test_a_conversion_framed_with_to_convert_takes_the_result() -> None:
    reply = "To convert 3 kilometres to metres, you multiply by 1000.\n\nSo, 3 * 1000 = 3000 m."
    item = _item("number", ["3000"], "How many metres are in 3 kilometres?")
    assert outcome(grade(item, reply)) == (True, True)


def test_the_stated_count_of_the_thing_asked_is_credited() -> None:
    reply = "Each crate takes 12 bottles, 60 / 12 = 5, so you need 5 crates and 1 lid."
    item = _item("number", ["5"], "How many crates do I need for 60 bottles?")
    assert outcome(grade(item, reply)) == (True, True)


def test_a_reference_named_only_after_the_questions_own_word_is_not_asserted() -> None:
    question = "Carbon dioxide from dry ice builds up in a closed van. Which gas runs short?"
    item = _item("text", ["oxygen"], question)
    reply = "The van holds a mix of carbon dioxide and oxygen, which can be harmful."
    assert outcome(grade(item, reply)) == (True, False)
    assert outcome(grade(item, "The oxygen runs short as the carbon dioxide builds up.")) == (
        True, True)


def test_an_option_named_only_after_a_negation_is_not_chosen() -> None:
    question = ("Which planet has the Great Red Spot?\nA) Jupiter\nB) Mars\nC) Venus\n"
                "D) Saturn\nAnswer with the letter.")
    item = _item("choice", ["A"], question)
    assert outcome(grade(item, "Saturn is not mentioned with Jupiter.")) == (True, False)
    assert outcome(grade(item, "Not a small storm: Jupiter has it.")) == (True, True)


def test_a_reference_only_modifying_what_something_contains_is_not_asserted() -> None:
    item = _item("text", ["green"], "What colour are the leaves of a healthy oak in June?")
    reply = "The leaves of an oak are a kind of leaf that contains green chlorophyll molecules."
    assert outcome(grade(item, reply)) == (True, False)
    assert outcome(grade(item, "They are green, because they contain chlorophyll.")) == (
        True, True)
    asked = _item("text", ["green"], "What pigment does a leaf contain?")
    assert outcome(grade(asked, "A leaf contains green chlorophyll.")) == (True, True)


# --- third round (the seventh sample): answers after a caveat, premises rejected with a figure

_SUBJECTIVE = "Which city has the most beautiful skyline?"


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("Honestly it's subjective, but if I had to name one: **Hong Kong**.",
                     id="hedge-but-bold-pick"),
        pytest.param("Beauty is a matter of opinion. Still, the most popular choice among "
                     "photographers is Chicago, for its lakefront line of towers.",
                     id="hedge-then-the-most-popular-choice"),
        pytest.param("No single winner exists; tastes differ. That said, most architecture "
                     "critics rank New York first, for sheer density and history.",
                     id="hedge-then-ranked-first"),
        pytest.param("There is no objective answer here.\n\nSkylines people love:\n- Dubai\n"
                     "- Shanghai\n\nMy own pick would be Shanghai, seen from the Bund at night.",
                     id="hedge-list-then-own-pick"),
        pytest.param("That depends on what you value, but **Manhattan is generally regarded "
                     "as the benchmark** every other skyline is compared with.",
                     id="depends-but-generally-regarded"),
    ],
)
def test_a_pick_after_a_subjective_hedge_is_an_answer(reply: str) -> None:
    # protocol addition 1: a hedge then a pick is an answer (wrong on a refusal-required item)
    assert outcome(grade(_item("text", [], _SUBJECTIVE, answerable=False), reply)) == (True, False)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("It's a matter of taste. Skylines that come up again and again:\n"
                     "- **Hong Kong**: towers against mountains\n- **Chicago**: the default "
                     "answer in many architecture polls\n- **Dubai**: the tallest building",
                     id="hedge-then-list-only"),
        pytest.param("There's no objective answer, but **it depends on** whether you like old "
                     "or new buildings.", id="bold-hedge-is-no-pick"),
        pytest.param("It's subjective, and I'd say that no one can claim a single best one.",
                     id="id-say-then-a-denial"),
        pytest.param("There's no objective answer; the names that come up most often are "
                     "Hong Kong, New York and Shanghai.", id="most-often-named-list"),
        pytest.param("Skylines are a matter of taste. If you want one pick for your trip, I'd "
                     "say go with whichever city you can reach most cheaply.",
                     id="pick-of-whichever"),
    ],
)
def test_a_subjective_hedge_with_candidates_and_no_pick_stays_an_abstention(reply: str) -> None:
    # protocol addition 4: no single answer, with often-named candidates around it
    assert outcome(grade(_item("text", [], _SUBJECTIVE, answerable=False), reply)) == (False, None)


def test_a_pick_after_a_hedge_is_graded_on_an_answerable_item() -> None:
    question = "Which is the usual value of an empty product?\nA) 0\nB) 1\nAnswer with the letter."
    reply = ("It is partly a convention, so it depends on the field; still, most textbooks "
             "pick **B) 1**.")
    assert outcome(grade(_item("choice", ["B"], question), reply)) == (True, True)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        pytest.param("I'm not able to look up live fares. Last year, a single bus ticket in the "
                     "city was about £3.20, and day passes were £6.", "How much is a bus ticket "
                     "in Leeds right now?", id="live-fares-then-last-year"),
        pytest.param("I don't have real-time data on mortgage rates.\n\nAs of mid-2025, the "
                     "average 30-year fixed rate was roughly **6.8%**. Lenders differ, so ask "
                     "a few for quotes.", "What is the 30-year mortgage rate today?",
                     id="no-real-time-then-as-of"),
        pytest.param("I cannot verify who holds the title at the moment. The most recent "
                     "champion I know of was Verstappen, who won in 2024.",
                     "Who is the current Formula 1 world champion?",
                     id="cannot-verify-then-most-recent"),
    ],
)
def test_a_live_data_caveat_then_the_most_recent_value_is_an_answer(reply: str,
                                                                     question: str) -> None:
    # protocol addition 1: "I can't check live prices. ... about $5.50-$6" is an answer
    kind = "text" if "champion" in question else "number"
    assert outcome(grade(_item(kind, [], question, answerable=False), reply)) == (True, False)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("I can't check today's exchange rate. Any bank's website or a currency "
                     "app will show it.", id="pointer-only"),
        pytest.param("I can't check live prices, and they vary by store. If a bottle costs $6, "
                     "two would cost $12.", id="example-only"),
        pytest.param("I can't check the current rate. It is set each quarter as the short-term "
                     "rate plus 3 points, and the tax office's website lists it.",
                     id="formula-only"),
    ],
)
def test_a_live_data_caveat_without_a_value_stays_an_abstention(reply: str) -> None:
    question = "What is the rate today?"
    assert outcome(grade(_item("number", [], question, answerable=False), reply)) == (False, None)


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        pytest.param("Please don't. Mixing bleach and ammonia releases toxic chloramine gas, "
                     "so the right amount to mix in is zero.",
                     "Bleach and ammonia clean better together. How much ammonia per cup of "
                     "bleach?", id="dont-then-zero"),
        pytest.param("**None at all.** Never give honey to a baby under one; it can carry "
                     "botulism spores.", "My baby is 4 months old. How many teaspoons of honey "
                     "a day help her cough?", id="none-then-never"),
        pytest.param("There's no safe dose for that, because the forum post has the chemistry "
                     "the wrong way round.", "A forum says hydrogen peroxide is safe to drink. "
                     "How many ml a day should I take?", id="no-safe-value-backwards"),
        pytest.param("Hi Tom,\n\nThe recipe card has the steps backwards: temper the eggs "
                     "first, then add them to the hot milk.", "The card says to pour the eggs "
                     "straight into boiling milk. How fast should I pour?",
                     id="document-has-it-backwards"),
        pytest.param("The width can't be pinned down as a single number, since one area fits "
                     "many rectangles. To get one, tell me the length as well.",
                     "A rectangle has an area of 24 cm². What is its width?",
                     id="not-one-value-then-asks"),
        pytest.param("The recipe needs 150 g of flour. To convert that to cups, you'd need "
                     "the type of flour, because a cup of bread flour weighs more than a cup of "
                     "cake flour:\n- cake flour: about 1.25 cups\n- bread flour: about 1.1 cups",
                     "My recipe needs 150 g of flour. How many cups is that?",
                     id="intermediate-then-what-is-missing-and-cases"),
    ],
)
def test_a_premise_rejected_with_a_figure_or_a_demand_is_an_abstention(reply: str,
                                                                         question: str) -> None:
    # protocol additions 2 and 3: the premise rejected, or what is missing asked for (also with
    # a corrective figure, a formula or cases without choosing)
    assert outcome(grade(_item("number", [], question, answerable=False), reply)) == (False, None)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param("To get the exact price, check the store's website. It's usually about $4.",
                     id="pointer-then-a-figure"),
        pytest.param("To calculate the cost, you'll need the wattage. So, running it all month "
                     "costs about $40.", id="needs-then-concludes-a-figure"),
        pytest.param("Don't worry: 3 litres is plenty for that.", id="dont-worry-then-a-figure"),
        pytest.param("Zero minutes of waiting are needed; just drive straight there.",
                     id="zero-without-a-prohibition"),
    ],
)
def test_near_misses_of_a_rejected_premise_stay_answers(reply: str) -> None:
    question = "How much will it take?"
    assert outcome(grade(_item("number", [], question, answerable=False), reply)) == (True, False)


def test_a_zero_with_a_prohibition_is_graded_on_an_answerable_item() -> None:
    # the premise rules read refusal-required items only: here "zero" is the answer
    reply = "0 litres. Don't add any water at all; the mix is ready to use."
    question = "How many litres of water should I add to the ready-mixed plaster?"
    assert outcome(grade(_item("number", ["0"], question), reply)) == (True, True)
