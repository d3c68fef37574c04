"""The three calibration maps a :class:`guard.calibration.Calibrator` chooses from.

Each map has ``fit(x, y) -> self`` on a 1-D float signal (larger = more confident) and bool
correctness, and ``predict(x) -> p``. Predictions are plain numpy, so calibrating one value
costs microseconds on the request path; scikit-learn is imported only to fit.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from guard.calibration.scoring import FloatArray, as_labels, as_signal_values
from guard.exceptions import CalibrationError

BoolArray = NDArray[np.bool_]
#: Calibration methods, in the order that breaks ties of cross-validated Brier.
METHODS = ("platt", "isotonic", "histogram")


class Method(Protocol):
    """One fitted calibration map (what :class:`~guard.calibrator.Calibrator` wraps)."""

    def fit(self, x: FloatArray, y: BoolArray) -> Method:
        """Learn the map from signal values ``x`` to correctness ``y``; return ``self``."""
        ...

    def predict(self, x: FloatArray) -> FloatArray:
        """``P(correct)`` for signal values ``x`` (clipped to [0, 1] by the caller)."""
        ...


class PlattCalibration:
    """Platt scaling: ``p = sigmoid(a z + b)`` with ``z`` the standardized signal.

    Fitted by :class:`sklearn.linear_model.LogisticRegression` with a mild L2 penalty
    (``C``), which keeps the slope finite when the training records are separable.
    """

    def __init__(self, C: float = 10.0) -> None:
        self.C = C

    def fit(self, x: FloatArray, y: BoolArray) -> PlattCalibration:
        self.mean_ = float(x.mean())
        self.scale_ = float(x.std()) or 1.0
        z = ((x - self.mean_) / self.scale_).reshape(-1, 1)
        from sklearn.linear_model import LogisticRegression  # lazy: import guard stays light

        lr = LogisticRegression(C=self.C, max_iter=1000).fit(z, y.astype(np.int64))
        self.coef_ = float(lr.coef_[0, 0])
        self.intercept_ = float(lr.intercept_[0])
        return self

    def predict(self, x: FloatArray) -> FloatArray:
        z = (x - self.mean_) / self.scale_
        out: FloatArray = 1.0 / (1.0 + np.exp(-(self.coef_ * z + self.intercept_)))
        return out


class IsotonicCalibration:
    """Isotonic regression of correctness on the signal, non-decreasing, clipped outside
    the training range; predicted by linear interpolation between its thresholds (what
    :meth:`sklearn.isotonic.IsotonicRegression.predict` does, without its per-call overhead).
    """

    def fit(self, x: FloatArray, y: BoolArray) -> IsotonicCalibration:
        from sklearn.isotonic import IsotonicRegression  # lazy: import guard stays light

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(x, y.astype(np.float64))
        self.x_: FloatArray = np.asarray(iso.X_thresholds_, dtype=np.float64)
        self.y_: FloatArray = np.asarray(iso.y_thresholds_, dtype=np.float64)
        return self

    def predict(self, x: FloatArray) -> FloatArray:
        out: FloatArray = np.interp(x, self.x_, self.y_)
        return out


class HistogramBinning:
    """Histogram binning: the training accuracy of the equal-count bin a signal falls in.

    Bins are cut at quantiles of the training signal (ties merged), with at least
    ``min_per_bin`` records per bin on average, so small training sets get fewer bins.
    """

    def __init__(self, n_bins: int = 10, min_per_bin: int = 5) -> None:
        self.n_bins = n_bins
        self.min_per_bin = min_per_bin

    def fit(self, x: FloatArray, y: BoolArray) -> HistogramBinning:
        k = max(1, min(self.n_bins, x.shape[0] // self.min_per_bin))
        cuts = np.unique(np.quantile(x, np.linspace(0.0, 1.0, k + 1)[1:-1]))
        idx = np.searchsorted(cuts, x, side="right")
        values = np.full(cuts.shape[0] + 1, float(y.mean()))
        for b in np.unique(idx):
            values[b] = float(y[idx == b].mean())
        self.cuts_: FloatArray = cuts
        self.values_: FloatArray = values
        return self

    def predict(self, x: FloatArray) -> FloatArray:
        out: FloatArray = self.values_[np.searchsorted(self.cuts_, x, side="right")]
        return out


#: The fitted attributes of each map, saved as arrays (data, never pickles).
MAP_ARRAYS = {"platt": ("mean_", "scale_", "coef_", "intercept_"),
              "isotonic": ("x_", "y_"), "histogram": ("cuts_", "values_")}


def method_to_data(name: str, fitted: Method) -> dict[str, Any]:
    """The fitted attributes of a calibration map, as float arrays."""
    return {f"map.{a}": np.atleast_1d(np.asarray(getattr(fitted, a), dtype=np.float64))
            for a in MAP_ARRAYS[name]}


def method_from_data(name: str, arrays: dict[str, Any]) -> Method:
    """The calibration map :func:`method_to_data` described."""
    fitted = make_method(name)
    for a in MAP_ARRAYS[name]:
        value = np.asarray(arrays[f"map.{a}"], dtype=np.float64)
        setattr(fitted, a, float(value[0]) if name == "platt" else value)
    return fitted


def make_method(name: str) -> Method:
    """A fresh, unfitted calibration map by name (one of :data:`METHODS`)."""
    if name == "platt":
        return PlattCalibration()
    if name == "isotonic":
        return IsotonicCalibration()
    if name == "histogram":
        return HistogramBinning()
    raise CalibrationError(f"unknown calibration method {name!r}; allowed: {', '.join(METHODS)}")


def check_xy(x: Any, y: Any) -> tuple[FloatArray, BoolArray]:
    """Validated signal and label arrays of one length; :class:`CalibrationError` otherwise."""
    xs = as_signal_values(x, "x")
    ys = as_labels(y, "y")
    if xs.shape != ys.shape:
        raise CalibrationError(
            f"x and y must have one length; got {xs.shape[0]} and {ys.shape[0]}"
        )
    return xs, ys


def class_counts(y: BoolArray) -> tuple[int, int]:
    """(number correct, number incorrect)."""
    pos = int(y.sum())
    return pos, int(y.shape[0]) - pos
