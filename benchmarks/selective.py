"""Correctness-only selective metrics: AURC, eAURC, cost-weighted AURC and AUARC.

UtilityBench compares UtilityAUC with these in Appendix C.2.4-C.2.6. They are defined on
samples that received a substantive answer (the paper restricts them to answerable samples with
substantive candidate responses); select those rows before calling. With ranks ``j = 1..n`` by
decreasing score and the error indicator ``e = 1 - c``::

    R_k        = (1/k) sum_{j<=k} e_{pi_j}                     selective risk at coverage k/n
    AURC       = (1/n) sum_k R_k = sum_j alpha_j e_{pi_j}      (eqs. 48-49, Lemma 2)
    alpha_j    = (1/n) sum_{k=j}^{n} 1/k                        (alpha_1 > ... > alpha_n > 0)
    eAURC      = AURC - AURC_oracle                             (oracle: every correct first)
    CW-AURC    = sum_j alpha_j L_{pi_j} e_{pi_j}                (eqs. 74, 76)
    AUARC      = (1/n) sum_k (1/k) sum_{j<=k} c_{pi_j} = sum_j alpha_j c_{pi_j} = 1 - AURC

AUARC (RiskEval) is the mean accuracy of the retained set over the ``n`` coverage levels; since
``sum_j alpha_j = 1`` it equals ``1 - AURC`` under this (the paper's) discrete integration.

Tied scores get the mean of the weights ``alpha_j`` of the ranks their group occupies (the
paper's Appendix B rule), which equals the average over all within-group orderings; results do
not depend on input order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.ranking import tabulated_rank_weights
from policies.validation import as_bool, as_float, positive_cost, same_length

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def _aurc_weights(n: int) -> FloatArray:
    """Lemma 2's rank weights ``alpha_j = (1/n) sum_{k=j}^{n} 1/k``, ``j = 1..n``.

    Examples
    --------
    >>> _aurc_weights(2).tolist()
    [0.75, 0.25]
    """
    inv = 1.0 / np.arange(1, n + 1, dtype=np.float64)
    tail: FloatArray = np.cumsum(inv[::-1])[::-1] / float(n)
    return tail


def _inputs(correct: Any, score: Any) -> tuple[BoolArray, FloatArray]:
    c = as_bool("correct", correct)
    s = as_float("score", score)
    same_length(correct=c, score=s)
    return c, s


def _ranked_sum(values: FloatArray, score: FloatArray) -> float:
    """``sum_j alpha_j values_{pi_j}`` with tie-averaged ``alpha``."""
    order, w = tabulated_rank_weights(score, _aurc_weights(score.shape[0]))
    return float(np.einsum("i,i->", w, values[order]))  # no BLAS: see utility_auc._dot


def aurc(correct: Any, score: Any) -> float:
    """Area under the risk-coverage curve (Lemma 2), lower is better.

    Parameters
    ----------
    correct : array of bool
        Whether each substantive answer is correct.
    score : array of float
        Confidence; higher = kept at lower coverage. Ties get the mean weight of their ranks.

    Returns
    -------
    float
        ``sum_j alpha_j (1 - c_{pi_j})`` in [0, 1].

    Raises
    ------
    ValueError
        If an argument is not 1-D booleans/reals, contains NaN, or the lengths differ.

    Examples
    --------
    With ``n = 2`` the weights are ``alpha = (0.75, 0.25)``. An error ranked last costs 0.25,
    ranked first 0.75, and tied with the correct answer their mean:

    >>> aurc([True, False], [0.9, 0.1])
    0.25
    >>> aurc([True, False], [0.1, 0.9])
    0.75
    >>> aurc([True, False], [0.5, 0.5])
    0.5
    """
    c, s = _inputs(correct, score)
    return _ranked_sum((~c).astype(np.float64), s)


def eaurc(correct: Any, score: Any) -> float:
    """Excess AURC: ``AURC - AURC_oracle``, where the oracle ranks every correct answer first.

    ``AURC_oracle`` with ``m`` errors is ``sum_{j > n-m} alpha_j``. The result is ``>= 0`` (a
    tie-averaged AURC is a mean of AURCs of orderings); rounding below 0 is clipped.

    Examples
    --------
    >>> eaurc([True, False], [0.9, 0.1])  # already the oracle order
    0.0
    >>> eaurc([True, False], [0.1, 0.9])  # 0.75 - 0.25
    0.5
    >>> eaurc([True, True], [0.3, 0.7])  # no errors: nothing to rank
    0.0
    """
    c, s = _inputs(correct, score)
    n = c.shape[0]
    m = int(np.count_nonzero(~c))
    alpha = _aurc_weights(n)
    oracle = float(alpha[n - m :].sum())
    return max(_ranked_sum((~c).astype(np.float64), s) - oracle, 0.0)


def cw_aurc(correct: Any, cost: Any, score: Any) -> float:
    """Cost-weighted AURC (eq. 74): ``sum_j alpha_j L_{pi_j} e_{pi_j}``, lower is better.

    Its Bayes-optimal ordering is by increasing expected error cost ``(1 - p) L``, which can
    differ from UtilityAUC's decreasing ``q = p - (1 - p) L`` (Proposition 8): it ignores the
    value of a correct answer.

    Parameters
    ----------
    correct : array of bool
    cost : array of float > 0
        Consequence cost ``L_i`` of a wrong answer.
    score : array of float

    Examples
    --------
    An error of cost 4 ranked last (``alpha_2 = 0.25``), then first (``alpha_1 = 0.75``):

    >>> cw_aurc([True, False], [1.0, 4.0], [0.9, 0.1])
    1.0
    >>> cw_aurc([True, False], [1.0, 4.0], [0.1, 0.9])
    3.0
    """
    c = as_bool("correct", correct)
    cost_ = positive_cost("cost", cost)
    s = as_float("score", score)
    same_length(correct=c, cost=cost_, score=s)
    return _ranked_sum(np.where(c, 0.0, cost_), s)


def auarc(correct: Any, score: Any) -> float:
    """Area under the accuracy-rejection curve (RiskEval): ``1 - AURC``, higher is better.

    The mean, over coverages ``k/n``, of the accuracy of the ``k`` most confident answers.

    Examples
    --------
    >>> auarc([True, False], [0.9, 0.1])  # accuracy 1 at k = 1, 1/2 at k = 2
    0.75
    >>> auarc([True, False, True], [0.2, 0.2, 0.2])  # all tied: the accuracy, 2/3
    0.6666666666666666
    """
    c, s = _inputs(correct, score)
    return _ranked_sum(c.astype(np.float64), s)
