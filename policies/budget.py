"""The follow-up budget and its shadow price ``C_R`` (UtilityBench Appendix C.1).

An unnecessary refusal leaves an answerable request unresolved; someone must follow it up,
and that capacity is a budget ``R_max``. Maximizing expected immediate utility (correct answer
+1, wrong answer ``-L``, appropriate refusal +1, unnecessary refusal 0) subject to::

    sum_i  r_i * P(refuse i)  <=  R_max          (r_i: 1 if i is answerable, or alpha_i)

has one Lagrange multiplier, ``C_R*``: the penalized problem at ``C_R = C_R*`` is the guard's
rule (answer iff ``q >= 1 - alpha (1 + C_R)``), and ``C_R* = P'(R_max)`` is the welfare one more
allowed unnecessary refusal buys. The rule answers more as ``C_R`` grows, so the refusal count
``R(C_R)`` falls monotonically and a bisection on ``C_R`` finds the smallest price whose count
fits the budget. At that price the items exactly at the boundary may be refused at random
(the randomization the LP allows) so that the expected count meets a binding budget exactly.

Every decision here is the guard's own rule, :func:`policies.answer_threshold`; an item with
no candidate answer (``p`` NaN: the model refused) is refused at every price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from policies.decision import answer_threshold, expected_utility_values
from policies.validation import as_float, broadcast, positive_cost, probability
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Largest ``C_R`` the solver searches by default (the paper's sensitivity range is 0..64).
C_R_SEARCH_MAX = 1e6


def answered_at(p: Any, cost: Any, c_r: float, *, alpha: Any = 1.0) -> BoolArray:
    """The guard's decisions at price ``c_r``: answer iff ``p >= answer_threshold(L, C_R,
    alpha)``; a NaN ``p`` (no candidate answer) is never answered.

    Examples
    --------
    >>> answered_at([0.9, 0.5, np.nan], [8.0, 8.0, 1.0], 2.0).tolist()
    [True, False, False]
    >>> answered_at([0.9, 0.5, np.nan], [8.0, 8.0, 1.0], 10.0).tolist()  # a higher price
    [True, True, False]
    """
    p_ = _p_or_nan(p)
    have = np.isfinite(p_)
    thr = np.asarray(answer_threshold(cost, c_r, alpha=alpha), dtype=np.float64)
    p_, thr = broadcast(p=p_, threshold=thr)
    out: BoolArray = np.asarray(have & (np.where(have, p_, 0.0) >= thr), dtype=bool)
    return out


@dataclass(frozen=True)
class BudgetSolution:
    """The solution of the budgeted problem on one set of items.

    ``c_r`` is ``C_R*``; ``answer`` the decisions at ``c_r`` (answer at equality, as the
    guard does); ``boundary`` the items the rule answers at ``c_r`` but not just below it;
    ``refuse_probability`` the probability of refusing each boundary item that makes the
    expected count equal a binding budget; ``refused`` the weighted refusal count at ``c_r``
    (deterministic) and ``refused_expected`` with the boundary randomized. ``binding`` is False
    when the budget is not exhausted at ``C_R = 0`` (price 0); ``feasible`` False when even
    ``c_r_max`` refuses more than the budget (then ``c_r = c_r_max``).

    Examples
    --------
    >>> s = solve_budget([0.9, 0.5, 0.3], [1.0, 8.0, 8.0], 1.5)
    >>> s.answer_probability.tolist()  # the boundary item answered half the time
    [1.0, 0.5, 0.0]
    """

    c_r: float
    budget: float
    answer: BoolArray
    boundary: BoolArray
    refuse_probability: float
    refused: float
    refused_expected: float
    binding: bool
    feasible: bool

    @property
    def answer_probability(self) -> FloatArray:
        """``P(answer)`` per item under the randomized boundary decision."""
        x = self.answer.astype(np.float64)
        x[self.boundary] = 1.0 - self.refuse_probability
        return x


def _p_or_nan(p: Any) -> FloatArray:
    """``p`` as floats: NaN (no candidate answer) or a probability in [0, 1]."""
    try:
        p_ = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError("p must be probabilities in [0, 1] or NaN (no candidate "
                                "answer)") from exc
    probability("p", p_[~np.isnan(p_)])
    return p_


def _checked(p: Any, cost: Any, alpha: Any, weight: Any) -> tuple[FloatArray, ...]:
    p_ = _p_or_nan(p)
    c = positive_cost("cost", cost)
    a = probability("alpha", alpha)
    w = as_float("weight", weight)
    if not np.isfinite(w).all() or (w < 0).any():
        raise InvalidValueError("weight must be finite numbers >= 0 (1 for an answerable "
                                "item, 0 for a refusal-required one, or alpha)")
    out = broadcast(p=p_, cost=c, alpha=a, weight=w)
    return tuple(np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in out)


def refusal_count(p: Any, cost: Any, c_r: float, *, alpha: Any, weight: Any) -> float:
    """Weighted count of refusals at ``c_r``: ``sum(weight_i)`` over the refused items.

    With ``weight`` the answerability labels this counts unnecessary refusals; with
    ``weight = alpha`` it estimates them.

    Examples
    --------
    >>> p, cost, a = [0.9, 0.5, 0.3, np.nan], [8.0, 8.0, 8.0, 1.0], [1, 1, 0, 1]
    >>> refusal_count(p, cost, 2.0, alpha=1.0, weight=a)  # items 2 and 4 refused, answerable
    2.0
    >>> refusal_count(p, cost, 20.0, alpha=1.0, weight=a)  # only the model's own refusal
    1.0
    """
    p_, c, a, w = _checked(p, cost, alpha, weight)
    return float(w[~answered_at(p_, c, c_r, alpha=a)].sum())


def solve_budget(p: Any, cost: Any, budget: float, *, alpha: Any = 1.0, weight: Any = 1.0,
                 c_r_max: float = C_R_SEARCH_MAX, tol: float = 1e-9) -> BudgetSolution:
    """The smallest ``C_R`` whose weighted refusal count is at most ``budget``, by bisection
    on ``C_R`` (the count is non-increasing in it), with the randomized boundary decision.

    Parameters
    ----------
    p, cost : array
        Per item: calibrated ``P(correct)`` (NaN: no candidate answer, always refused) and
        ``E[L]``, as the guard decides with them.
    budget : float
        ``R_max``, a count (``rate * answerable items`` for a rate), ``>= 0``.
    alpha : array
        Per item: ``P(answerable)``.
    weight : array
        What one refusal of the item uses of the budget: its answerability label (0/1) where
        known, ``alpha`` where not.
    c_r_max : float
        The largest price searched; above it the budget is reported infeasible.
    tol : float
        Bisection stops when the bracket is narrower than ``tol * max(1, C_R)``.

    Examples
    --------
    Four answerable items; item 0 is answered at any price, item 1 from ``C_R = 3.5``,
    item 2 from ``C_R = 5.3``, item 3 never (the model refused):

    >>> p, cost = [0.9, 0.5, 0.3, np.nan], [8.0, 8.0, 8.0, 1.0]
    >>> s = solve_budget(p, cost, 2.0)
    >>> round(s.c_r, 6), s.answer.tolist(), s.refused, s.binding
    (3.5, [True, True, False, False], 2.0, True)
    >>> s = solve_budget(p, cost, 1.5)  # item 2 answered from 5.3, refused half the time there
    >>> round(s.c_r, 6), s.boundary.tolist(), s.refuse_probability, s.refused_expected
    (5.3, [False, False, True, False], 0.5, 1.5)
    >>> solve_budget(p, cost, 0.5).feasible  # the model's own refusal alone uses 1
    False
    >>> solve_budget(p, cost, 3.0).c_r  # three refusals allowed: price 0 already fits
    0.0
    """
    if not np.isfinite(budget) or budget < 0:
        raise InvalidValueError(f"budget must be a finite count >= 0, got {budget}")
    if not np.isfinite(c_r_max) or c_r_max <= 0:
        raise InvalidValueError(f"c_r_max must be a finite number > 0, got {c_r_max}")
    p_, c, a, w = _checked(p, cost, alpha, weight)

    def count(x: float) -> float:
        return float(w[~answered_at(p_, c, x, alpha=a)].sum())

    slack = 1e-9 * max(1.0, float(w.sum()))  # float sums of alphas: equal means equal
    if count(0.0) <= budget + slack:
        lo = hi = 0.0
    elif count(c_r_max) > budget + slack:
        lo = hi = c_r_max
    else:
        lo, hi = 0.0, 1.0
        while count(hi) > budget + slack:  # grow the bracket (prices span orders of magnitude)
            lo, hi = hi, min(hi * 4.0, c_r_max)
        while hi - lo > tol * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if count(mid) > budget + slack else (lo, mid)
    ans = answered_at(p_, c, hi, alpha=a)
    boundary = ans & ~answered_at(p_, c, lo, alpha=a) if hi > 0 else np.zeros_like(ans)
    refused = float(w[~ans].sum())
    at_edge = float(w[boundary].sum())
    theta = 0.0
    if at_edge > 0 and hi < c_r_max:
        theta = float(np.clip((budget - refused) / at_edge, 0.0, 1.0))
    return BudgetSolution(
        c_r=float(hi), budget=float(budget), answer=ans, boundary=boundary,
        refuse_probability=theta, refused=refused, refused_expected=refused + theta * at_edge,
        binding=hi > 0, feasible=count(hi) <= budget + slack)


def expected_welfare(p: Any, cost: Any, answer_probability: Any, *, alpha: Any = 1.0) -> float:
    """Expected immediate utility (the budgeted problem's objective, no refusal penalty):
    an answer is worth ``q = p - (1 - p) L``, a refusal ``1 - alpha`` (an appropriate refusal
    earns 1, an unnecessary one 0); an item without a candidate answer is a refusal.

    Examples
    --------
    >>> expected_welfare([0.9, 0.5], [8.0, 8.0], [1.0, 0.0], alpha=[1.0, 0.5])  # 0.1 + 0.5
    0.6
    """
    x = as_float("answer_probability", answer_probability)
    p_, c, a, _ = _checked(p, cost, alpha, 0.0)
    q = np.where(np.isfinite(p_), expected_utility_values(np.nan_to_num(p_), c), 0.0)
    x, q, a = broadcast(answer_probability=x, q=q, alpha=a)
    return float(np.round(np.sum(x * q + (1.0 - x) * (1.0 - a)), 12))
