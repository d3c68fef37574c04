"""The checks of one value, each naming the argument it checks: the one home of the cost /
``C_R`` / probability bounds for a single number, and the default ``C_R``.

:func:`finite` is the general check; :func:`check_c_r`, :func:`check_cost` and
:func:`check_probability` take the ``name`` their message names (``c_r``, ``--c-r``, ``header
x-utilityguard-...``) and serve :mod:`guard.decision_config`, the pydantic field types
(:mod:`utilityguard_base.bounds`), the proxy's header parser, the command line
(:mod:`utilityguard_base.options`) and ``utilityguard decide``. The array checks of the same
bounds, for the vectorized policy functions, are :mod:`policies.validation`'s.

Every check raises :class:`~utilityguard_base.exceptions.InvalidValueError` (a
``ValueError``) whose message names the argument and what is allowed. Standard library only.
"""

from __future__ import annotations

import math
from typing import Any

from utilityguard_base.exceptions import InvalidValueError

__all__ = ["DEFAULT_C_R", "check_c_r", "check_cost", "check_probability", "finite"]

#: The default price of an unnecessary refusal ``C_R`` (UtilityBench's headline value); every
#: default in the distribution refers to this constant (:data:`policies.DEFAULT_C_R` is it).
DEFAULT_C_R = 2.0


def finite(name: str, value: Any, low: float, high: float = math.inf, *,
           above: bool = False) -> float:
    """``value`` as a float in ``[low, high]`` (``(low, high]`` when ``above``);
    :class:`~utilityguard_base.exceptions.InvalidValueError` naming ``name`` otherwise.

    >>> finite("level", "0.8", 0.0, 1.0)
    0.8
    >>> finite("n", True, 0.0)
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidValueError: n must be a number; got True
    """
    if isinstance(value, bool):
        raise InvalidValueError(f"{name} must be a number; got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{name} must be a number; got {value!r}") from None
    if not (math.isfinite(v) and (low < v if above else low <= v) and v <= high):
        if math.isfinite(high):
            bound = f"in {'(' if above else '['}{low}, {high}]"
        else:
            bound = f"{'>' if above else '>='} {low:g}"
        raise InvalidValueError(f"{name} must be a finite number {bound}; got {value!r}")
    return v


def check_c_r(value: Any, name: str = "c_r") -> float:
    """The price of an unnecessary refusal: a finite number ``>= 0``.

    >>> check_c_r("2"), check_c_r(0)
    (2.0, 0.0)
    """
    return finite(name, value, 0.0)


def check_cost(value: Any, name: str = "cost") -> float:
    """A consequence cost ``L``: a finite number ``> 0``.

    >>> check_cost("0", "header x-utilityguard-cost")
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidValueError: header x-utilityguard-cost must be a finite...
    """
    return finite(name, value, 0.0, above=True)


def check_probability(value: Any, name: str) -> float:
    """A probability: a finite number in ``[0, 1]``."""
    return finite(name, value, 0.0, 1.0)
