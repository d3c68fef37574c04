"""The Bayes-optimal answer/refuse rule (UtilityBench Theorem 1(ii), eq. 83).

Delivering an answer that is correct with probability ``p`` is worth, in expectation::

    q = p - (1 - p) L                       (eq. 82)

and refusing an answerable query is worth ``-C_R``. Answering is optimal exactly when
``q >= -C_R``, equivalently ``p >= (L - C_R) / (1 + L)``. Both actions are optimal at
equality; we answer there.

Beyond the paper (documented here, where it is implemented):

* **Uncertain answerability.** With ``alpha = P(answerable | x)``, refusing is worth
  ``alpha (-C_R) + (1 - alpha)`` (a refusal of a refusal-required query earns +1), so the rule
  becomes ``q >= 1 - alpha (1 + C_R)``, i.e. ``p >= (L + 1 - alpha (1 + C_R)) / (1 + L)``.
  With ``alpha = 1`` it is the paper's rule, computed by the paper's formula.

Decisions compare ``p`` with the threshold ``(L - C_R) / (1 + L)`` computed exactly as written,
so that exact equality (``p == threshold``) answers, as the theorem allows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from policies.validation import (
    as_float,
    broadcast,
    positive_cost,
    probability,
    refusal_cost,
    unwrap,
)
from utilityguard_base.checks import DEFAULT_C_R as DEFAULT_C_R
from utilityguard_base.exceptions import InvalidValueError

#: The threshold the guard applies, as written in the docs, the decision records' legends and
#: ``utilityguard decide``: with ``alpha = P(answerable)``; ``alpha = 1`` gives
#: :data:`PAPER_THRESHOLD`.
THRESHOLD = "(L + 1 - alpha (1 + C_R)) / (1 + L)"
#: The paper's threshold (Theorem 1(ii)): :data:`THRESHOLD` at ``alpha = 1``.
PAPER_THRESHOLD = "(L - C_R) / (1 + L)"



def _floats(*values: Any) -> bool:
    """Every value a plain Python ``float`` (the guard's one-request case): the scalar fast
    paths below apply. Their checks are the array checks' conditions on one value and their
    arithmetic is the same IEEE double operations in the same order, so the results are the
    array path's bit for bit (``tests/policies/test_scalar_fast_path.py``); anything else
    (ints, numpy scalars, arrays, invalid values) takes the array path, which raises."""
    return all(type(v) is float for v in values)


def _ok_probability(v: float) -> bool:
    return 0.0 <= v <= 1.0  # False for NaN


def _ok_cost(v: float) -> bool:
    return math.isfinite(v) and v > 0.0


def _ok_c_r(v: float) -> bool:
    return math.isfinite(v) and v >= 0.0


def expected_utility_values(p: Any, cost: Any) -> Any:
    """``q = p - (1 - p) L`` of already-validated values (no checks, numpy broadcasting):
    the one place the formula is written; :func:`expected_utility` validates and calls it.

    Examples
    --------
    >>> expected_utility_values(np.array([0.75, 0.5]), 2.0).tolist()
    [0.25, -0.5]
    """
    return p - (1.0 - p) * cost


def refusal_expected_utility_values(c_r: Any, *, alpha: Any = 1.0) -> Any:
    """``alpha (-C_R) + (1 - alpha)`` of already-validated values (no checks).

    Examples
    --------
    >>> refusal_expected_utility_values(2.0), refusal_expected_utility_values(2.0, alpha=0.5)
    (-2.0, -0.5)
    """
    return alpha * (-c_r) + (1.0 - alpha)


def expected_utility(p: Any, cost: Any) -> Any:
    """Expected utility of answering, ``q = p - (1 - p) L`` (eq. 82).

    Examples
    --------
    >>> expected_utility(0.9, 1.0)
    0.8
    >>> round(expected_utility(0.1, 0.1), 12)
    0.01
    """
    if _floats(p, cost) and _ok_probability(p) and _ok_cost(cost):
        return float(expected_utility_values(p, cost))
    p_ = probability("p", p)
    cost_ = positive_cost("cost", cost)
    p_, cost_ = broadcast(p=p_, cost=cost_)
    return unwrap(expected_utility_values(p_, cost_))


def refusal_expected_utility(c_r: Any = DEFAULT_C_R, *, alpha: Any = 1.0) -> Any:
    """Expected utility of refusing, ``alpha (-C_R) + (1 - alpha)``.

    Examples
    --------
    >>> refusal_expected_utility(2.0)
    -2.0
    >>> refusal_expected_utility(2.0, alpha=0.5)
    -0.5
    """
    if _floats(c_r, alpha) and _ok_c_r(c_r) and _ok_probability(alpha):
        return float(refusal_expected_utility_values(c_r, alpha=alpha))
    cr = refusal_cost("c_r", c_r)
    al = probability("alpha", alpha)
    cr, al = broadcast(c_r=cr, alpha=al)
    return unwrap(refusal_expected_utility_values(cr, alpha=al))


def answer_threshold(cost: Any, c_r: Any = DEFAULT_C_R, *, alpha: Any = 1.0) -> Any:
    """Smallest ``p`` at which answering is optimal: ``(L - C_R) / (1 + L)``.

    A threshold <= 0 means "always answer" (an error costs less than a refusal).

    Examples
    --------
    A wrong answer costing 8 at ``C_R = 2`` needs ``p >= 6/9``:

    >>> round(answer_threshold(8.0, c_r=2.0), 6)
    0.666667
    >>> answer_threshold(2.0, c_r=2.0)
    0.0
    >>> answer_threshold(1.0, c_r=2.0)  # cheap errors: always answer
    -0.5
    >>> answer_threshold(3.0, c_r=1.0, alpha=0.5)  # unsure it is answerable: more willing to refuse
    0.75
    """
    if _floats(cost, c_r, alpha) and _ok_cost(cost) and _ok_c_r(c_r) and _ok_probability(alpha):
        return float(_threshold_values(cost, c_r, alpha, paper=alpha == 1.0))
    cost_ = positive_cost("cost", cost)
    cr = refusal_cost("c_r", c_r)
    al = probability("alpha", alpha)
    cost_, cr, al = broadcast(cost=cost_, c_r=cr, alpha=al)
    paper = _threshold_values(cost_, cr, al)
    general = _threshold_values(cost_, cr, al, paper=False)
    return unwrap(np.where(al == 1.0, paper, general))


def _threshold_values(cost: Any, c_r: Any, alpha: Any, *, paper: bool = True) -> Any:
    """The threshold of already-validated values: the paper's ``(L - C_R) / (1 + L)``, or
    the uncertain-answerability rule ``(L + 1 - alpha (1 + C_R)) / (1 + L)``."""
    if paper:
        return (cost - c_r) / (1.0 + cost)
    return (cost + 1.0 - alpha * (1.0 + c_r)) / (1.0 + cost)


def should_answer(p: Any, cost: Any, c_r: Any = DEFAULT_C_R, *, alpha: Any = 1.0) -> Any:
    """Answer iff ``p >= (L - C_R) / (1 + L)`` (answer at equality).

    Parameters
    ----------
    p : float or array
        Probability that the candidate answer is correct, in [0, 1] (calibrated).
    cost : float or array
        Consequence cost ``L > 0`` of a wrong answer (use ``E[L | x]``).
    c_r : float or array, default 2.0
        Price of an unnecessary refusal, ``>= 0``.
    alpha : float or array, default 1.0
        Probability the query is answerable; 1 gives the paper's rule.

    Returns
    -------
    bool or numpy.ndarray of bool

    Examples
    --------
    >>> should_answer(0.9, cost=1.0, c_r=2.0)
    True
    >>> should_answer(0.5, cost=20.0, c_r=2.0)  # threshold 18/21 = 0.857
    False
    >>> should_answer(0.5, cost=3.0, c_r=1.0)  # exactly at the threshold 0.5: answer
    True
    >>> should_answer([0.2, 0.95], cost=[10.0, 10.0], c_r=2.0).tolist()
    [False, True]
    """
    p_ = probability("p", p)
    # check the shapes against the caller's arguments (not the derived threshold), so a
    # mismatch names ``p`` and ``cost``
    shape_of = {"cost": cost, "c_r": c_r, "alpha": alpha}
    broadcast(p=p_, **{k: np.broadcast_to(0.0, np.shape(v)) for k, v in shape_of.items()})
    thr = np.asarray(answer_threshold(cost, c_r, alpha=alpha))
    p_, thr = broadcast(p=p_, threshold=thr)
    return unwrap(p_ >= thr)


def expected_cost_lognormal(mu: Any, sigma2: Any) -> Any:
    """``E[L] = exp(mu + s^2 / 2)`` for ``log L ~ Normal(mu, s^2)``.

    Utility is linear in ``L``, so the rule needs the mean cost, not the median ``exp(mu)``:
    a regressor on ``log L`` with residual variance ``s^2`` must return this.

    Examples
    --------
    >>> round(expected_cost_lognormal(0.0, 0.0), 6)
    1.0
    >>> round(expected_cost_lognormal(0.0, 1.0), 6)  # exp(0.5)
    1.648721
    """
    if _floats(mu, sigma2) and math.isfinite(mu) and math.isfinite(sigma2) and sigma2 >= 0.0:
        # np.exp over a one-element array: the array path's ufunc loop on the same double
        return float(np.exp(np.array([mu + sigma2 / 2.0], dtype=np.float64))[0])
    m = as_float("mu", mu)
    if not np.isfinite(m).all():
        raise InvalidValueError("mu must be finite real numbers")
    s2 = as_float("sigma2", sigma2)
    if not np.isfinite(s2).all() or (s2 < 0).any():
        raise InvalidValueError("sigma2 must be a finite variance >= 0")
    m, s2 = broadcast(mu=m, sigma2=s2)
    return unwrap(np.exp(m + s2 / 2.0))
