"""Confidence signals: token logprobs, verbal confidence, self-consistency, caller-supplied."""

from guard.confidence.logprobs import LogprobSignal, logprob_signal, token_logprobs
from guard.confidence.verbal import (
    VERBAL_INSTRUCTION,
    VerbalConfidence,
    parse_verbal_confidence,
    strip_confidence,
)

__all__ = [
    "VERBAL_INSTRUCTION",
    "LogprobSignal",
    "VerbalConfidence",
    "logprob_signal",
    "parse_verbal_confidence",
    "strip_confidence",
    "token_logprobs",
]
