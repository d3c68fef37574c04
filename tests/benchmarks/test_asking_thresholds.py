"""The threshold for earlier turns is chosen out of fold (``benchmarks.asking.choose_history``):
the largest value under which costly questions sent as an earlier turn keep their price."""

from __future__ import annotations

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
