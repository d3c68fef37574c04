"""The budget–welfare frontier ``P(R_max)`` and its slope ``C_R*(R_max)``.

On the guard's own estimates (``p``, ``E[L]``, ``alpha`` per item) the budgeted problem is a
linear program: maximize the expected immediate utility (an answer is worth
``q = p - (1 - p) L``, a refusal ``1 - alpha``) subject to the expected number of unnecessary
refusals, ``sum(alpha_i)`` over the refused items, being at most ``R_max``. Its value
``P(R_max)`` is concave and piecewise linear in ``R_max``, and its slope is the shadow price:
``C_R* = P'(R_max)`` wherever ``P`` is differentiable (a supergradient at the kinks). Fixing
``C_R`` — as the paper does with ``C_R = 2`` — selects one point of this curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from policies.budget import (
    C_R_SEARCH_MAX,
    BudgetSolution,
    answered_at,
    expected_welfare,
    refusal_count,
    solve_budget,
)
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]

#: The ``C_R`` values the paper reports (its default 2 and its 0..64 sensitivity range).
PAPER_C_R = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


@dataclass(frozen=True)
class Frontier:
    """``welfare[k] = P(budget[k])`` and ``c_r[k] = C_R*(budget[k])``, budgets as counts of
    expected unnecessary refusals, in increasing order; ``solutions[k]`` the decisions.

    Examples
    --------
    >>> frontier_at([0.9, 0.5, 0.3], [1.0, 8.0, 8.0], [1.0]).solutions[0].answer.tolist()
    [True, True, False]
    """

    budget: FloatArray
    welfare: FloatArray
    c_r: FloatArray
    solutions: tuple[BudgetSolution, ...]


def frontier_at(p: Any, cost: Any, budgets: Sequence[float], *, alpha: Any = 1.0) -> Frontier:
    """``P`` and ``C_R*`` at each budget (a count of expected unnecessary refusals).

    Examples
    --------
    Three answerable items whose answers are worth ``q = 0.8, -3.5, -5.3`` (a refusal: 0).
    The first allowed refusal goes to the third item and is worth 5.3, the second to the
    second item, worth 3.5; at a kink ``C_R*`` is the smaller end of the supergradients:

    >>> p, cost = [0.9, 0.5, 0.3], [1.0, 8.0, 8.0]
    >>> f = frontier_at(p, cost, [0.0, 0.5, 1.0, 1.5, 2.0])
    >>> [round(float(x), 3) for x in f.welfare]
    [-8.0, -5.35, -2.7, -0.95, 0.8]
    >>> [round(float(x), 3) for x in f.c_r]
    [5.3, 5.3, 3.5, 3.5, 0.0]
    """
    sols = tuple(solve_budget(p, cost, float(b), alpha=alpha, weight=alpha)
                 for b in sorted(budgets))
    welfare = np.array([expected_welfare(p, cost, s.answer_probability, alpha=alpha)
                        for s in sols])
    return Frontier(budget=np.array([s.budget for s in sols]), welfare=welfare,
                    c_r=np.array([s.c_r for s in sols]), solutions=sols)


def budget_range(p: Any, cost: Any, *, alpha: Any = 1.0,
                 c_r_max: float = C_R_SEARCH_MAX) -> tuple[float, float]:
    """The budgets that matter: the expected refusal count at ``c_r_max`` (the fewest any
    price reaches: the model's own refusals and hopeless answers) and at ``C_R = 0`` (more
    budget than this buys nothing).

    Examples
    --------
    >>> budget_range([0.9, 0.5, np.nan], [1.0, 8.0, 1.0])
    (1.0, 2.0)
    """
    return (refusal_count(p, cost, c_r_max, alpha=alpha, weight=alpha),
            refusal_count(p, cost, 0.0, alpha=alpha, weight=alpha))


def frontier(p: Any, cost: Any, *, alpha: Any = 1.0, points: int = 41) -> Frontier:
    """The frontier on ``points`` budgets evenly spaced over :func:`budget_range`.

    Examples
    --------
    >>> f = frontier([0.9, 0.5, 0.3], [1.0, 8.0, 8.0], points=3)
    >>> f.budget.tolist(), [round(float(c), 3) for c in f.c_r]
    ([0.0, 1.0, 2.0], [5.3, 3.5, 0.0])
    """
    if points < 2:
        raise InvalidValueError(f"points must be >= 2, got {points}")
    lo, hi = budget_range(p, cost, alpha=alpha)
    return frontier_at(p, cost, np.linspace(lo, hi, points).tolist(), alpha=alpha)


def price_points(p: Any, cost: Any, c_rs: Sequence[float], *, alpha: Any = 1.0
                 ) -> list[tuple[float, float, float]]:
    """``(C_R, R(C_R), P)`` for each fixed price: the point of the frontier that price selects
    (the guard's deterministic decisions at it, their expected refusals and welfare).

    Examples
    --------
    >>> [(c, r, round(w, 3)) for c, r, w in price_points([0.9, 0.5, 0.3], [1.0, 8.0, 8.0],
    ...                                                   [2.0, 4.0])]
    [(2.0, 2.0, 0.8), (4.0, 1.0, -2.7)]
    """
    out = []
    for c in c_rs:
        ans = answered_at(p, cost, float(c), alpha=alpha).astype(np.float64)
        out.append((float(c), refusal_count(p, cost, float(c), alpha=alpha, weight=alpha),
                    expected_welfare(p, cost, ans, alpha=alpha)))
    return out
