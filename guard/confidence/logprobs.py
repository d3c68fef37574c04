"""Token log-probability signals from OpenAI-format ``logprobs``.

Two signals, as in the UtilityBench paper's confidence study: the mean token log-probability
of the reply, and ``L10%``, the mean of its lowest 10% token log-probabilities (at least one
token). Missing, null or malformed logprobs give ``None`` ("no signal"), never an exception:
upstreams that do not support logprobs return ``null`` or omit the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: A token log-probability above this is not one (a probability above 1): the whole list is
#: malformed, "no signal", rather than clamped to p = 1. The slack absorbs rounding (a
#: server printing 1e-9 for a certain token).
MAX_LOGPROB = 1e-6


@dataclass(frozen=True)
class LogprobSignal:
    """``mean`` and ``low10`` of the token log-probabilities (both <= 0) and the token count."""

    mean: float
    low10: float
    n_tokens: int

    @property
    def p_mean(self) -> float:
        """``exp(mean logprob)``: the uncalibrated probability the guard uses by default."""
        return math.exp(self.mean)


def token_logprobs(logprobs: Any) -> list[float] | None:
    """The list of token log-probabilities in an OpenAI ``choice.logprobs`` object.

    Accepts the chat format (``{"content": [{"token", "logprob", ...}, ...]}``), the legacy
    completions format (``{"token_logprobs": [...]}``), pydantic objects of the ``openai``
    library, or ``None``. Returns ``None`` when there is no usable value, and when any value
    is above :data:`MAX_LOGPROB` (not a log-probability: the list is malformed).

    >>> token_logprobs({"content": [{"logprob": -0.5}, {"logprob": 5.0}]}) is None
    True
    """
    if logprobs is None:
        return None
    if hasattr(logprobs, "model_dump"):
        logprobs = logprobs.model_dump()
    if not isinstance(logprobs, Mapping):
        return None
    values: list[Any]
    content = logprobs.get("content")
    if isinstance(content, Sequence) and not isinstance(content, str):
        values = [t.get("logprob") if type(t) is dict or isinstance(t, Mapping) else None
                  for t in content]
    elif isinstance(logprobs.get("token_logprobs"), Sequence):
        values = list(logprobs["token_logprobs"])
    else:
        return None
    out = [
        float(v)
        for v in values
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    ]
    if any(v > MAX_LOGPROB for v in out):
        return None
    return out or None


def logprob_signal(logprobs: Any) -> LogprobSignal | None:
    """Mean and lowest-10% mean of the token log-probabilities, or ``None`` without a signal.

    Examples
    --------
    >>> s = logprob_signal({"content": [{"token": "Paris", "logprob": -0.1},
    ...                                 {"token": ".", "logprob": -0.3}]})
    >>> round(s.mean, 3), round(s.low10, 3), s.n_tokens
    (-0.2, -0.3, 2)
    >>> logprob_signal(None) is None, logprob_signal({"content": None}) is None
    (True, True)
    """
    values = token_logprobs(logprobs)
    if values is None:
        return None
    values = [min(v, 0.0) for v in values]
    k = max(1, math.ceil(0.1 * len(values)))
    low = sorted(values)[:k]
    return LogprobSignal(sum(values) / len(values), sum(low) / k, len(values))
