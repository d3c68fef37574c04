"""The shipped ``default`` policy a :class:`guard.Guard` given nothing decides with.

``Guard()`` (``policy`` not given: :data:`USE_DEFAULT`) decides with the shipped ``default``
policy (:data:`DEFAULT_POLICY`) unless the caller configured a calibrator, an answerability
model, ``alpha`` or a signal, or extractors that do not provide the default calibrator's
signal. The policy is read from disk when the guard first needs it (its first price or
decision, or its ``calibrator`` / ``policy`` attribute read), not in the constructor, and once
per process (:func:`guard.policy.artifact.load_shipped_default`): every such guard shares the
parts, which are only read.

This module sits below :mod:`guard.core`; it imports :mod:`guard.policy.artifact` (which
builds no guard) only when the parts are first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from guard.confidence.extractors import Extractor, provided_signals

if TYPE_CHECKING:
    from guard.alpha_scale import AlphaScale
    from guard.cost_scale import CostScale


class _UseDefault:
    """The type of :data:`USE_DEFAULT` (``Guard(policy=...)`` not given)."""

    def __repr__(self) -> str:
        return "USE_DEFAULT"


#: ``Guard(policy=USE_DEFAULT)`` (the default): decide with the shipped ``default`` policy
#: when no calibrator, answerability model or alpha is given.
USE_DEFAULT = _UseDefault()
#: The shipped policy a Guard given nothing decides with (``guard/policy/data/default``).
DEFAULT_POLICY = "default"


@dataclass(frozen=True)
class PolicyParts:
    """What a guard takes from a fitted policy besides its cost model and ``C_R``."""

    calibrator: Any
    answerability: Any
    #: the policy's name as decisions record it (``NAME@SHA8``)
    label: str | None
    cost_scale: CostScale | None
    alpha_scale: AlphaScale | None


#: The parts of a guard that decides with no policy (the bare rule).
NO_POLICY = PolicyParts(None, None, None, None, None)


def default_applies(*, calibrator: Any, answerability: Any, alpha: float | None,
                    signal: str | None) -> bool:
    """Whether a guard configured with these decides with the shipped default policy
    (nothing of them given; extractors are checked when the parts are loaded)."""
    return calibrator is None and answerability is None and alpha is None and signal is None


def default_parts(extractors: tuple[Extractor, ...] | None) -> PolicyParts:
    """The parts of the shipped default policy (loaded and checked once per process), or
    :data:`NO_POLICY` when ``extractors`` (given by the caller) do not provide its signal."""
    from guard.policy.artifact import load_shipped_default

    policy = load_shipped_default()
    if extractors is not None and not set(policy.signals) & set(provided_signals(extractors)):
        return NO_POLICY
    return PolicyParts(policy.calibrator, policy.answerability, policy.label,
                       policy.cost_scale, policy.alpha_scale)
