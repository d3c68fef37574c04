"""Whether the guard's confidence can reach the thresholds of ordinary questions.

A calibrator maps its signal to ``P(correct)``, and its largest output bounds every ``p`` the
guard reads from a reply: a reply whose ``p`` comes from it is answered only where the
threshold is at most that bound. When the bound is below the threshold of a median question
— the shipped seed set's questions priced by this very guard — most questions are refused
whatever the model says, and the operator should hear it before the first request
(``serve`` at start-up, ``decide`` with its answer): :func:`reach` measures it,
:meth:`Reach.warning` says it and what to do.

Nothing here is a constant of a particular policy: the bound is the calibrator's largest
output over everything a reply can bring it — a one-signal calibrator over its signal's whole
range; a multi-signal one (:class:`guard.calibration.multi.MultiSignalCalibrator`) over every
combination of the signals the guard reads, each at either end of its range, and of the
reply's text features (present or not; its length within three standard deviations of the
replies it was fitted on) — computed by the calibrator's own ``predict_proba``; the
thresholds are :meth:`guard.Guard.price`'s. Without a calibrator (``--policy none``, ``p``
uncalibrated) ``p`` reaches 1: :func:`reach` is ``None``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from guard.calibration import Calibrator
from guard.confidence.reply_features import REPLY_FEATURES
from guard.decision_records import LOG_SIGNALS
from guard.protocols import SignalCalibrator

if TYPE_CHECKING:
    from guard.core import Guard

#: How many of the seed set's questions stand for "ordinary" questions (evenly spaced over
#: the set in its shipped order; pricing them takes well under a second).
REFERENCE_QUESTIONS = 64
#: What the operator can do when the guard cannot answer (``serve`` and ``decide`` flags).
REMEDIES = ("serve a policy calibrated for this model ('utilityguard fit --data ITEMS "
            "--responses REPLIES --out DIR', then --policy DIR; docs/policies.md), or read "
            "the model's stated confidence (--confidence verbal or logprobs+verbal), or run in "
            "shadow mode "
            "(--mode shadow), label the decisions through POST /v1/feedback and fit a policy "
            "from them ('utilityguard fit --from-audit')")


def _ends(signal: str) -> tuple[float, float]:
    """The two ends of a signal's range, as a reply carries it."""
    return (-20.0, 0.0) if signal in LOG_SIGNALS else (0.0, 1.0)


def _multi_max(calibrator: Any, provided: Iterable[str] | None) -> float | None:
    """The largest ``p`` of a multi-signal calibrator over the replies a guard reading
    ``provided`` can see: each fitted pattern of signals (``provided`` ones only), every
    corner of its signals' ranges and of the reply features (the logit is linear in each)."""
    patterns = getattr(calibrator, "patterns_", None)
    signals = list(calibrator.signals)
    if not patterns:
        return None
    allowed = None if provided is None else set(provided)
    rows = []
    for pattern, fit in patterns.items():
        if allowed is not None and not set(pattern) <= allowed:
            continue
        # the reply features: four present-or-not, the length within 3 sd of the training
        mean, scale = float(fit["mean"][-1]), float(fit["scale"][-1])
        lengths = (max(0.0, mean - 3 * scale), mean + 3 * scale) if getattr(
            calibrator, "reply_features", False) and len(fit["mean"]) > len(pattern) else (0.0,)
        ranges = [_ends(s) if s in pattern else (float("nan"),) for s in signals]
        ranges += [(0.0, 1.0)] * (len(REPLY_FEATURES) - 1) + [lengths]
        rows += [list(corner) for corner in itertools.product(*ranges)]
    if not rows:
        return None
    proba = calibrator.predict_proba(np.array(rows, dtype=np.float64))
    return float(np.max(proba[:, 1]))


def p_max(calibrator: Any, provided: Iterable[str] | None = None) -> float | None:
    """The largest ``p`` the calibrator gives over everything a reply can bring it (log
    signals on ``(-inf, 0]``, probabilities on ``[0, 1]``; a multi-signal calibrator: see the
    module docstring, the signals ``provided`` only when given); ``None`` without one."""
    if calibrator is None:
        return None
    if hasattr(calibrator, "patterns_"):  # a multi-signal calibrator's fitted patterns
        return _multi_max(calibrator, provided)
    if hasattr(calibrator, "p_correct") and not isinstance(calibrator,
                                                           (Calibrator, SignalCalibrator)):
        return None  # it reads more than one signal's value: nothing to bound it by
    signal = getattr(calibrator, "signal", None)
    if signal in LOG_SIGNALS:
        grid = np.concatenate([[0.0], -np.geomspace(1e-9, 1e3, 2000)])
    else:
        grid = np.linspace(0.0, 1.0, 2001)
    with np.errstate(over="ignore"):  # a Platt map far out on the signal's range: 0 or 1
        return float(np.max(np.asarray(calibrator.predict(grid), dtype=np.float64)))


def read_signals(guard: Guard) -> tuple[str, ...]:
    """The confidence signals ``guard`` reads from a reply (its extractors')."""
    from guard.confidence.extractors import provided_signals

    return tuple(provided_signals(guard.extractors))


def reference_questions(n: int = REFERENCE_QUESTIONS) -> list[str]:
    """``n`` questions of the shipped seed set, evenly spaced over it (a fixed sample)."""
    from cost_models.datasets import load_seed

    items = load_seed()
    step = max(1, len(items) // n)
    return [it.question for it in items[::step][:n]]


@dataclass(frozen=True)
class Reach:
    """The bound on ``p`` of a guard's calibrator against the thresholds it sets."""

    #: what the calibrator reads (its signals the guard reads, and the reply's text)
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
    top = p_max(guard.calibrator, read_signals(guard))
    if top is None or top >= 1.0:
        return None
    texts = reference_questions() if questions is None else questions
    thresholds = sorted(guard.price(q).threshold for q in texts)
    cal = guard.calibrator
    assert cal is not None
    read = [s for s in cal.signals if s in read_signals(guard)]
    what = " and ".join([", ".join(read)] if read else []) or "no signal"
    if getattr(cal, "reply_features", False):
        what += " and the reply's text"
    return Reach(signal=what, p_max=top, thresholds=tuple(thresholds), c_r=guard.c_r,
                 policy=guard.policy)
