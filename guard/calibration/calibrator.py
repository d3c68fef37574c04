"""Calibration: turning a raw confidence signal into a probability of being correct.

The decision rule ``p >= (L - C_R) / (1 + L)`` is Bayes-optimal only for a calibrated ``p``
(docs/design.md, "beyond the paper"), and raw signals are not calibrated: ``exp(mean logprob)`` of a
small model is close to 1 on most replies, right or wrong. A :class:`Calibrator` learns the map
``signal -> P(correct)`` from graded response records with one of three methods
(:mod:`guard.calibration.methods`): ``"platt"`` (logistic regression), ``"isotonic"``
(:class:`sklearn.isotonic.IsotonicRegression`) and ``"histogram"`` (histogram binning);
``"auto"`` picks the lowest cross-validated Brier score.

Every signal is oriented so that larger means more confident. Without a calibrator the guard
uses :func:`raw_probability` (``exp`` for log-probability signals, the value itself for
probabilities) and records ``p_source = "uncalibrated"``. :func:`ece` and :func:`brier` are the
calibration metrics shared with the benchmarks.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from cost_models.persistence import load_artifact, save_artifact, sha256_rows
from guard.calibration.methods import (
    METHODS,
    BoolArray,
    check_xy,
    class_counts,
    make_method,
    method_from_data,
    method_to_data,
)
from guard.calibration.scoring import FloatArray, as_signal_values, brier, ece
from guard.decision_records import LOG_SIGNALS, PROB_SIGNALS
from guard.exceptions import CalibrationError, ConfidenceError

__all__ = [
    "LOG_SIGNALS",
    "METHODS",
    "PROB_SIGNALS",
    "Calibrator",
    "brier",
    "cross_val_probability",
    "ece",
    "raw_probability",
]

ARTIFACT_NAME = "calibrator"
log = logging.getLogger(__name__)


def raw_probability(signal: str, value: Any) -> Any:
    """The uncalibrated probability of a signal: ``exp(value)`` for log-probabilities
    (clipped at 0), the value itself for verbal / consistency / caller probabilities.

    A scalar gives a float, an array an array.

    Examples
    --------
    >>> round(raw_probability("logprob_mean", -0.105), 3)
    0.9
    >>> raw_probability("verbal", 0.85)
    0.85
    >>> raw_probability("verbal", 85)
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.ConfidenceError: verbal must be a probability in [0, 1]; got 85.0
    """
    v = as_signal_values(value, signal)
    if signal in LOG_SIGNALS:
        out = np.exp(np.minimum(v, 0.0))
    elif signal in PROB_SIGNALS:
        bad = (v < 0.0) | (v > 1.0)
        if bad.any():
            raise ConfidenceError(
                f"{signal} must be a probability in [0, 1]; got {v[np.flatnonzero(bad)[0]]}"
            )
        out = v
    else:
        allowed = ", ".join(LOG_SIGNALS + PROB_SIGNALS)
        raise ConfidenceError(f"unknown confidence signal {signal!r}; allowed: {allowed}")
    return float(out[0]) if np.ndim(value) == 0 else out


#: The constructor's parameters, in order (``get_params`` / ``set_params``).
PARAMS = ("method", "signal", "cv", "random_state")


def _folds(y: BoolArray, cv: int, random_state: int | None) -> list[tuple[Any, Any]]:
    from sklearn.model_selection import StratifiedKFold  # lazy: import guard stays light

    k = min(cv, *class_counts(y))
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
    return list(splitter.split(np.zeros((y.shape[0], 1)), y))


def _require_both_classes(y: BoolArray, k: int, what: str) -> int:
    """The number correct; :class:`CalibrationError` unless ``k`` of each class."""
    pos, neg = class_counts(y)
    if min(pos, neg) < k:
        raise CalibrationError(f"{what} needs at least {k} correct and {k} incorrect records; "
                               f"got {pos} correct and {neg} incorrect")
    return pos


class Calibrator:
    """Map one confidence signal to ``P(correct)``, fitted on graded records.

    Parameters
    ----------
    method : {"auto", "platt", "isotonic", "histogram"}, default "auto"
        ``"auto"`` fits all three and keeps the lowest cross-validated Brier score.
    signal : str, default "logprob_mean"
        The confidence signal this calibrator reads (a field of
        :class:`guard.decision_records.Confidence`); the guard uses it to pick the signal.
    cv : int, default 5
        Folds for the cross-validated metrics (fewer when a class has fewer records).
    random_state : int or None, default 0
        Seed of the fold shuffling.

    Attributes
    ----------
    method_ : str
        The method in use.
    cv_brier_, cv_ece_ : dict of str to float
        Out-of-fold Brier score and ECE-10 of every method tried.
    n_samples_, n_correct_ : int
        Training records and how many were correct.
    training_hash_ : str
        sha256 of the training (signal, correct) pairs.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400)
    >>> y = rng.random(400) < 1 / (1 + np.exp(-3 * x))
    >>> cal = Calibrator(signal="verbal").fit(x, y)  # x is not a probability yet
    >>> cal.method_, cal.predict([-1.0, 0.0, 1.0]).round(2).tolist()
    ('platt', [0.05, 0.46, 0.93])
    """

    def __init__(
        self,
        method: str = "auto",
        signal: str = "logprob_mean",
        cv: int = 5,
        random_state: int | None = 0,
    ) -> None:
        self.method = method
        self.signal = signal
        self.cv = cv
        self.random_state = random_state

    def __repr__(self) -> str:
        return (f"Calibrator(method={self.method!r}, signal={self.signal!r}, cv={self.cv!r}, "
                f"random_state={self.random_state!r})")

    # The scikit-learn estimator contract, by duck typing: ``sklearn.base.clone`` and
    # ``sklearn.utils.validation.check_is_fitted`` accept a Calibrator, while ``import guard``
    # and ``predict`` (plain numpy on the request path) never import scikit-learn, which
    # subclassing ``BaseEstimator`` would.

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (what ``sklearn.base.clone`` copies)."""
        return {name: getattr(self, name) for name in PARAMS}

    def set_params(self, **params: Any) -> Calibrator:
        """Set constructor parameters; return ``self``."""
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise CalibrationError(f"unknown Calibrator parameter(s) {', '.join(unknown)}; "
                                   f"allowed: {', '.join(PARAMS)}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags: fitted on ``(x, y)``, needs ``fit`` before use."""
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=True))

    def __sklearn_is_fitted__(self) -> bool:
        """True once :meth:`fit` ran (or the calibrator was loaded fitted)."""
        return hasattr(self, "map_")

    def _check_is_fitted(self, message: str) -> None:
        if not self.__sklearn_is_fitted__():
            raise CalibrationError(message)

    def _check_params(self) -> None:
        if self.method != "auto" and self.method not in METHODS:
            raise CalibrationError(
                f"method must be 'auto' or one of {', '.join(METHODS)}; got {self.method!r}"
            )
        if self.signal not in LOG_SIGNALS + PROB_SIGNALS:
            raise CalibrationError(
                f"signal must be one of {', '.join(LOG_SIGNALS + PROB_SIGNALS)}; "
                f"got {self.signal!r}"
            )
        if not isinstance(self.cv, int) or self.cv < 2:
            raise CalibrationError(f"cv must be an integer >= 2; got {self.cv!r}")

    def fit(self, x: Any, y: Any) -> Calibrator:
        """Fit on signal values ``x`` and correctness ``y`` (bool); return ``self``."""
        self._check_params()
        xs, ys = check_xy(x, y)
        pos = _require_both_classes(ys, 2, "calibration")
        folds = _folds(ys, self.cv, self.random_state)
        candidates = METHODS if self.method == "auto" else (self.method,)
        cv_brier: dict[str, float] = {}
        cv_ece: dict[str, float] = {}
        for name in candidates:
            oof = np.empty(xs.shape[0], dtype=np.float64)
            for train, test in folds:
                oof[test] = make_method(name).fit(xs[train], ys[train]).predict(xs[test])
            oof = np.clip(oof, 0.0, 1.0)
            cv_brier[name], cv_ece[name] = brier(oof, ys), ece(oof, ys)
        self.method_ = min(candidates, key=lambda m: (round(cv_brier[m], 12), METHODS.index(m)))
        self.map_ = make_method(self.method_).fit(xs, ys)
        self.cv_brier_, self.cv_ece_ = cv_brier, cv_ece
        self.n_samples_, self.n_correct_ = int(xs.shape[0]), pos
        self.training_hash_ = sha256_rows(zip(xs.tolist(), ys.tolist(), strict=True))
        log.debug("calibrator %s on %d records: method %s, cv Brier %s", self.signal,
                  self.n_samples_, self.method_, cv_brier)
        return self

    def predict(self, x: Any) -> FloatArray:
        """Calibrated probabilities in [0, 1] for signal values ``x`` (a 1-D array).

        Raises ``ValueError`` for a None / NaN / infinite value and
        :class:`CalibrationError` when the calibrator is not fitted.
        """
        self._check_is_fitted("this Calibrator is not fitted; call fit(x, y) or load(dir)")
        xs = as_signal_values(x, self.signal)
        out: FloatArray = np.clip(self.map_.predict(xs), 0.0, 1.0)
        return out

    def predict_proba(self, x: Any) -> FloatArray:
        """``[P(wrong), P(correct)]`` for each signal value of ``x``: the scikit-learn
        classifier contract, as :class:`~guard.calibration.multi.MultiSignalCalibrator`
        answers it (column 1 is :meth:`predict`)."""
        p = self.predict(x)
        out: FloatArray = np.column_stack([1.0 - p, p])
        return out

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals it reads: its one :attr:`signal`."""
        return (self.signal,)

    def p_correct(self, confidence: Any, text: str | None = None) -> float | None:
        """``P(correct)`` of one reply from its confidence (a
        :class:`~guard.decision_records.Confidence` or a mapping of signals), ``None`` when
        the reply lacks this calibrator's signal; ``text`` is not read (the interface
        :class:`guard.ProbabilityCalibrator` every calibrator shares)."""
        value = confidence.get(self.signal)
        return None if value is None else float(self.predict([value])[0])

    def save(self, directory: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None
             ) -> Path:
        """Write ``calibrator.npz`` and its integrity sidecar; return the sidecar path."""
        self._check_is_fitted("cannot save an unfitted Calibrator")
        meta = {
            "kind": "calibrator",
            "signal": self.signal,
            "method": self.method_,
            "method_requested": self.method,
            "cv_brier": self.cv_brier_,
            "cv_ece10": self.cv_ece_,
            "n_samples": self.n_samples_,
            "n_correct": self.n_correct_,
            "training_hash": self.training_hash_,
            **(metadata or {}),
        }
        return save_artifact(self, directory, name=ARTIFACT_NAME, metadata=meta)

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(parameters, arrays)``: the fitted calibrator as data (no pickle)."""
        params = {"method": self.method, "signal": self.signal, "cv": self.cv,
                  "random_state": self.random_state, "method_": self.method_,
                  "cv_brier_": self.cv_brier_, "cv_ece_": self.cv_ece_,
                  "n_samples_": self.n_samples_, "n_correct_": self.n_correct_,
                  "training_hash_": self.training_hash_}
        return params, method_to_data(self.method_, self.map_)

    @classmethod
    def from_data(cls, params: dict[str, Any], arrays: dict[str, Any]) -> Calibrator:
        """The calibrator :meth:`to_data` described (its parameters checked)."""
        cal = cls(str(params["method"]), str(params["signal"]), int(params["cv"]),
                  params["random_state"])
        cal._check_params()
        if params["method_"] not in METHODS:
            raise CalibrationError(f"unknown calibration method {params['method_']!r}")
        cal.method_ = str(params["method_"])
        cal.map_ = method_from_data(cal.method_, arrays)
        cal.cv_brier_ = {str(k): float(v) for k, v in params["cv_brier_"].items()}
        cal.cv_ece_ = {str(k): float(v) for k, v in params["cv_ece_"].items()}
        cal.n_samples_, cal.n_correct_ = int(params["n_samples_"]), int(params["n_correct_"])
        cal.training_hash_ = str(params["training_hash_"])
        return cal

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, trust: bool = False) -> Calibrator:
        """Load a saved calibrator after checking its sha256 and scikit-learn version.

        Raises :class:`cost_models.persistence.ArtifactError` for a modified artifact or one
        made with another scikit-learn (unless ``trust=True``), :class:`CalibrationError` when
        the artifact is not a calibrator.
        """
        obj = load_artifact(directory, name=ARTIFACT_NAME, trust=trust, rebuild=cls.from_data)
        if not isinstance(obj, cls):
            raise CalibrationError(f"{directory}: the artifact is a {type(obj).__name__}")
        return obj


def cross_val_probability(calibrator: Calibrator, x: Any, y: Any) -> FloatArray:
    """Out-of-fold calibrated probabilities: each record predicted by a clone of
    ``calibrator`` fitted without it (with ``method="auto"`` the choice of method is made
    inside each training fold, so the estimate is not biased by the selection).

    Needs at least 3 correct and 3 incorrect records.
    """
    from sklearn.base import clone  # lazy, as in _folds

    xs, ys = check_xy(x, y)
    _require_both_classes(ys, 3, "out-of-fold evaluation")
    oof = np.empty(xs.shape[0], dtype=np.float64)
    for train, test in _folds(ys, calibrator.cv, calibrator.random_state):
        oof[test] = clone(calibrator).fit(xs[train], ys[train]).predict(xs[test])
    return oof
