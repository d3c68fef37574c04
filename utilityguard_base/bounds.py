"""Pydantic field types for the bounded numbers of the data contracts and settings, built on
the one set of checks in :mod:`utilityguard_base.checks` (so a bound is stated once, not again as
``Field(ge=..., le=...)``).

A field typed :data:`Probability`, :data:`Cost` or :data:`RefusalCost` is checked by
:func:`~utilityguard_base.checks.check_probability`, :func:`~utilityguard_base.checks.check_cost` or
:func:`~utilityguard_base.checks.check_c_r`, whose message names the field; the ``Optional...``
types also accept ``None``. Pydantic reports the check's message in its ``ValidationError``.

>>> from pydantic import BaseModel
>>> class Row(BaseModel):
...     cost: Cost
...     p: OptionalProbability = None
>>> Row(cost="2.5").cost
2.5
>>> Row(cost=1, p=1.5)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Row
p
  Value error, p must be a finite number in [0.0, 1.0]; got 1.5 ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

from utilityguard_base.checks import check_c_r, check_cost, check_probability


def _checked(check: Callable[[Any, str], float], *, optional: bool = False) -> BeforeValidator:
    def validate(value: Any, info: ValidationInfo) -> float | None:
        if optional and value is None:
            return None
        return check(value, info.field_name or "value")

    return BeforeValidator(validate)


def problem(error: Mapping[str, Any]) -> str:
    """What one pydantic error says, in the project's words: the message of the check that
    failed without pydantic's ``"Value error, "`` / ``"Assertion failed, "`` prefix, and for
    pydantic's own checks (a type, a bound) the value given.

    >>> problem({"type": "value_error", "msg": "Value error, p must be in [0, 1]; got 2"})
    'p must be in [0, 1]; got 2'
    >>> problem({"type": "int_parsing", "msg": "Input should be a valid integer",
    ...          "input": "x"})
    "Input should be a valid integer, got 'x'"
    """
    msg = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    if error.get("type") not in ("value_error", "assertion_error", "missing") \
            and "input" in error:
        value = error["input"]
        shown = "NaN" if isinstance(value, float) and math.isnan(value) else repr(value)
        msg = f"{msg}, got {shown}"
    return msg


#: A probability: a finite number in [0, 1].
Probability = Annotated[float, _checked(check_probability)]
#: A consequence cost ``L``: a finite number > 0.
Cost = Annotated[float, _checked(check_cost)]
#: The price of an unnecessary refusal ``C_R``: a finite number >= 0.
RefusalCost = Annotated[float, _checked(check_c_r)]
#: The same, or ``None``.
OptionalProbability = Annotated[float | None, _checked(check_probability, optional=True)]
OptionalCost = Annotated[float | None, _checked(check_cost, optional=True)]

__all__ = ["Cost", "OptionalCost", "OptionalProbability", "Probability", "RefusalCost",
           "problem"]
