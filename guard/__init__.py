"""utilityguard runtime: confidence, calibration, the Guard, the decorator, the proxy, the CLI.

>>> from guard import Guard
>>> class FixedCost:
...     def predict(self, texts):
...         return [8.0 for _ in texts]
>>> g = Guard(FixedCost(), c_r=2.0)
>>> g.decide("Max daily acetaminophen dose?", "400 mg", confidence=0.5).decision
'refuse'
"""

# first: a user's policies.py or cost_models.py shadowing ours is named (guard.siblings)
from guard import siblings as _siblings  # noqa: F401, I001
from guard import exceptions
from guard.calibration import Calibrator, brier, cross_val_probability, ece, raw_probability
from guard.confidence.consistency import consistency
from guard.confidence.extractors import (
    ConsistencyExtractor,
    Extractor,
    LogprobExtractor,
    VerbalExtractor,
)
from guard.context import last_decision
from guard.core import Guard
from guard.decision_records import SIGNALS, Confidence, DecisionRecord
from guard.decorator import guarded
from guard.exceptions import (
    AuthenticationError,
    CalibrationError,
    ClientDisconnected,
    ClientRequestError,
    ConfidenceError,
    ConfigError,
    InvalidRequestError,
    PayloadTooLargeError,
    PermissionDeniedError,
    UpstreamError,
    UpstreamPoolExhausted,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamTooLarge,
    UpstreamUnavailable,
    UtilityGuardError,
)
from guard.protocols import CostModel, ProbabilityCalibrator
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT, REFUSAL_HINT, is_refusal

__all__ = [
    "DEFAULT_REFUSAL_TEXT",
    "REFUSAL_HINT",
    "SIGNALS",
    "AuthenticationError",
    "CalibrationError",
    "Calibrator",
    "ClientDisconnected",
    "ClientRequestError",
    "Confidence",
    "ConfidenceError",
    "ConfigError",
    "ConsistencyExtractor",
    "CostModel",
    "DecisionRecord",
    "Extractor",
    "Guard",
    "InvalidRequestError",
    "LogprobExtractor",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "ProbabilityCalibrator",
    "UpstreamError",
    "UpstreamPoolExhausted",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamTooLarge",
    "UpstreamUnavailable",
    "UtilityGuardError",
    "VerbalExtractor",
    "brier",
    "consistency",
    "cross_val_probability",
    "ece",
    "exceptions",
    "guarded",
    "is_refusal",
    "last_decision",
    "raw_probability",
]
