"""Fitted policies: the cost model, calibrator, answerability model and default ``C_R`` the
guard decides with, fitted together and saved as one integrity-checked folder.

>>> from guard.policy import shipped_policies
>>> "smollm2" in shipped_policies()
True
"""

from guard.confidence.extractors import confidence_kind
from guard.policy.artifact import (
    POLICY_FILE,
    Policy,
    load_policy,
    load_shipped_default,
    resolve,
    save_policy,
    shipped_policies,
)
from guard.policy.fit import TrainingSet, fit_policy

__all__ = [
    "POLICY_FILE",
    "Policy",
    "TrainingSet",
    "confidence_kind",
    "fit_policy",
    "load_policy",
    "load_shipped_default",
    "resolve",
    "save_policy",
    "shipped_policies",
]
