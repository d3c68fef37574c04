"""Calibration metrics (ECE-10, Brier) and validation of signal / label arrays.

Shared by :mod:`guard.calibration` and the benchmarks; re-exported from ``guard.calibration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
    ValueError: x[1] is None; a confidence signal must be a finite number
    """
    arr = np.asarray(values)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    if arr.dtype.kind in "fiu":
        out = np.atleast_1d(arr.astype(np.float64))
    else:
        raw = np.atleast_1d(np.asarray(values, dtype=object))
        out = np.empty(raw.shape[0], dtype=np.float64)
        for i, v in enumerate(raw):
            if v is None or isinstance(v, (bool, np.bool_)):
                raise ValueError(
                    f"{name}[{i}] is {v!r}; a confidence signal must be a finite number"
                )
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                raise ValueError(f"{name}[{i}] = {v!r} is not a number") from None
    bad = ~np.isfinite(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] is {out[i]}; a confidence signal must be a finite number")
    return out


def as_labels(correct: Any, name: str = "correct") -> NDArray[np.bool_]:
    """``correct`` as a 1-D bool array; only True/False and 0/1 are accepted."""
    arr = np.atleast_1d(np.asarray(correct))
    if arr.dtype == np.bool_:
        return arr.astype(np.bool_)
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be booleans (True/False or 0/1)") from None
    if not np.isin(num, (0.0, 1.0)).all():
        raise ValueError(f"{name} must be booleans (True/False or 0/1)")
    return num.astype(np.bool_)


def _pair(prob: ArrayLike, correct: ArrayLike) -> tuple[FloatArray, FloatArray]:
    p = as_signal_values(prob, "prob")
    y = as_labels(correct).astype(np.float64)
    if p.shape != y.shape:
        raise ValueError(
            f"prob and correct must have one length; got {p.shape[0]} and {y.shape[0]}"
        )
    if p.shape[0] == 0:
        raise ValueError("at least one sample is required")
    if ((p < 0.0) | (p > 1.0)).any():
        raise ValueError("prob must be probabilities in [0, 1]")
    return p, y


def brier(prob: ArrayLike, correct: ArrayLike) -> float:
    """Brier score ``mean((p - y)^2)``: 0 is perfect, 0.25 is a constant 0.5.

    Examples
    --------
    >>> brier([1.0, 0.0], [True, False])
    0.0
    >>> brier([0.5, 0.5], [True, False])
    0.25
    """
    p, y = _pair(prob, correct)
    return float(np.mean((p - y) ** 2, dtype=np.float64))


def ece(prob: ArrayLike, correct: ArrayLike, n_bins: int = 10) -> float:
    """Expected calibration error with ``n_bins`` equal-width bins (ECE-10 by default).

    ``sum_b (n_b / n) |accuracy_b - mean confidence_b|``; bins are ``[k/n_bins, (k+1)/n_bins)``
    with 1.0 in the last bin.

    Examples
    --------
    >>> ece([0.9, 0.9, 0.9, 0.9], [True, True, True, False])  # says 0.9, is right 75%
    0.15
    >>> ece([0.25, 0.75], [False, True])
    0.25
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1; got {n_bins}")
    p, y = _pair(prob, correct)
    bins = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        mask = bins == b
        total += int(mask.sum()) * abs(float(y[mask].mean()) - float(p[mask].mean()))
    return round(total / int(p.shape[0]), 12)
