"""utilityguard runtime: confidence, calibration, the Guard, the decorator, the proxy, the CLI.

>>> from guard import Guard
>>> class FixedCost:
...     def predict(self, texts):
...         return [8.0 for _ in texts]
>>> g = Guard(FixedCost(), c_r=2.0)
>>> g.decide("Max daily acetaminophen dose?", "400 mg", confidence=0.5).decision
'refuse'

The public names (:data:`__all__`) are what using a :class:`Guard` takes: the guard, the
decorator, the extractors and calibrators, every type its signatures use (:class:`Price`,
:class:`DecisionConfig`, :class:`AskingConfig`, :class:`Policy`, ...) and the errors they raise
(:class:`ConfigError`, :class:`ArtifactError`, ...; the whole tree is :mod:`guard.exceptions`).
Each loads on first use (PEP 562): ``import guard`` and ``import guard.exceptions`` load
neither numpy nor pydantic. The errors only the proxy raises (401, 403, 413, 499, ...) and the
calibration metrics are not listed: they are in their modules (:mod:`guard.exceptions`,
:mod:`guard.calibration`), and still read as ``guard.<name>``.
"""

# first: a user's policies.py or cost_models.py shadowing ours is named (guard.siblings)
from guard import siblings as _siblings  # noqa: F401, I001
from guard import exceptions

import importlib
import typing

if typing.TYPE_CHECKING:
    from guard.alpha_scale import AlphaScale
    from guard.asking import AskingConfig, Memo, Reading, Thresholds
    from guard.calibration import Calibrator, raw_probability
    from guard.confidence.extractors import (
        ConsistencyExtractor,
        Extractor,
        LogprobExtractor,
        VerbalExtractor,
    )
    from guard.context import last_decision
    from guard.core import Guard
    from guard.cost_scale import CostScale
    from guard.decision_config import DecisionConfig
    from guard.decision_records import SIGNALS, Confidence, DecisionRecord
    from guard.decorator import guarded
    from guard.exceptions import (
        ArtifactError,
        CalibrationError,
        ConfidenceError,
        ConfigError,
        InvalidValueError,
        UpstreamError,
        UpstreamStatusError,
        UpstreamTimeout,
        UpstreamUnavailable,
        UtilityGuardError,
    )
    from guard.policy.artifact import Policy
    from guard.price import Price
    from guard.protocols import (
        AnswerabilityEstimator,
        CostModel,
        ProbabilityCalibrator,
        RequestDetectorLike,
    )
    from guard.refusal_detection import DEFAULT_REFUSAL_TEXT, REFUSAL_HINT, is_refusal

#: Each public name and the module it lives in.
_HOMES = {
    "AlphaScale": "guard.alpha_scale",
    "AnswerabilityEstimator": "guard.protocols",
    "ArtifactError": "guard.exceptions",
    "AskingConfig": "guard.asking",
    "CalibrationError": "guard.exceptions",
    "Calibrator": "guard.calibration",
    "Confidence": "guard.decision_records",
    "ConfidenceError": "guard.exceptions",
    "ConfigError": "guard.exceptions",
    "ConsistencyExtractor": "guard.confidence.extractors",
    "CostModel": "guard.protocols",
    "CostScale": "guard.cost_scale",
    "DEFAULT_REFUSAL_TEXT": "guard.refusal_detection",
    "DecisionConfig": "guard.decision_config",
    "DecisionRecord": "guard.decision_records",
    "Extractor": "guard.confidence.extractors",
    "Guard": "guard.core",
    "InvalidValueError": "guard.exceptions",
    "LogprobExtractor": "guard.confidence.extractors",
    "Memo": "guard.asking",
    "Policy": "guard.policy.artifact",
    "Price": "guard.price",
    "ProbabilityCalibrator": "guard.protocols",
    "REFUSAL_HINT": "guard.refusal_detection",
    "Reading": "guard.asking",
    "RequestDetectorLike": "guard.protocols",
    "SIGNALS": "guard.decision_records",
    "Thresholds": "guard.asking",
    "UpstreamError": "guard.exceptions",
    "UpstreamStatusError": "guard.exceptions",
    "UpstreamTimeout": "guard.exceptions",
    "UpstreamUnavailable": "guard.exceptions",
    "UtilityGuardError": "guard.exceptions",
    "VerbalExtractor": "guard.confidence.extractors",
    "guarded": "guard.decorator",
    "is_refusal": "guard.refusal_detection",
    "last_decision": "guard.context",
    "raw_probability": "guard.calibration",
}
#: Names read as ``guard.<name>`` before they left the public list: the errors only the proxy
#: raises, and the calibration metrics.
_UNLISTED = {
    **dict.fromkeys(("AuthenticationError", "ClientDisconnected", "ClientRequestError",
                     "InvalidRequestError", "PayloadTooLargeError", "PermissionDeniedError",
                     "UpstreamPoolExhausted", "UpstreamTooLarge"), "guard.exceptions"),
    **dict.fromkeys(("brier", "cross_val_probability", "ece"), "guard.calibration"),
    "consistency": "guard.confidence.consistency",
}

__all__ = [
    "DEFAULT_REFUSAL_TEXT",
    "REFUSAL_HINT",
    "SIGNALS",
    "AlphaScale",
    "AnswerabilityEstimator",
    "ArtifactError",
    "AskingConfig",
    "CalibrationError",
    "Calibrator",
    "Confidence",
    "ConfidenceError",
    "ConfigError",
    "ConsistencyExtractor",
    "CostModel",
    "CostScale",
    "DecisionConfig",
    "DecisionRecord",
    "Extractor",
    "Guard",
    "InvalidValueError",
    "LogprobExtractor",
    "Memo",
    "Policy",
    "Price",
    "ProbabilityCalibrator",
    "Reading",
    "RequestDetectorLike",
    "Thresholds",
    "UpstreamError",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "UtilityGuardError",
    "VerbalExtractor",
    "exceptions",
    "guarded",
    "is_refusal",
    "last_decision",
    "raw_probability",
]


def __getattr__(name: str) -> typing.Any:
    home = _HOMES.get(name) or _UNLISTED.get(name)
    if home is None:
        raise AttributeError(f"module 'guard' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
