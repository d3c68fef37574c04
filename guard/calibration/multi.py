"""P(correct) from several confidence signals at once, on the scikit-learn estimator contract.

:class:`MultiSignalCalibrator` reads a row of confidence signals (any of
:data:`guard.decision_records.REPLY_SIGNALS`, NaN where a reply has none) followed by the reply-text
features of :mod:`guard.confidence.reply_features` (always present), and predicts
``P(correct)`` with a logistic regression.

**A missing signal is handled, not guessed.** Nothing is imputed: one logistic regression is
fitted for every pattern of present signals (each subset of ``signals``, on the training rows
that have at least those signals), and a row is predicted by the model of exactly the signals
it has. A pattern with too few training rows (``min_rows``, or fewer than ``min_class`` of a
class) uses the model of the largest subset of its signals that has one; the model of no
signal at all (reply features only) always exists. Signals are oriented as the single-signal
calibrators orient them: log-probabilities as they are (clipped to [-20, 0]), probabilities as
their logit.

The fitted state is plain numbers (:meth:`to_dict` / :meth:`from_dict`, JSON): loading it runs
no code, and predicting is numpy only.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> lp = -rng.exponential(1.0, 400)
>>> y = rng.random(400) < np.exp(lp)
>>> X = np.column_stack([lp, np.where(rng.random(400) < 0.3, np.nan, -lp / 2),
...                      np.zeros((400, len(REPLY_FEATURES)))])
>>> cal = MultiSignalCalibrator(signals=("logprob_mean", "logprob_low10")).fit(X, y)
>>> p = cal.predict_proba(X)[:, 1]
>>> bool(p[np.argmin(lp)] < p[np.argmax(lp)]), sorted(cal.patterns_)[:2]
(True, [(), ('logprob_low10',)])
>>> cal2 = MultiSignalCalibrator.from_dict(cal.to_dict())
>>> bool(np.allclose(cal2.predict_proba(X), cal.predict_proba(X)))
True
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from guard.confidence.reply_features import REPLY_FEATURES, reply_feature_vector
from guard.decision_records import LOG_SIGNALS
from guard.exceptions import CalibrationError

FloatArray = NDArray[np.float64]
Pattern = tuple[str, ...]
FORMAT = "utilityguard-multi-signal-calibrator"
MULTI_FILE = "multi.json"


def _oriented(signal: str, v: FloatArray) -> FloatArray:
    if signal in LOG_SIGNALS:
        return np.clip(v, -20.0, 0.0)
    q = np.clip(v, 1e-4, 1.0 - 1e-4)
    return np.log(q / (1.0 - q))


def feature_rows(signals: Mapping[str, Sequence[float] | FloatArray], texts: Sequence[str | None],
                 names: Sequence[str]) -> FloatArray:
    """The input matrix: one column per signal of ``names`` (NaN where missing), then the
    reply features of each text."""
    n = len(texts)
    cols = [np.asarray(signals.get(s, np.full(n, np.nan)), dtype=np.float64) for s in names]
    feats = np.array([reply_feature_vector(t) for t in texts], dtype=np.float64).reshape(
        n, len(REPLY_FEATURES))
    return np.column_stack([*cols, feats]) if cols else feats


class MultiSignalCalibrator(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """See the module docstring.

    Parameters
    ----------
    signals : tuple of str
        The confidence signals of the first columns, in order.
    reply_features : bool, default True
        Use the reply-feature columns (else they are read and ignored).
    C : float, default 1.0
        Inverse L2 strength of each logistic regression (on standardized inputs).
    min_rows, min_class : int
        What a pattern's model needs: training rows, and rows of each class.
    """

    def __init__(self, signals: Sequence[str] = ("logprob_mean",), reply_features: bool = True,
                 C: float = 1.0, min_rows: int = 60, min_class: int = 8) -> None:
        self.signals = signals
        self.reply_features = reply_features
        self.C = C
        self.min_rows = min_rows
        self.min_class = min_class

    # -- fitting -------------------------------------------------------------------------------
    def _design(self, X: FloatArray, pattern: Pattern) -> FloatArray:
        sig = list(self.signals)
        cols = [_oriented(s, X[:, sig.index(s)]) for s in pattern]
        if self.reply_features:
            cols += [X[:, len(sig) + k] for k in range(len(REPLY_FEATURES))]
        return np.column_stack(cols) if cols else np.zeros((X.shape[0], 0))

    def _fit_one(self, Z: FloatArray, y: NDArray[np.bool_]) -> dict[str, Any]:
        from sklearn.linear_model import LogisticRegression

        mean = Z.mean(axis=0) if Z.shape[1] else np.zeros(0)
        scale = Z.std(axis=0) if Z.shape[1] else np.zeros(0)
        scale = np.where(scale > 1e-9, scale, 1.0)
        if Z.shape[1] == 0 or y.all() or not y.any():
            rate = float(np.clip(y.mean(), 1e-4, 1 - 1e-4))
            return {"mean": mean.tolist(), "scale": scale.tolist(), "coef": [0.0] * Z.shape[1],
                    "intercept": float(np.log(rate / (1 - rate)))}
        lr = LogisticRegression(C=self.C, max_iter=1000).fit((Z - mean) / scale, y)
        return {"mean": mean.tolist(), "scale": scale.tolist(),
                "coef": lr.coef_[0].astype(float).tolist(),
                "intercept": float(lr.intercept_[0])}

    def fit(self, X: Any, y: Any) -> MultiSignalCalibrator:
        X = self._check_X(X)
        yb = np.asarray(y, dtype=bool).ravel()
        if yb.shape[0] != X.shape[0]:
            raise CalibrationError(f"X has {X.shape[0]} rows but y has {yb.shape[0]}")
        if X.shape[0] < 2:
            raise CalibrationError("the multi-signal calibrator needs at least 2 records")
        present = np.isfinite(X[:, : len(self.signals)])
        self.patterns_: dict[Pattern, dict[str, Any]] = {}
        for r in range(len(self.signals) + 1):
            for pattern in itertools.combinations(self.signals, r):
                idx = [list(self.signals).index(s) for s in pattern]
                rows = present[:, idx].all(axis=1) if idx else np.ones(X.shape[0], bool)
                pos, neg = int(yb[rows].sum()), int((~yb[rows]).sum())
                if pattern and (rows.sum() < self.min_rows or min(pos, neg) < self.min_class):
                    continue
                self.patterns_[pattern] = self._fit_one(self._design(X[rows], pattern), yb[rows])
        self.classes_ = np.array([False, True])
        self.n_features_in_ = X.shape[1]
        return self

    # -- predicting ----------------------------------------------------------------------------
    def _check_X(self, X: Any) -> FloatArray:
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != len(self.signals) + len(REPLY_FEATURES):
            raise CalibrationError(
                f"expected rows of {len(self.signals)} signals ({', '.join(self.signals)}) and "
                f"{len(REPLY_FEATURES)} reply features; got shape {arr.shape}")
        return arr

    def pattern_of(self, row_present: Sequence[bool]) -> Pattern:
        """The fitted pattern a row with these signals present is predicted by."""
        have = tuple(s for s, ok in zip(self.signals, row_present, strict=True) if ok)
        for r in range(len(have), -1, -1):
            for pattern in itertools.combinations(have, r):
                if pattern in self.patterns_:
                    return pattern
        raise CalibrationError("the multi-signal calibrator is not fitted")

    def predict_proba(self, X: Any) -> FloatArray:
        X = self._check_X(X)
        present = np.isfinite(X[:, : len(self.signals)])
        out = np.empty(X.shape[0])
        keys = [self.pattern_of(row) for row in present]
        for pattern in set(keys):
            rows = np.array([k == pattern for k in keys])
            m = self.patterns_[pattern]
            Z = self._design(X[rows], pattern)
            z = ((Z - np.asarray(m["mean"])) / np.asarray(m["scale"])) @ np.asarray(
                m["coef"], dtype=np.float64) + m["intercept"] if Z.shape[1] else np.full(
                int(rows.sum()), m["intercept"])
            out[rows] = 1.0 / (1.0 + np.exp(-z))
        return np.column_stack([1.0 - out, out])

    def predict(self, X: Any) -> NDArray[np.bool_]:
        """Whether each reply is more likely right than wrong (the scikit-learn classifier
        contract); ``P(correct)`` is :meth:`predict_proba` ``[:, 1]`` and :meth:`p_correct`,
        what every calibrator answers (:class:`guard.ProbabilityCalibrator`)."""
        return np.asarray(self.predict_proba(X)[:, 1] >= 0.5)

    @property
    def signal(self) -> str:
        """The first of ``signals``: what a guard's extractors must provide at least (the
        others are used when present)."""
        return str(self.signals[0]) if self.signals else "logprob_mean"

    def p_correct(self, confidence: Any, text: str | None = None) -> float:
        """``P(correct)`` of one reply from its :class:`~guard.decision_records.Confidence` (or a
        mapping of signals) and its text; the signals it lacks are left out, not guessed."""
        get = confidence.get if hasattr(confidence, "get") else dict(confidence).get
        row = [np.nan if (v := get(s)) is None else float(v) for s in self.signals]
        X = np.array([row + reply_feature_vector(text)], dtype=np.float64)
        return float(self.predict_proba(X)[0, 1])

    # -- as data -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The fitted state as JSON-able data."""
        return {"format": FORMAT, "signals": list(self.signals),
                "reply_features": list(REPLY_FEATURES) if self.reply_features else [],
                "C": self.C, "min_rows": self.min_rows, "min_class": self.min_class,
                "patterns": [{"signals": list(k), **v} for k, v in self.patterns_.items()]}

    #: what a policy card calls the method
    method_ = "multi-signal logistic"

    def save(self, directory: str | Any) -> Path:
        """Write ``multi.json`` (the fitted state as data) to ``directory``; return its path."""
        if not hasattr(self, "patterns_"):
            raise CalibrationError("cannot save an unfitted MultiSignalCalibrator")
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        path = root / MULTI_FILE
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, directory: str | Any) -> MultiSignalCalibrator:
        """Read ``multi.json`` (data only: nothing is executed)."""
        path = Path(directory) / MULTI_FILE
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return cls.from_dict(d)
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"{path}: not a multi-signal calibrator ({exc})") from None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MultiSignalCalibrator:
        if d.get("format") != FORMAT:
            raise CalibrationError("not a multi-signal calibrator")
        if d.get("reply_features") not in ([], list(REPLY_FEATURES)):
            raise CalibrationError("the calibrator was fitted on other reply features")
        cal = cls(signals=tuple(d["signals"]), reply_features=bool(d["reply_features"]),
                  C=float(d["C"]), min_rows=int(d["min_rows"]), min_class=int(d["min_class"]))
        cal.patterns_ = {}
        for p in d["patterns"]:
            width = len(p["signals"]) + (len(REPLY_FEATURES) if cal.reply_features else 0)
            if not (len(p["coef"]) == len(p["mean"]) == len(p["scale"]) == width):
                raise CalibrationError("a pattern of the multi-signal calibrator is malformed")
            cal.patterns_[tuple(p["signals"])] = {k: p[k] for k in
                                                  ("mean", "scale", "coef", "intercept")}
        cal.classes_ = np.array([False, True])
        cal.n_features_in_ = len(cal.signals) + len(REPLY_FEATURES)
        return cal
