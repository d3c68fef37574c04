"""Fitting a policy: the one function the bench (per training fold) and ``utilityguard fit``
(on all data) both call.

A :class:`TrainingSet` holds graded responses joined with their items: question, whether it
is answerable, its consequence cost, whether the model answered, whether the answer was right,
and the value of one confidence signal. :func:`fit_policy` fits, on exactly those rows,

* the calibrator: ``signal -> P(correct)`` on the answered rows with a signal (an answer to a
  refusal-required item counts as incorrect), method chosen by cross-validated Brier;
* the answerability model: ``alpha = P(answerable | question)``, a text classifier (a training
  set with one class gets that class as a constant);
* the cost model: a refit with the settings of ``refit_cost`` (when the given cost model was
  trained on these items, so it must not score them), or ``cost_model`` as is (``None``: the
  shipped default).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cost_models.answerability import AnswerabilityModel
from cost_models.regressor import CostRegressor
from guard.alpha_scale import AlphaScale, fit_alpha_scale
from guard.calibration import Calibrator
from guard.calibration.multi import MultiSignalCalibrator, feature_rows
from guard.confidence.extractors import confidence_kind
from guard.cost_scale import CostScale, fit_cost_scale
from guard.exceptions import CalibrationError, ConfigError
from guard.policy.artifact import Policy
from guard.protocols import CostModel

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass
class TrainingSet:
    """Rows to fit a policy on (one per graded response). ``correct`` is true only for a right
    answer to an answerable item; ``signal`` is NaN where the reply had none."""

    questions: list[str]
    answerable: BoolArray
    cost: FloatArray
    answered: BoolArray
    correct: BoolArray
    signal: FloatArray
    groups: list[str] = field(default_factory=list)
    #: every recorded signal (NaN where missing) and the reply texts, for a multi-signal
    #: calibrator (empty: not given)
    signals: dict[str, FloatArray] = field(default_factory=dict)
    texts: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.questions)
        for name in ("answerable", "cost", "answered", "correct", "signal"):
            if np.shape(getattr(self, name)) != (n,):
                raise ValueError(f"TrainingSet.{name} must have one value per question ({n})")
        if self.groups and len(self.groups) != n:
            raise ValueError(f"TrainingSet.groups must have one value per question ({n})")
        if (self.texts and len(self.texts) != n) or any(
                np.shape(v) != (n,) for v in self.signals.values()):
            raise ValueError(f"TrainingSet.signals and .texts need one value per question ({n})")

    def take(self, idx: Sequence[int] | NDArray[np.intp]) -> TrainingSet:
        """The rows ``idx``, in that order."""
        ix = np.asarray(idx, dtype=np.intp)
        return TrainingSet(
            [self.questions[i] for i in ix], self.answerable[ix], self.cost[ix],
            self.answered[ix], self.correct[ix], self.signal[ix],
            [self.groups[i] for i in ix] if self.groups else [],
            {k: v[ix] for k, v in self.signals.items()},
            [self.texts[i] for i in ix] if self.texts else [])

    @property
    def n(self) -> int:
        return len(self.questions)


def fit_calibrator(train: TrainingSet, signal: str) -> Calibrator:
    """The calibrator of a policy: fitted on the answered rows that have the signal."""
    rows = train.answered & np.isfinite(train.signal)
    return Calibrator(method="auto", signal=signal).fit(
        train.signal[rows], (train.answerable & train.correct)[rows])


def fit_multi_calibrator(train: TrainingSet, signals: Sequence[str]) -> MultiSignalCalibrator:
    """A multi-signal calibrator on the answered rows (every one: a missing signal is left out
    by the calibrator, and the reply features are always there)."""
    if not train.texts or any(s not in train.signals for s in signals):
        raise ConfigError("a multi-signal calibrator needs the training set's signals and texts")
    rows = np.flatnonzero(train.answered)
    X = feature_rows({k: v[rows] for k, v in train.signals.items()},
                     [train.texts[i] for i in rows], signals)
    return MultiSignalCalibrator(signals=tuple(signals)).fit(
        X, (train.answerable & train.correct)[rows])


def fit_answerability(train: TrainingSet) -> tuple[AnswerabilityModel | None, float | None]:
    """``(model, None)``, or ``(None, constant)`` when the rows have one answerability class."""
    y = train.answerable
    if y.all() or not y.any():
        return None, float(y.mean()) if y.size else 1.0
    return AnswerabilityModel().fit(train.questions, y), None


#: Fits already made in this process, by :func:`_fit_key` (the bench fits the same cost model
#: on the same training folds for every model and protocol; a fit is deterministic).
_MEMO: dict[tuple[str, str], Any] = {}
_MEMO_SIZE = 64


def _fit_key(like: CostRegressor, train: TrainingSet) -> str:
    h = hashlib.sha256(json.dumps([like.kind, like.ridge, like.cv, like.max_chars,
                                   like.random_state]).encode())
    for q, c, g in zip(train.questions, train.cost.tolist(),
                       train.groups or [""] * train.n, strict=True):
        h.update(json.dumps([q, c, g]).encode())
    return h.hexdigest()


def _memo(kind: str, key: str, make: Callable[[], Any]) -> Any:
    if (kind, key) not in _MEMO:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[(kind, key)] = make()
    return _MEMO[(kind, key)]


def refit_cost_model(like: CostRegressor, train: TrainingSet) -> CostRegressor:
    """A new cost model with ``like``'s settings, fitted on ``train`` (grouped by source);
    the same settings and rows again in one process give the same (read-only) model."""
    def make() -> CostRegressor:
        m = CostRegressor(kind=like.kind, ridge=like.ridge, cv=like.cv,
                          max_chars=like.max_chars, random_state=like.random_state)
        return m.fit(train.questions, train.cost, groups=train.groups or None)

    out: CostRegressor = _memo("cost", _fit_key(like, train), make)
    return out


def out_of_fold_raw_costs(train: TrainingSet, like: CostRegressor) -> FloatArray:
    """The raw cost of each training question, priced as the runtime prices it
    (:meth:`guard.Guard.price` before the cost scale: the costliest segment of what it asks,
    :mod:`guard.asking`, read once with the shipped request detector) by a cost model with
    ``like``'s settings refit on the other folds (grouped by ``train.groups`` when there are
    enough, as the cost model's own CV); the segments of a fold's questions are priced in one
    batch. A question that asks for nothing gets the price of nothing asked, before any
    scale."""
    from cost_models.regressor import folds
    from guard.asking import NOTHING_ASKED_PRICE
    from guard.core import Guard

    reader = Guard(like, policy=None)
    readings = [reader.read(q) for q in train.questions]
    out = np.empty(train.n, dtype=np.float64)
    groups = train.groups if train.groups and all(train.groups) else None
    for fit_rows, held in folds(train.n, groups, like.cv, like.random_state):
        model = refit_cost_model(like, train.take(fit_rows))
        segs = [readings[i].segments for i in held]
        flat = np.asarray(model.predict([t for s in segs for t in s]), dtype=np.float64) \
            if any(segs) else np.empty(0)
        ends = np.cumsum([len(s) for s in segs])
        out[held] = [flat[e - len(s):e].max() if s else NOTHING_ASKED_PRICE
                     for s, e in zip(segs, ends, strict=True)]
    return out


def fit_scale(train: TrainingSet, like: CostRegressor) -> CostScale:
    """The cost scale (:mod:`guard.cost_scale`) of a cost model with ``like``'s settings:
    out-of-fold prices of ``train``'s questions against their costs."""
    out: CostScale = _memo("scale", _fit_key(like, train),
                           lambda: fit_cost_scale(out_of_fold_raw_costs(train, like), train.cost))
    return out


