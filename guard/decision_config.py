"""The decision parameters of a guard, as one validated value object.

``c_r`` (the price of an unnecessary refusal), ``alpha`` (``P(answerable)``, ``None`` for the
paper's rule), ``mode`` (``enforce`` or ``shadow``), ``no_confidence`` (what to do without a
probability: ``refuse``, ``answer`` or a prior ``p``) and ``refusal_text``. The proxy's
:class:`~guard.settings.Settings` declares its fields with the same types
(:meth:`Settings.decision_config`), :class:`~guard.core.Guard` holds one and derives a
per-call copy for ``decide``'s overrides (:meth:`DecisionConfig.replaced`), and the proxy's
header parser checks its headers with the same validators. One validator per value,
each taking the ``name`` its message names (``c_r``, ``--c-r``, ``header x-utilityguard-...``):
:func:`check_mode` here, and :func:`check_c_r`, :func:`check_cost`, :func:`check_probability`
from their one home, :mod:`policies.validation` (re-exported).

Examples
--------
>>> cfg = DecisionConfig.build(c_r=8)
>>> cfg.c_r, cfg.mode, cfg.no_confidence
(8.0, 'enforce', 'refuse')
>>> cfg.replaced(mode="shadow").mode
'shadow'
>>> DecisionConfig.build(c_r=-1)
Traceback (most recent call last):
...
utilityguard_base.exceptions.ConfigError: c_r must be a finite number >= 0; got -1
"""

from __future__ import annotations

from typing import Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from guard.decision_records import Mode
from guard.exceptions import ConfigError
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT
from policies import DEFAULT_C_R
from policies.validation import check_c_r, check_cost, check_probability, finite
from utilityguard_base.bounds import OptionalProbability, RefusalCost, problem

__all__ = ["MODES", "DecisionConfig", "Mode", "NoConfidence", "check_c_r", "check_cost",
           "check_mode", "check_probability", "finite"]

#: The guard's modes: ``shadow`` records the decision and always delivers the reply.
MODES: tuple[str, ...] = get_args(Mode)
NoConfidence = Literal["refuse", "answer"] | float


def check_mode(value: Any, name: str = "mode") -> Mode:
    """``enforce`` or ``shadow`` (exactly)."""
    if value not in MODES:
        raise ValueError(f"{name} must be 'enforce' or 'shadow'; got {value!r}")
    return cast(Mode, value)


class DecisionConfig(BaseModel):
    """``c_r``, ``alpha``, ``mode``, ``no_confidence`` and ``refusal_text``, validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    c_r: RefusalCost = DEFAULT_C_R
    alpha: OptionalProbability = None
    mode: Mode = "enforce"
    no_confidence: NoConfidence = "refuse"
    refusal_text: str = DEFAULT_REFUSAL_TEXT

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Mode:
        return check_mode(value)

    @field_validator("no_confidence", mode="before")
    @classmethod
    def _no_confidence(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value not in ("refuse", "answer"):
                raise ValueError(f"no_confidence must be 'refuse', 'answer' or a prior "
                                 f"probability; got {value!r}")
            return value
        return check_probability(value, "no_confidence")

    @field_validator("refusal_text", mode="before")
    @classmethod
    def _refusal_text(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("refusal_text must be a non-empty string")
        return value

    @classmethod
    def build(cls, **values: Any) -> DecisionConfig:
        """A validated config; :class:`~guard.exceptions.ConfigError` naming the first bad
        value."""
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            msg = problem(first)
            if first["type"] != "value_error":
                msg = f"{'.'.join(str(x) for x in first['loc'])}: {msg}"
            raise ConfigError(msg) from None

    def replaced(self, **changes: Any) -> DecisionConfig:
        """A copy with ``changes`` (``None`` values are ignored), validated."""
        given = {k: v for k, v in changes.items() if v is not None}
        return self if not given else self.build(**{**self.model_dump(), **given})
