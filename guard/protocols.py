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
    """What the guard needs from a calibrator: ``P(correct)`` of one reply. Both shipped
    calibrators answer it the same way (:class:`guard.calibration.Calibrator`, one signal;
    :class:`guard.calibration.multi.MultiSignalCalibrator`, several signals and the reply
    text), and both give ``predict_proba(X)[:, 1]`` for many replies."""

    @property
    def signal(self) -> str:
        """The signal the guard's extractors must provide at least."""
        ...

    @property
    def signals(self) -> Sequence[str]:
        """Every signal it reads (the others are used when present)."""
        ...

    def p_correct(self, confidence: Any, text: str | None = None) -> float | None:
        """``P(correct)`` of a reply from its confidence (a
        :class:`~guard.decision_records.Confidence`) and its text as delivered; ``None``
        when the reply lacks what it reads."""
        ...


class SignalCalibrator:
    """A calibrator of the older interface (``signal`` and ``predict``: the probabilities of
    signal values) read through :class:`ProbabilityCalibrator` (:func:`as_calibrator`)."""

    def __init__(self, calibrator: Any) -> None:
        self.calibrator = calibrator
        self.signal: str = calibrator.signal

    @property
    def signals(self) -> tuple[str, ...]:
        return (self.signal,)

    def predict(self, x: Any) -> NDArray[np.float64]:
        """The probabilities of signal values ``x`` (the calibrator's own ``predict``)."""
        return np.asarray(self.calibrator.predict(x), dtype=np.float64).ravel()

    def predict_proba(self, x: Any) -> NDArray[np.float64]:
        """``[P(wrong), P(correct)]`` for each signal value of ``x``."""
        p = self.predict(x)
        return np.column_stack([1.0 - p, p])

    def p_correct(self, confidence: Any, text: str | None = None) -> float | None:
        value = confidence.get(self.signal)
        return None if value is None else float(self.predict([value])[0])

    def __repr__(self) -> str:
        return f"SignalCalibrator({self.calibrator!r})"


def as_calibrator(calibrator: Any) -> ProbabilityCalibrator:
    """``calibrator`` as a :class:`ProbabilityCalibrator`: as it is when it has
    ``p_correct``, else read through its ``predict`` (:class:`SignalCalibrator`);
    :class:`ConfigError` for anything else."""
    if isinstance(calibrator, ProbabilityCalibrator):
        return calibrator
    if isinstance(getattr(calibrator, "signal", None), str) and \
            callable(getattr(calibrator, "predict", None)):
        return SignalCalibrator(calibrator)
    raise ConfigError(f"a calibrator needs p_correct(confidence, text) and signal; got a "
                      f"{type(calibrator).__name__}")


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
