"""Confidence signals: token logprobs, verbal confidence, self-consistency, caller-supplied.

Each signal has an extractor (:mod:`guard.confidence.extractors`) that says what it needs from
the upstream request and reads the signal from the reply; a caller-supplied probability needs
none (``Confidence(caller=p)``).
"""

from guard.confidence.consistency import REFUSAL_ANSWER, consistency, normalized_answer
from guard.confidence.extractors import (
    ConsistencyExtractor,
    Extractor,
    LogprobExtractor,
    VerbalExtractor,
    apply_overrides,
    extract_confidence,
)
from guard.confidence.logprobs import LogprobSignal, logprob_signal, token_logprobs
from guard.confidence.verbal import (
    VERBAL_INSTRUCTION,
    VerbalConfidence,
    parse_verbal_confidence,
    strip_confidence,
)

__all__ = [
    "REFUSAL_ANSWER",
    "VERBAL_INSTRUCTION",
    "ConsistencyExtractor",
    "Extractor",
    "LogprobExtractor",
    "LogprobSignal",
    "VerbalConfidence",
    "VerbalExtractor",
    "apply_overrides",
    "consistency",
    "extract_confidence",
    "logprob_signal",
    "normalized_answer",
    "parse_verbal_confidence",
    "strip_confidence",
    "token_logprobs",
]
