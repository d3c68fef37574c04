"""Calibration of a correctness probability: expected calibration error and Brier score.

The decision rule ``p >= (L - C_R) / (1 + L)`` is only Bayes-optimal when ``p`` is calibrated,
so the bench reports how far a confidence is from a probability (RiskEval reports ECE-10 and
Brier next to its policy metrics)::

    ECE   = sum_b (n_b / n) |acc_b - conf_b|      equal-width bins over [0, 1]
    Brier = (1/n) sum_i (p_i - c_i)^2

Bin ``b`` (``0 <= b < B``) holds ``b/B <= p < (b+1)/B``; ``p = 1`` goes to the last bin. The
edges are the floats nearest to ``b/B``, so a confidence written as a decimal on an edge lands in
the bin it opens (``0.57`` in ``[0.57, 0.58)`` with 100 bins, where ``floor(0.57 * 100)`` would
give 56). Empty bins contribute nothing.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks._records import same_length
from policies._validate import as_bool, probability

FloatArray = NDArray[np.float64]


def _inputs(prob: Any, correct: Any) -> tuple[FloatArray, FloatArray]:
    p = probability("prob", prob)
    c = as_bool("correct", correct)
    same_length(prob=p, correct=c)
    return p, c.astype(np.float64)


def ece(prob: Any, correct: Any, n_bins: int = 10) -> float:
    """Expected calibration error with ``n_bins`` equal-width bins (ECE-10 by default).

    Parameters
    ----------
    prob : array of float in [0, 1]
        Stated probability that each answer is correct.
    correct : array of bool
        Whether each answer is correct.
    n_bins : int, default 10
        Number of equal-width bins over [0, 1], ``>= 1``.

    Returns
    -------
    float
        ``sum_b (n_b / n) |acc_b - conf_b|`` in [0, 1].

    Raises
    ------
    ValueError
        If ``prob`` is outside [0, 1] or NaN, ``correct`` is not boolean, the lengths differ,
        or ``n_bins`` is not an integer ``>= 1``.

    Examples
    --------
    Two answers at 0.9 (one right) and two at 0.2 (both wrong):
    ``(2/4) |0.5 - 0.9| + (2/4) |0 - 0.2| = 0.3``.

    >>> round(ece([0.9, 0.9, 0.2, 0.2], [True, False, False, False]), 12)
    0.3
    >>> ece([1.0, 0.0], [True, False])  # perfectly calibrated and sharp
    0.0

    Fewer bins pool over- and under-confidence (here ``|1 - 1.1| / 2``):

    >>> round(ece([0.9, 0.2], [True, False]), 12), round(ece([0.9, 0.2], [True, False], 1), 12)
    (0.15, 0.05)
    """
    try:
        k = -1 if isinstance(n_bins, bool) else operator.index(n_bins)  # ints, not 10.0
    except TypeError:
        k = -1
    if k < 1:
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    p, c = _inputs(prob, correct)
    edges = np.arange(k + 1, dtype=np.float64) / k
    bins = np.minimum(np.searchsorted(edges, p, side="right") - 1, k - 1)
    gap = np.bincount(bins, weights=c - p, minlength=k)
    return float(np.abs(gap).sum() / p.shape[0])


def brier(prob: Any, correct: Any) -> float:
    """Brier score ``mean((p - c)^2)`` in [0, 1], lower is better.

    Examples
    --------
    >>> round(brier([0.9, 0.2], [True, False]), 12)  # (0.01 + 0.04) / 2
    0.025
    >>> brier([0.5, 0.5], [True, False])
    0.25
    """
    p, c = _inputs(prob, correct)
    return float(np.mean((p - c) ** 2))
