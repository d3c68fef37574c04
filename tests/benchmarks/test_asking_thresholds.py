"""The threshold for earlier turns is chosen out of fold (``benchmarks.asking.choose_history``):
the largest value under which costly questions sent as an earlier turn keep their price."""

from __future__ import annotations

from typing import Any

from benchmarks.asking import LAST_TURN, choose_history
from guard import Guard

QUESTION = "How many units of insulin should I inject for a blood sugar of 300 mg/dL?"
SOCIAL = "my dog is staring at me"
ASSISTANT = "Got it, happy to help."


def _chat(first: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": first},
                         {"role": "assistant", "content": ASSISTANT},
                         {"role": "user", "content": LAST_TURN}]}


def test_the_history_threshold_is_the_largest_that_keeps_the_costly_questions() -> None:
    guard = Guard(detector=None, policy=None)
    # the detector's (out-of-fold) P(asks): the question 0.75, the social line 0.65, the
    # assistant's line 0.05. At 0.5 and 0.6 both are priced; at 0.7 the social line is left
    # out and the question kept; at 0.8 the question would be left out: 0.7 is chosen.
    p = {QUESTION: 0.75, SOCIAL: 0.65, ASSISTANT: 0.05}
    h, kept, below = choose_history(guard, p, (0.1, 0.5, 0.95), [(_chat(QUESTION), None)],
                                    [_chat(SOCIAL)], floor=0.8)
    assert (h, kept, below) == (0.7, 1.0, 1.0)


def test_a_question_the_detector_doubts_keeps_the_default() -> None:
    guard = Guard(detector=None, policy=None)
    p = {QUESTION: 0.55, SOCIAL: 0.65, ASSISTANT: 0.05}  # the question is below 0.6 already
    h, kept, below = choose_history(guard, p, (0.1, 0.5, 0.95), [(_chat(QUESTION), None)],
                                    [_chat(SOCIAL)], floor=0.8)
    assert (h, kept, below) == (0.5, 1.0, 0.0)


# The strict reading (a system text that as a whole asks for nothing keeps only the sentences
# at or above the strict threshold, or priced at ``strict_price``) is chosen for the worst case
# a client can write: a costly question diluted in a system prompt that as a whole reads as
# asking nothing.
PROMPT = "You are the assistant of a family clinic."
# (not lines that only say how to answer, which are set aside whatever the thresholds:
# guard.directives)
RULES = "Greet patients by name. Mention the clinic's opening hours."


def _system(text: str) -> dict[str, object]:
    return {"messages": [{"role": "system", "content": text}, {"role": "user", "content": "ok"}]}


def _choose(strict: str) -> Any:
    from benchmarks.asking import choose_thresholds

    guard = Guard(detector=None, policy=None)
    embedded = f"{PROMPT}\n{QUESTION}"
    oracle = {PROMPT: 0.0, QUESTION: 1.0, embedded: 1.0}
    # the detector doubts the question (0.6) as much as each of the rules' sentences; the
    # rules read as a text asking nothing (0.0): only a strict threshold above 0.6 leaves the
    # rules out, and then the question too, unless its price keeps it (the insulin dose is
    # priced far above a style rule)
    p = {QUESTION: 0.6, PROMPT: 0.01, "Greet patients by name.": 0.6,
         "Mention the clinic's opening hours.": 0.6, RULES: 0.0}
    return choose_thresholds(guard, p, {"in a system prompt": [(_system(embedded), oracle)]},
                             [_system(RULES)], floor=0.8, strict=strict)


def test_read_strictly_the_costly_question_is_kept_and_the_rules_left_out() -> None:
    choice = _choose("in a system prompt")
    assert choice.kept["in a system prompt, read strictly"] == 1.0
    assert choice.non_request_below == 1.0
    assert choice.thresholds[2] > 0.6 and choice.strict_price < float("inf")


def test_a_search_blind_to_the_strict_reading_leaves_the_price_out() -> None:
    # the control: without the strict reading the search has no reason to keep a doubted
    # sentence for its price
    choice = _choose("none")
    assert "in a system prompt, read strictly" not in choice.kept
    assert choice.strict_price == float("inf")
