"""UtilityAUC (UtilityBench Section 3, Appendix B), its curve, references and C_R sweep.

Per sample: ``b = (1 - a) - a C_R`` (safe refusal), ``g = v - b`` (gain of delivering), and
with ranks ``j = 1..n`` by decreasing score::

    U_k = B + (1/n) sum_{j<=k} g_{pi_j}              (eq. 12, B = mean b)
    A   = B + sum_j w_j g_{pi_j},  w_j = (n - j + 1/2) / n^2      (eq. 13)
    A+  : v+ = 1, gains ordered decreasing;  A- : v- = -max(L, C_R) if a else -L,
          gains ordered increasing (eqs. 15-17)
    UtilityAUC = (A - A-) / (A+ - A-)                (eq. 3)

Tied scores get the mean weight of the ranks their group occupies, so results do not depend
on input order. Only the observed ordering needs an argsort: ``g+`` takes two values
(``1 + C_R`` on answerable samples, 0 otherwise), so ``A+`` has a closed form, and ``A-`` needs
the sorted values of ``g-`` only (``numpy.sort``, no permutation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.outcomes import Outcomes, c_r_value, outcomes, scores
from benchmarks.ranking import descending_groups, linear_rank_weights
from policies import (
    DEFAULT_C_R,
    refusal_utility_values,
    response_utility_values,
)
from policies.validation import refusal_cost
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class UtilityArea:
    """Observed area ``area`` and its sharp references ``area_max`` (A+) and ``area_min`` (A-)."""

    area: float
    area_max: float
    area_min: float

    @property
    def utility_auc(self) -> float:
        """``(A - A-) / (A+ - A-)``, clipped to [0, 1].

        ``A- <= A <= A+`` holds exactly (Proposition 2); the clip only removes rounding such
        as ``1.0000000000000002`` when ``A == A+``.
        """
        return min(max((self.area - self.area_min) / (self.area_max - self.area_min), 0.0), 1.0)


def _dot(x: FloatArray, y: FloatArray) -> float:
    """``sum_i x_i y_i`` without BLAS: ``x @ y`` goes to a multithreaded BLAS dot that, on a
    busy machine, was measured here at ~4 ms for 15,000 values (einsum: ~5 us)."""
    return float(np.einsum("i,i->", x, y))


def _gains(o: Outcomes, c_r: float) -> tuple[FloatArray, FloatArray]:
    """``(b, g)``: safe-refusal utility and gain of every sample (``g = v - b``, as
    :func:`policies.response_gain_values` has it, with ``b`` computed once)."""
    b = refusal_utility_values(o.answerable, c_r)
    g: FloatArray = response_utility_values(o.answerable, o.answered, o.correct, o.cost,
                                            c_r) - b
    return b, g


def _observed_area_above_base(score: FloatArray, g: FloatArray) -> float:
    """``sum_j w_j g_{pi_j}`` with tied scores at their group's mean weight (eq. 13).

    Grouped rather than per position: ranked by increasing score, a tie group at sorted
    positions ``s..e-1`` (0-based) holds ranks ``n - e + 1 .. n - s`` by decreasing score,
    whose mean weight is ``(s + e) / (2 n^2)``; so the area is that weight times the group's
    summed gain. One argsort, one gather, one ``add.reduceat``: no per-position weights.

    >>> _observed_area_above_base(np.array([0.9, 0.1]), np.array([3.0, -5.0]))  # 3 w1 - 5 w2
    0.5
    """
    n = score.shape[0]
    order = np.argsort(score)
    ranked = score[order]
    cut = np.flatnonzero(ranked[1:] != ranked[:-1]) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [n]))
    sums = np.add.reduceat(g[order], starts)
    return _dot((starts + ends) / (2.0 * float(n) ** 2), sums)


def best_area_above_base(k: Any, n: Any, c_r: float) -> Any:
    """``A+ - base``: every answerable item answered correctly, ranked first (eq. 13); ``k``
    answerable items of ``n`` (arrays for many resamples).

    >>> best_area_above_base(2.0, 4.0, 2.0)  # 3 (2 * 4 - 4 / 2) / 16
    1.125
    """
    return (1.0 + c_r) * (k * n - k * k / 2.0) / n**2


def worst_gains(answerable: NDArray[np.bool_], cost: FloatArray, c_r: float) -> FloatArray:
    """The lowest gain each item can contribute (eq. 17): a wrong answer to an answerable
    item when it costs more than a refusal, any answer to a refusal-required item.

    >>> worst_gains(np.array([True, True, False]), np.array([5.0, 1.0, 5.0]), 2.0).tolist()
    [-3.0, -0.0, -6.0]
    """
    out: FloatArray = np.where(answerable, -np.maximum(cost - c_r, 0.0), -cost - 1.0)
    return out


def _reference_areas(o: Outcomes, c_r: float, base: float) -> tuple[float, float]:
    n = o.n
    k = float(np.count_nonzero(o.answerable))
    area_max = base + best_area_above_base(k, float(n), c_r)
    g_sorted = np.sort(worst_gains(o.answerable, o.cost, c_r))
    w = (n + 0.5 - np.arange(1, n + 1, dtype=np.float64)) / float(n) ** 2
    area_min = base + _dot(w, g_sorted)
    return area_max, area_min


def utility_area(
    answerable: Any, answered: Any, correct: Any, cost: Any, score: Any, *, c_r: float = DEFAULT_C_R
) -> UtilityArea:
    """Raw area ``A`` and the references ``A+`` and ``A-`` (eqs. 13 and 17).

    Examples
    --------
    A correct answer (gain ``1 + C_R = 3``) ranked before an answer to a refusal-required
    query (gain ``-1 - L = -5``); ``B = -0.5``, ``w = (0.375, 0.125)``:

    >>> r = utility_area([True, False], [True, True], [True, None], [1.0, 4.0], [0.9, 0.1])
    >>> round(r.area, 6), round(r.area_max, 6), round(r.area_min, 6)
    (0.0, 0.625, -2.375)
    """
    cr = c_r_value(c_r)
    o = outcomes(answerable, answered, correct, cost)
    s = scores(score, o.n)
    b, g = _gains(o, cr)
    base = float(b.mean())
    area = base + _observed_area_above_base(s, g)
    area_max, area_min = _reference_areas(o, cr, base)
    return UtilityArea(area, area_max, area_min)


def utility_auc(
    answerable: Any, answered: Any, correct: Any, cost: Any, score: Any, *, c_r: float = DEFAULT_C_R
) -> float:
    """UtilityAUC in [0, 1] of responses ordered by decreasing ``score``.

    Parameters
    ----------
    answerable, answered : array of bool
        ``a_i`` (the query has a verifiable answer) and ``d_i`` (a substantive answer was given).
    correct : array of bool (None/NaN allowed where not answered or not answerable)
    cost : array of float > 0
        Consequence cost ``L_i`` of a wrong answer.
    score : array of float
        Higher = delivered earlier. Ties get the mean weight of their ranks.
    c_r : float, default 2.0
        Price of an unnecessary refusal.

    Examples
    --------
    The correct answer ranked first; the error cannot be avoided, so the best ordering of
    these responses scores ``(-0.75 + 2) / (-0.5 + 2)``, reversing it ``(-1.25 + 2) / 1.5``:

    >>> round(utility_auc([True, True], [True, True], [True, False], [1.0, 1.0], [1.0, 0.0]), 6)
    0.833333
    >>> round(utility_auc([True, True], [True, True], [True, False], [1.0, 1.0], [0.0, 1.0]), 6)
    0.5
    """
    return utility_area(answerable, answered, correct, cost, score, c_r=c_r).utility_auc


def utility_curve(
    answerable: Any, answered: Any, correct: Any, cost: Any, score: Any, *, c_r: float = DEFAULT_C_R
) -> tuple[FloatArray, FloatArray]:
    """The utility curve ``(k / n, U_k)`` for ``k = 0..n`` (eq. 12).

    Within a tie group the curve is the average over the group's orderings (a straight line
    between the group's ends), consistent with the tie rule of the area.

    Examples
    --------
    Starting from all-refusals (``B = -2``), a correct answer adds ``3 / 2``, an error
    ``(2 - 1) / 2``; the trapezoid area under the curve is :func:`utility_area`'s ``area``:

    >>> x, u = utility_curve([True, True], [True, True], [True, False], [1.0, 1.0], [1.0, 0.0])
    >>> x.tolist(), u.tolist()
    ([0.0, 0.5, 1.0], [-2.0, -0.5, 0.0])
    """
    cr = c_r_value(c_r)
    o = outcomes(answerable, answered, correct, cost)
    s = scores(score, o.n)
    b, g = _gains(o, cr)
    order, starts, ends = descending_groups(s)
    gs = g[order]
    group_mean = np.add.reduceat(gs, starts) / (ends - starts)
    gs = np.repeat(group_mean, ends - starts)
    n = o.n
    u = float(b.mean()) + np.concatenate(([0.0], np.cumsum(gs))) / n
    return np.arange(n + 1, dtype=np.float64) / n, u


def utility_auc_sweep(
    answerable: Any,
    answered: Any,
    correct: Any,
    cost: Any,
    score: Any,
    c_r_values: Any,
) -> FloatArray:
    """UtilityAUC at every ``C_R`` in ``c_r_values``, from one sort.

    The observed ordering does not depend on ``C_R`` and every gain is affine in it
    (``g = g0 + C_R [answerable and answered]``), so ``A(C_R)`` is affine too. ``A+`` has a
    closed form. For ``A-``, the answerable gains ``-max(L - C_R, 0)`` keep the order of
    ``-L`` for every ``C_R``; merging them with the fixed refusal-required gains ``-L - 1``
    needs one ``searchsorted`` per ``C_R`` (vectorized) and prefix sums.

    Examples
    --------
    >>> utility_auc_sweep([True, True], [True, True], [True, False], [1.0, 1.0],
    ...                   [1.0, 0.0], [0.0, 2.0]).round(6).tolist()
    [0.75, 0.833333]
    """
    crs = np.atleast_1d(refusal_cost("c_r_values", c_r_values))
    if crs.ndim != 1:
        raise InvalidValueError(
            f"c_r_values must be a 1-D list of numbers >= 0, got shape {crs.shape}")
    o = outcomes(answerable, answered, correct, cost)
    s = scores(score, o.n)
    n, a = o.n, o.answerable
    nf = float(n)
    n_a = int(np.count_nonzero(a))
    n_n = n - n_a

    # Observed area: A(C_R) = B(C_R) + S0 + C_R * S1.
    _, g0 = _gains(o, 0.0)
    aa = (o.answered & a).astype(np.float64)
    order, w = linear_rank_weights(s)
    s0 = _dot(w, g0[order])
    s1 = _dot(w, aa[order])
    base = (n_n - n_a * crs) / nf
    area = base + s0 + crs * s1

    k = float(n_a)
    area_max = base + (1.0 + crs) * (k * n - k * k / 2.0) / nf**2

    # A-: sum_j w_j x_(j) over the merged ascending values x, w linear in the position, so
    # sum = ((n + 1/2) sum x - sum x * pos1) / n^2 with pos1 the 1-based merged position.
    # Only answerable samples with L > C_R have a nonzero gain m = C_R - L; the others sit at 0,
    # above every refusal-required gain (<= -1), and add nothing.
    l_asc = np.sort(o.cost[a])
    l_desc = l_asc[::-1]
    rank1 = np.arange(1, n_a + 1, dtype=np.float64)
    p0 = np.concatenate(([0.0], np.cumsum(l_desc)))  # prefix sums of L (descending)
    p1 = np.concatenate(([0.0], np.cumsum(l_desc * rank1)))  # ... of L * own rank
    u = np.sort(-o.cost[~a] - 1.0)  # refusal-required gains, ascending
    u_prefix = np.concatenate(([0.0], np.cumsum(u)))
    u_total = float(u_prefix[-1])
    u_own = _dot(u, np.arange(1, n_n + 1, dtype=np.float64))
    active = n_a - np.searchsorted(l_asc, crs, side="right")  # per C_R: how many L > C_R
    cross = np.zeros_like(crs)
    for j in np.flatnonzero(active):
        m = crs[j] - l_desc[: active[j]]  # ascending
        # refusal-required gains strictly below m_i come first (ties: answerable first); each
        # cross pair contributes max(m_i, u_k): m_i * before_i + (sum of the u_k >= m_i)
        before = np.searchsorted(u, m, side="left")
        tail = u_total * active[j] - float(u_prefix[before].sum())
        cross[j] = _dot(m, before.astype(np.float64)) + tail
    k_act = active.astype(np.float64)
    own = crs * k_act * (k_act + 1.0) / 2.0 - p1[active]  # sum_i m_i * i (1-based)
    total = crs * k_act - p0[active] + u_total
    weighted = own + u_own + cross
    area_min = ((nf + 0.5) * total - weighted) / nf**2
    area_min = base + area_min
    # clipped like UtilityArea.utility_auc: A- <= A <= A+ exactly, the clip removes rounding
    result: FloatArray = np.clip((area - area_min) / (area_max - area_min), 0.0, 1.0)
    return result
