"""Pure decision math of utilityguard: utilities, thresholds, expected utility.

numpy only, no I/O. Every function takes scalars or arrays and returns the same kind.
"""

from policies.decision import (
    answer_threshold,
    expected_cost_lognormal,
    expected_utility,
    refusal_expected_utility,
    should_answer,
)
from policies.utility import refusal_utility, response_gain, response_utility

__all__ = [
    "answer_threshold",
    "expected_cost_lognormal",
    "expected_utility",
    "refusal_expected_utility",
    "refusal_utility",
    "response_gain",
    "response_utility",
    "should_answer",
]
