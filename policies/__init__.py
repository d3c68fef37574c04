"""Pure decision math of utilityguard: utilities, thresholds, expected utility.

numpy only, no I/O. Every function takes scalars or arrays and returns the same kind.
"""

from policies.decision import (
    DEFAULT_C_R,
    answer_threshold,
    expected_cost_lognormal,
    expected_utility,
    expected_utility_values,
    refusal_expected_utility,
    refusal_expected_utility_values,
    should_answer,
)
from policies.utility import (
    refusal_utility,
    refusal_utility_values,
    response_gain,
    response_gain_values,
    response_utility,
    response_utility_values,
)

__all__ = [
    "DEFAULT_C_R",
    "answer_threshold",
    "expected_cost_lognormal",
    "expected_utility",
    "expected_utility_values",
    "refusal_expected_utility",
    "refusal_expected_utility_values",
    "refusal_utility",
    "refusal_utility_values",
    "response_gain",
    "response_gain_values",
    "response_utility",
    "response_utility_values",
    "should_answer",
]
