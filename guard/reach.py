"""Whether the guard's confidence can reach the thresholds of ordinary questions.

A calibrator maps its signal to ``P(correct)``, and its largest output bounds every ``p`` the
guard reads from a reply: a reply whose ``p`` comes from it is answered only where the
threshold is at most that bound. When the bound is below the threshold of a median question
— the shipped seed set's questions priced by this very guard — most questions are refused
whatever the model says, and the operator should hear it before the first request
(``serve`` at start-up, ``decide`` with its answer): :func:`reach` measures it,
:meth:`Reach.warning` says it and what to do.

Nothing here is a constant of a particular policy: the bound is the calibrator's largest
output over its signal's whole range, the thresholds are :meth:`guard.Guard.price`'s.
Without a calibrator (``--policy none``, ``p`` uncalibrated) or with a calibrator of several
signals and the reply's text, ``p`` is not bounded by one signal's map: :func:`reach` is
``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from guard.decision_records import LOG_SIGNALS

if TYPE_CHECKING:
    from guard.core import Guard

#: How many of the seed set's questions stand for "ordinary" questions (evenly spaced over
#: the set in its shipped order; pricing them takes well under a second).
REFERENCE_QUESTIONS = 64
#: What the operator can do when the guard cannot answer (``serve`` and ``decide`` flags).
REMEDIES = ("serve a policy calibrated for this model ('utilityguard fit --data ITEMS "
            "--responses REPLIES --out DIR', then --policy DIR; docs/policies.md), or read "
            "the model's stated confidence (--confidence verbal), or run in shadow mode "
            "(--mode shadow), label the decisions through POST /v1/feedback and fit a policy "
            "from them ('utilityguard fit --from-audit')")


def p_max(calibrator: Any) -> float | None:
    """The largest ``p`` the calibrator gives over its signal's whole range (log signals on
    ``(-inf, 0]``, probabilities on ``[0, 1]``); ``None`` without a one-signal calibrator."""
    if calibrator is None or hasattr(calibrator, "p_correct"):
        return None
    signal = getattr(calibrator, "signal", None)
    if signal in LOG_SIGNALS:
        grid = np.concatenate([[0.0], -np.geomspace(1e-9, 1e3, 2000)])
    else:
        grid = np.linspace(0.0, 1.0, 2001)
    with np.errstate(over="ignore"):  # a Platt map far out on the signal's range: 0 or 1
        return float(np.max(np.asarray(calibrator.predict(grid), dtype=np.float64)))


def reference_questions(n: int = REFERENCE_QUESTIONS) -> list[str]:
    """``n`` questions of the shipped seed set, evenly spaced over it (a fixed sample)."""
    from cost_models.datasets import load_seed

    items = load_seed()
    step = max(1, len(items) // n)
    return [it.question for it in items[::step][:n]]


@dataclass(frozen=True)
class Reach:
    """The bound on ``p`` of a guard's calibrator against the thresholds it sets."""

    #: the signal the calibrator reads
    signal: str
    #: its largest output
    p_max: float
    #: the thresholds of the reference questions at the guard's ``C_R``, ascending
    thresholds: tuple[float, ...]
    c_r: float
    #: ``NAME@SHA8`` of the guard's policy, or ``None``
    policy: str | None = None

    @property
    def median_threshold(self) -> float:
        """The threshold of a median reference question."""
        return float(np.median(self.thresholds))

    @property
    def unreachable(self) -> float:
        """The share of the reference questions whose threshold is above :attr:`p_max`:
        refused whatever the model says (when ``p`` comes from the calibrator)."""
        return float(np.mean(np.asarray(self.thresholds) > self.p_max))

    @property
    def blocked(self) -> bool:
        """No reply reaches the threshold of a median question."""
        return self.p_max < self.median_threshold

    def warning(self) -> str | None:
        """What the operator should know and do when :attr:`blocked`; ``None`` otherwise."""
        if not self.blocked:
            return None
        whose = f"the calibrator of {self.policy}" if self.policy else "the calibrator"
        return (f"the guard can answer few questions: {whose} maps {self.signal} to p <= "
                f"{self.p_max:.3f}, below the threshold of a median question "
                f"({self.median_threshold:.3f} at C_R {self.c_r:g}), so "
                f"{self.unreachable:.0%} of {len(self.thresholds)} ordinary questions (the "
                f"shipped seed set's) are refused whatever the model replies. To answer "
                f"them: {REMEDIES}")


def reach(guard: Guard, questions: list[str] | None = None) -> Reach | None:
    """The :class:`Reach` of ``guard``'s calibrator on ``questions`` (default
    :func:`reference_questions`), priced by ``guard`` itself; ``None`` when ``p`` is not
    bounded below 1 by one signal's calibrator."""
    top = p_max(guard.calibrator)
    if top is None or top >= 1.0:
        return None
    texts = reference_questions() if questions is None else questions
    thresholds = sorted(guard.price(q).threshold for q in texts)
    assert guard.calibrator is not None
    return Reach(signal=guard.calibrator.signal, p_max=top, thresholds=tuple(thresholds),
                 c_r=guard.c_r, policy=guard.policy)
