"""Cheap features of what a reply says: hedges, requests for details, false-premise notes.

These read the reply text only (no model call) and feed the multi-signal calibrator
(:class:`guard.calibration.multi.MultiSignalCalibrator`) beside the confidence signals: a
reply that asks for details or says the question rests on a wrong assumption is evidence that
the question could not be answered as asked (reply-aware answerability), a hedge that the
answer is shaky. Every feature is defined for every text, so none is ever missing.

>>> reply_features("Could you provide more details about your plan?")["asks_details"]
1.0
>>> reply_features("Actually, that is a common misconception.")["false_premise"]
1.0
>>> reply_features("I think it might be around 40.")["hedge"]
1.0
>>> reply_features("Paris.") == dict.fromkeys(REPLY_FEATURES[:-1], 0.0) | {"log_chars": 1.95}
True
"""

from __future__ import annotations

import math
import re

#: The features, in the order :func:`reply_feature_vector` returns them.
REPLY_FEATURES = ("hedge", "asks_details", "false_premise", "has_digit", "log_chars")
_SCAN = 4096

_HEDGE = re.compile(
    r"\b(?:i think|i believe|i'm not sure|i am not sure|not sure|probably|possibly|perhaps|"
    r"might be|may be|could be|likely|approximately|roughly|it depends|depends on|"
    r"generally|typically|usually|in most cases)\b", re.IGNORECASE)
_ASKS = re.compile(
    r"(?:\b(?:could|can|would) you (?:please )?(?:provide|share|give|tell|clarify|specify)|"
    r"\bplease (?:provide|share|clarify|specify)|\bmore (?:details|information|context)\b|"
    r"\bwithout (?:more|additional|further|knowing|the) (?:details|information|context|data)|"
    r"\bi (?:would )?need (?:more|additional|to know)\b|\bwhich (?:one|version) do you mean)",
    re.IGNORECASE)
_PREMISE = re.compile(
    r"\b(?:misconception|false premise|incorrect assumption|is a myth|not true that|"
    r"there is no (?:such|evidence)|does not exist|doesn't exist|never (?:happened|existed)|"
    r"actually,? (?:there|it|the|no)|contrary to)\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def reply_features(text: str | None) -> dict[str, float]:
    """The features of one reply (an empty or missing reply has all zeros)."""
    t = (text or "")[:_SCAN]
    return {
        "hedge": 1.0 if _HEDGE.search(t) else 0.0,
        "asks_details": 1.0 if _ASKS.search(t) else 0.0,
        "false_premise": 1.0 if _PREMISE.search(t) else 0.0,
        "has_digit": 1.0 if _DIGIT.search(t) else 0.0,
        "log_chars": round(math.log1p(len((text or "").strip())), 2),
    }


def reply_feature_vector(text: str | None) -> list[float]:
    """:func:`reply_features` as a list in :data:`REPLY_FEATURES` order."""
    f = reply_features(text)
    return [f[k] for k in REPLY_FEATURES]
