"""Validation of per-sample metric inputs (answerable, answered, correct, cost, score)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from policies.validation import (
    as_bool,
    as_float,
    positive_cost,
    refusal_cost,
)
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class Outcomes:
    """Validated 1-D outcome arrays of equal length ``n >= 1``."""

    answerable: BoolArray
    answered: BoolArray
    correct: BoolArray
    cost: FloatArray

    @property
    def n(self) -> int:
        return int(self.answerable.shape[0])


def _correct_array(correct: Any, needed: BoolArray) -> BoolArray:
    """``correct`` may hold None/NaN where it is not read (refusals, refusal-required items)."""
    raw = np.asarray(correct, dtype=object) if not isinstance(correct, np.ndarray) else correct
    if raw.dtype == object:
        missing = np.array(
            [v is None or (isinstance(v, float) and v != v) for v in raw.ravel()], dtype=bool
        ).reshape(raw.shape)
        filled = np.where(missing, False, raw)
        out = as_bool("correct", filled)  # as_bool names ``correct`` on text such as "x"
    elif raw.dtype.kind == "f":
        missing = np.isnan(raw)
        out = as_bool("correct", np.where(missing, 0.0, raw))
    else:
        missing = np.zeros(raw.shape, dtype=bool)
        out = as_bool("correct", raw)
    if out.shape == needed.shape and (missing & needed).any():
        i = int(np.flatnonzero(missing & needed)[0])
        raise InvalidValueError(
            f"correct is missing at index {i}: it is required for answered, answerable samples"
        )
    return out


def outcomes(answerable: Any, answered: Any, correct: Any, cost: Any) -> Outcomes:
    """Validate and return the outcome arrays; raise ``ValueError`` naming what is wrong."""
    a = np.atleast_1d(as_bool("answerable", answerable))
    d = np.atleast_1d(as_bool("answered", answered))
    L = np.atleast_1d(positive_cost("cost", cost))
    # ``a & d`` only when the shapes agree: otherwise numpy's broadcast error would hide which
    # argument is wrong; the shape check below names them.
    needed = a & d if a.shape == d.shape else np.zeros(0, dtype=np.bool_)
    c = np.atleast_1d(_correct_array(correct, needed))
    shapes = {"answerable": a.shape, "answered": d.shape, "correct": c.shape, "cost": L.shape}
    if len(set(shapes.values())) != 1 or a.ndim != 1:
        listed = ", ".join(f"{k}{v}" for k, v in shapes.items())
        raise InvalidValueError(f"inputs must be 1-D arrays of one length; got {listed}")
    if a.shape[0] == 0:
        raise InvalidValueError("at least one sample is required (n >= 1)")
    return Outcomes(a, d, c, L)


def scores(score: Any, n: int, name: str = "score") -> FloatArray:
    """A 1-D float score array of length ``n`` (finite or +/-inf, never NaN)."""
    s = np.atleast_1d(as_float(name, score))
    if s.shape != (n,):
        raise InvalidValueError(f"{name} must have shape ({n},), got {s.shape}")
    return s


def c_r_value(c_r: Any) -> float:
    """A scalar ``C_R >= 0`` (an array is a ``ValueError``, not numpy's ``TypeError``)."""
    arr = refusal_cost("c_r", c_r)
    if arr.ndim != 0:
        raise InvalidValueError(
            f"c_r must be a single number >= 0, got shape {arr.shape}; "
            "use utility_auc_sweep for several values"
        )
    return float(arr)