def fit_answerability_scale(train: TrainingSet) -> AlphaScale:
    """The answerability scale (:mod:`guard.alpha_scale`): Platt scaling of each training
    question's ``alpha`` from a classifier fitted on the other folds (whole sources held out
    when ``train.groups`` has enough of them) against its label."""
    from cost_models.regressor import folds

    groups = train.groups if train.groups and all(train.groups) else None
    oof = np.empty(train.n, dtype=np.float64)
    for fit_rows, held in folds(train.n, groups, 5, 0):
        part = train.take(fit_rows)
        model, constant = fit_answerability(part)
        oof[held] = (model.predict_alpha([train.questions[i] for i in held]) if model
                     else constant)
    return fit_alpha_scale(oof, train.answerable)


def fit_policy(train: TrainingSet, *, signal: str, c_r: float, name: str = "policy",
               cost_model: CostModel | None = None, refit_cost: CostRegressor | None = None,
               calibrator: Calibrator | MultiSignalCalibrator | None = None,
               cost_model_ref: dict[str, Any] | None = None,
               multi: Sequence[str] | None = None, cost_scale: bool = False,
               alpha_scale: bool = False) -> Policy:
    """Fit every part of a policy on ``train`` (see the module docstring).

    Parameters
    ----------
    cost_model : CostModel, optional
        Used as is (``None``: the shipped default, loaded when first needed).
    refit_cost : CostRegressor, optional
        Refit a cost model with these settings on ``train`` instead (``cost_model`` ignored).
    calibrator : Calibrator, optional
        Used as is instead of fitting one.
    cost_model_ref : dict, optional
        How the saved policy refers to ``cost_model`` (see :class:`Policy`).
    multi : sequence of str, optional
        Fit a :class:`~guard.calibration.multi.MultiSignalCalibrator` on these signals (and
        the reply features) instead of a single-signal one; ``signal`` is then its first.
    cost_scale : bool
        Fit a cost scale (:func:`fit_scale`; the cost model must be a
        :class:`~cost_models.regressor.CostRegressor` or the shipped default).
    alpha_scale : bool
        Fit an answerability scale (:func:`fit_answerability_scale`; none when the rows have
        one answerability class).
    """
    if multi:
        calibrator = fit_multi_calibrator(train, multi)
        signal = calibrator.signal
    elif calibrator is None:
        try:
            calibrator = fit_calibrator(train, signal)
        except CalibrationError as exc:
            raise CalibrationError(f"cannot calibrate {signal}: {exc}") from None
    elif calibrator.signal != signal:
        if signal not in calibrator.signals:
            raise ConfigError(f"the calibrator reads {calibrator.signal!r}, not {signal!r}")
        signal = calibrator.signal  # a multi-signal calibrator that reads it too
    model, constant = fit_answerability(train)
    cost: CostModel | None = cost_model
    ref = cost_model_ref
    if refit_cost is not None:
        cost, ref = refit_cost_model(refit_cost, train), None
    scale = fit_scale(train, _settings_of(refit_cost or cost)) if cost_scale else None
    ascale = fit_answerability_scale(train) if alpha_scale and model is not None else None
    signals = tuple(calibrator.signals)
    return Policy(name=name, c_r=float(c_r), signal=signal, confidence=confidence_kind(*signals),
                  calibrator=calibrator, answerability=model, alpha_constant=constant,
                  cost_model=cost, cost_model_ref=ref, cost_scale=scale, alpha_scale=ascale)


def _settings_of(cost: CostModel | None) -> CostRegressor:
    """The cost model whose settings the scale's out-of-fold refits use."""
    if cost is None:
        from cost_models.model_io import default_model_dir, load_model

        cost = load_model(default_model_dir())
    if not isinstance(cost, CostRegressor):
        raise ConfigError("a cost scale is fitted with refits of a CostRegressor; this cost "
                          f"model is a {type(cost).__name__}")
    return cost
