"""Pure decision math of utilityguard: utilities, thresholds, expected utility, budgets.

numpy only, no I/O. Every function takes scalars or arrays and returns the same kind, and
every one takes its arguments in one order: what is decided on first (``p``, ``cost``; the
utilities: ``answerable, answered, correct, cost``), then the price or the budget (``c_r``,
``budget``, ``budgets``, ``c_rs``), then ``alpha`` and ``weight`` by keyword. Its errors and
the checks of one value come from :mod:`utilityguard_base`, below it.
"""

from policies.budget import (
    answered_at,
    expected_welfare,
    refusal_count,
    solve_budget,
)
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
from policies.frontier import (
    PAPER_C_R,
    budget_range,
    frontier,
    frontier_at,
    price_points,
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
    "PAPER_C_R",
    "answer_threshold",
    "answered_at",
    "budget_range",
    "expected_cost_lognormal",
    "expected_utility",
    "expected_utility_values",
    "expected_welfare",
    "frontier",
    "frontier_at",
    "price_points",
    "refusal_count",
    "refusal_expected_utility",
    "refusal_expected_utility_values",
    "refusal_utility",
    "refusal_utility_values",
    "response_gain",
    "response_gain_values",
    "response_utility",
    "response_utility_values",
    "should_answer",
    "solve_budget",
]
