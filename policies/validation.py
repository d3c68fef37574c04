"""Input checks shared by the policy functions, the guard's configuration, its request headers
and the command line: the one home of the cost / ``C_R`` / probability checks.

The array checks (:func:`as_float`, :func:`probability`, :func:`positive_cost`,
:func:`refusal_cost`, ...) serve the vectorized policy functions. The scalar checks of the same
bounds (:func:`~utilityguard_base.checks.finite`, :func:`~utilityguard_base.checks.check_c_r`,
:func:`~utilityguard_base.checks.check_cost`,
:func:`~utilityguard_base.checks.check_probability`) live in :mod:`utilityguard_base.checks`
(no numpy), re-exported here.

Every check raises :class:`~utilityguard_base.exceptions.InvalidValueError` (a ``ValueError``)
whose message names the argument and what is allowed, so a caller can fix the call without
reading this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from utilityguard_base.checks import check_c_r, check_cost, check_probability, finite
from utilityguard_base.exceptions import InvalidValueError

__all__ = ["BoolArray", "FloatArray", "as_bool", "as_float", "broadcast", "check_c_r",
           "check_cost", "check_probability", "finite", "positive_cost", "probability",
           "refusal_cost", "same_length", "unwrap"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def as_float(name: str, value: Any) -> FloatArray:
    """Return ``value`` as a float array; reject non-numeric input and NaN."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(
            f"{name} must be a real number or an array of real numbers") from exc
    if np.isnan(arr).any():
        raise InvalidValueError(f"{name} must not be NaN")
    return arr


def as_bool(name: str, value: Any) -> BoolArray:
    """Return ``value`` as a bool array; accept bools and 0/1 only."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_:
        return arr
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"{name} must be booleans (True/False or 0/1)") from exc
    if not np.isin(num, (0.0, 1.0)).all():
        raise InvalidValueError(f"{name} must be booleans (True/False or 0/1)")
    return num.astype(np.bool_)


def probability(name: str, value: Any) -> FloatArray:
    """A probability: finite, in [0, 1]."""
    arr = as_float(name, value)
    if ((arr < 0.0) | (arr > 1.0)).any():
        raise InvalidValueError(f"{name} must be a probability in [0, 1]")
    return arr


def positive_cost(name: str, value: Any) -> FloatArray:
    """A consequence cost: finite and > 0."""
    arr = as_float(name, value)
    if not np.isfinite(arr).all() or (arr <= 0.0).any():
        raise InvalidValueError(f"{name} must be a finite cost > 0")
    return arr


def refusal_cost(name: str, value: Any) -> FloatArray:
    """The price of an unnecessary refusal C_R: finite and >= 0."""
    arr = as_float(name, value)
    if not np.isfinite(arr).all() or (arr < 0.0).any():
        raise InvalidValueError(f"{name} must be a finite refusal cost >= 0")
    return arr


def broadcast(**arrays: Any) -> tuple[Any, ...]:
    """Broadcast the named arrays together, or say which shapes do not fit."""
    try:
        return tuple(np.broadcast_arrays(*arrays.values()))
    except ValueError as exc:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        raise InvalidValueError(
            f"shapes do not match: {shapes}; give scalars or equal shapes") from exc


def unwrap(arr: Any) -> Any:
    """A 0-d result as a Python scalar, anything else unchanged."""
    a = np.asarray(arr)
    return a.item() if a.ndim == 0 else a


def same_length(**arrays: Any) -> int:
    """Check that the named arrays are 1-D with one length ``n >= 1``; return ``n``.

    The message lists every argument with its shape, so the caller sees which one is off.
    """
    shapes = {k: np.shape(v) for k, v in arrays.items()}
    if any(len(s) != 1 for s in shapes.values()) or len(set(shapes.values())) != 1:
        listed = ", ".join(f"{k}{v}" for k, v in shapes.items())
        raise InvalidValueError(f"inputs must be 1-D arrays of one length; got {listed}")
    n = int(next(iter(shapes.values()))[0])
    if n == 0:
        raise InvalidValueError("at least one sample is required (n >= 1)")
    return n
