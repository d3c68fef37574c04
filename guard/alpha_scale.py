"""A policy's answerability scale: ``alpha`` recalibrated for kinds of questions the
answerability classifier has not seen.

The classifier (TF-IDF + logistic regression on the question) is confident on the kinds of
questions it was fitted on and overconfident on new ones: on the seed set, with whole sources
held out, the logistic regression of the labels on the logit of its out-of-fold ``alpha`` has
a slope of 0.2-0.4 — an ``alpha`` of 0.9 from it means about 0.6. An :class:`AlphaScale` is
that regression (Platt scaling), fitted on grouped out-of-fold predictions of the training
questions (each predicted by a classifier that never saw its source), and applied to the
classifier's ``alpha`` before the threshold. It is two numbers in ``policy.json``; its slope
is kept positive, so it never reverses the classifier's order.

>>> s = AlphaScale(slope=0.5, intercept=0.0)
>>> round(s(0.9), 3), s(0.5)
(0.75, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from guard.exceptions import ConfigError

#: Predicted probabilities are clipped to ``[EPS, 1 - EPS]`` before the logit.
EPS = 1e-4
#: The slope is at least this (a fitted slope <= 0 would reverse or erase the classifier).
MIN_SLOPE = 0.01
MIN_ROWS = 50


def _logit(a: Any) -> NDArray[np.float64]:
    x = np.clip(np.asarray(a, dtype=np.float64), EPS, 1.0 - EPS)
    return np.asarray(np.log(x) - np.log1p(-x), dtype=np.float64)


@dataclass(frozen=True)
class AlphaScale:
    """``alpha -> sigmoid(slope * logit(alpha) + intercept)``."""

    slope: float
    intercept: float
    n: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.slope) and math.isfinite(self.intercept)):
            raise ConfigError("an answerability scale needs a finite slope and intercept")
        if not MIN_SLOPE <= self.slope <= 100.0 or abs(self.intercept) > 100.0:
            raise ConfigError(f"an answerability scale's slope must be in [{MIN_SLOPE}, 100] "
                              "and its intercept in [-100, 100]")

    def apply(self, alpha: Any) -> NDArray[np.float64]:
        z = self.slope * _logit(alpha) + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)

    def __call__(self, alpha: float) -> float:
        return float(self.apply([alpha])[0])

    def to_data(self) -> dict[str, Any]:
        return {"kind": "platt", "slope": self.slope, "intercept": self.intercept, "n": self.n}

    @classmethod
    def from_data(cls, data: Any) -> AlphaScale:
        """Rebuild from :meth:`to_data` (checked: it is read from a file)."""
        if not isinstance(data, dict) or data.get("kind") != "platt":
            raise ConfigError("policy.json: alpha_scale is not a Platt scale")
        try:
            return cls(float(data["slope"]), float(data["intercept"]), int(data.get("n", 0)))
        except (KeyError, TypeError, ValueError):
            raise ConfigError("policy.json: alpha_scale needs numbers slope, intercept") from None


def fit_alpha_scale(alpha: Sequence[float] | NDArray[np.float64],
                    answerable: Sequence[bool] | NDArray[np.bool_]) -> AlphaScale:
    """Platt scaling of out-of-fold ``alpha`` against the ``answerable`` labels.

    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(2000) < 0.5
    >>> a = 1 / (1 + np.exp(-(np.where(y, 1.0, -1.0) + rng.normal(0, 1, 2000)) * 3))
    >>> s = fit_alpha_scale(a, y)  # logit P(y | z) = 2 z, reported as 3 z: slope about 2/3
    >>> 0.55 < s.slope < 0.8
    True
    """
    from sklearn.linear_model import LogisticRegression

    a = np.asarray(alpha, dtype=np.float64)
    y = np.asarray(answerable, dtype=bool)
    if a.shape != y.shape or a.size < MIN_ROWS or y.all() or not y.any():
        raise ConfigError(f"an answerability scale needs at least {MIN_ROWS} labelled "
                          "predictions of both classes")
    if not np.isfinite(a).all():
        raise ConfigError("an answerability scale needs finite predictions")
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(_logit(a)[:, None], y)
    slope = max(float(lr.coef_.ravel()[0]), MIN_SLOPE)
    return AlphaScale(slope, float(lr.intercept_[0]), int(a.size))
