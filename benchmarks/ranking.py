"""Rank weights with the paper's tie rule.

Appendix B: "For tied scores, assign each response the mean weight of the ranks occupied by
its group." Ranks run ``j = 1..n`` by decreasing score. Because every rank weight used here is
either linear in ``j`` (UtilityAUC) or a tabulated sequence (AURC), tie groups are handled by
averaging the weights over each group's ranks, which equals the average over all within-group
orderings without enumerating them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


def descending_groups(score: FloatArray) -> tuple[IntArray, IntArray, IntArray]:
    """Order by decreasing score and the tie groups of that order.

    Returns ``(order, starts, ends)``: ``order`` sorts by decreasing score; group ``t`` occupies
    sorted positions ``starts[t]:ends[t]`` (0-based, end exclusive).
    """
    order = np.argsort(score)[::-1]
    s = score[order]
    n = s.shape[0]
    cut = np.flatnonzero(s[1:] != s[:-1]) + 1
    starts = np.concatenate(([0], cut)).astype(np.intp)
    ends = np.concatenate((cut, [n])).astype(np.intp)
    return order, starts, ends


def linear_rank_weights(score: FloatArray) -> tuple[IntArray, FloatArray]:
    """Per-position UtilityAUC weights ``w_j = (n - j + 1/2) / n^2``, tie-averaged.

    Returns ``(order, w)`` where ``w[k]`` is the weight of the sample at sorted position ``k``.
    """
    order, starts, ends = descending_groups(score)
    n = score.shape[0]
    if starts.shape[0] == n:  # no ties: plain weights
        j = np.arange(1, n + 1, dtype=np.float64)
    else:  # mean 1-based rank of each group, repeated over its members
        mean_rank = (starts + 1 + ends) / 2.0
        j = np.repeat(mean_rank, ends - starts)
    return order, (n - j + 0.5) / float(n) ** 2


def tabulated_rank_weights(score: FloatArray, alpha: FloatArray) -> tuple[IntArray, FloatArray]:
    """Per-position weights from a table ``alpha[j-1]``, averaged over each tie group."""
    order, starts, ends = descending_groups(score)
    if starts.shape[0] == score.shape[0]:
        return order, alpha
    csum = np.concatenate(([0.0], np.cumsum(alpha)))
    mean_alpha = (csum[ends] - csum[starts]) / (ends - starts)
    return order, np.repeat(mean_alpha, ends - starts)
