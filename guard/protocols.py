"""What the guard needs from its collaborators: a cost model and a calibrator.

Both are structural (:class:`typing.Protocol`): any object with the right ``predict`` works,
so tests and applications can plug in their own. The shipped cost model comes from
``cost_models.load_default()``; :func:`load_default_cost_model` imports it only when a
:class:`guard.Guard` without a cost model first needs one.

>>> import numpy as np
>>> class FixedCost:
...     def predict(self, texts):
...         return np.full(len(texts), 8.0)
>>> isinstance(FixedCost(), CostModel)
True
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from guard.exceptions import ConfigError


@runtime_checkable
class CostModel(Protocol):
    """Anything that predicts the expected cost ``E[L] > 0`` of a wrong answer per query."""

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        """``E[L]`` for each query text (an array of floats > 0)."""
        ...


@runtime_checkable
class ProbabilityCalibrator(Protocol):
    """What the guard needs from a calibrator (:class:`guard.calibration.Calibrator`)."""

    signal: str

    def predict(self, x: Any) -> NDArray[np.float64]:
        """Calibrated probabilities in [0, 1] for a 1-D array of signal values."""
        ...


@runtime_checkable
class AnswerabilityEstimator(Protocol):
    """What the guard needs from an answerability model
    (:class:`cost_models.answerability.AnswerabilityModel`)."""

    def predict_alpha(self, X: Any) -> NDArray[np.float64]:
        """``P(answerable)`` in [0, 1] for each query text."""
        ...


@runtime_checkable
class RequestDetectorLike(Protocol):
    """What the guard needs from a request detector
    (:class:`cost_models.request_detector.RequestDetector`)."""

    def predict_asks(self, X: Any) -> NDArray[np.float64]:
        """``P(asks)`` in [0, 1] for each sentence."""
        ...


def load_default_detector() -> RequestDetectorLike:
    """The shipped request detector (``cost_models/data/request_detector``), or a
    :class:`ConfigError` saying how to do without."""
    try:
        module = importlib.import_module("cost_models.request_detector")
        load = module.load_default_detector
        model: RequestDetectorLike = load()
    except (ImportError, AttributeError, OSError) as exc:
        raise ConfigError(
            "no request detector given and cost_models.request_detector.load_default_detector() "
            f"is not available ({type(exc).__name__}); pass Guard(detector=None) to price every "
            "sentence") from None
    return model


def load_default_cost_model() -> CostModel:
    """``cost_models.load_default()``, or a :class:`ConfigError` saying how to do without."""
    cost_models = importlib.import_module("cost_models")
    load_default = getattr(cost_models, "load_default", None)
    if load_default is None:
        raise ConfigError(
            "no cost model given and cost_models.load_default() is not available; "
            "pass Guard(cost_model=...) or cost= to decide()"
        )
    model: CostModel = load_default()
    return model
