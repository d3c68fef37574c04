"""Calibration metrics (ECE-10, Brier) and validation of signal / label arrays.

Shared by :mod:`guard.calibration` and the benchmarks; re-exported from ``guard.calibration``.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from policies.validation import as_bool, same_length
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]


def as_signal_values(values: Any, name: str = "x") -> FloatArray:
    """``values`` as a 1-D float array; ``ValueError`` naming the first None / NaN / inf.

    Examples
    --------
    >>> as_signal_values([-0.1, -2]).tolist()
    [-0.1, -2.0]
    >>> as_signal_values([-0.1, None])
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidValueError: x[1] is None; a confidence signal must be a...
    """
    if type(values) is list and len(values) == 1 and type(values[0]) is float \
            and math.isfinite(values[0]):  # one reply's signal (the proxy's case)
        return np.array(values, dtype=np.float64)
    arr = np.asarray(values)
    if arr.ndim > 1:
        raise InvalidValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    if arr.dtype.kind in "fiu":
        out = np.atleast_1d(arr.astype(np.float64))
    else:
        raw = np.atleast_1d(np.asarray(values, dtype=object))
        out = np.empty(raw.shape[0], dtype=np.float64)
        for i, v in enumerate(raw):
            if v is None or isinstance(v, (bool, np.bool_)):
                raise InvalidValueError(
                    f"{name}[{i}] is {v!r}; a confidence signal must be a finite number"
                )
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                raise InvalidValueError(f"{name}[{i}] = {v!r} is not a number") from None
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidValueError(
            f"{name}[{i}] is {out[i]}; a confidence signal must be a finite number")
    return out


def as_labels(correct: Any, name: str = "correct") -> NDArray[np.bool_]:
    """``correct`` as a 1-D bool array; only True/False and 0/1 are accepted."""
    arr = np.atleast_1d(np.asarray(correct))
    if arr.dtype == np.bool_:
        return arr.astype(np.bool_)
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{name} must be booleans (True/False or 0/1)") from None
    if not np.isin(num, (0.0, 1.0)).all():
        raise InvalidValueError(f"{name} must be booleans (True/False or 0/1)")
    return num.astype(np.bool_)


def _pair(prob: ArrayLike, correct: ArrayLike) -> tuple[FloatArray, FloatArray]:
    p = as_signal_values(prob, "prob")  # names the first None / NaN by index
    if ((p < 0.0) | (p > 1.0)).any():
        raise InvalidValueError("prob must be a probability in [0, 1]")
    c = as_bool("correct", correct)
    same_length(prob=p, correct=c)
    return p, c.astype(np.float64)


def ece(prob: ArrayLike, correct: ArrayLike, n_bins: int = 10) -> float:
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
        raise InvalidValueError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    p, c = _pair(prob, correct)
    edges = np.arange(k + 1, dtype=np.float64) / k
    bins = np.minimum(np.searchsorted(edges, p, side="right") - 1, k - 1)
    gap = np.bincount(bins, weights=c - p, minlength=k)
    return float(np.abs(gap).sum() / p.shape[0])


def brier(prob: ArrayLike, correct: ArrayLike) -> float:
    """Brier score ``mean((p - c)^2)`` in [0, 1], lower is better.

    Examples
    --------
    >>> round(brier([0.9, 0.2], [True, False]), 12)  # (0.01 + 0.04) / 2
    0.025
    >>> brier([0.5, 0.5], [True, False])
    0.25
    """
    p, c = _pair(prob, correct)
    return float(np.mean((p - c) ** 2))
