"""Typed records: the confidence signals of one reply, and the guard's decision about it.

:class:`Confidence` is docs/design.md's response-record ``"confidence"`` object plus ``caller`` (a
probability supplied by the caller). :class:`DecisionRecord` is docs/design.md's decision record
(also the audit-log row) with four optional extras: ``alpha``, ``signal``,
``signal_value`` and ``policy`` (``NAME@SHA8`` of the fitted policy that decided, or none).
Both are immutable pydantic models; ``record.model_dump()`` gives the JSON row.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guard.exceptions import ConfidenceError
from utilityguard_base.bounds import Cost, OptionalProbability, Probability, RefusalCost

#: The confidence signals, in the order the guard prefers them without a calibrator.
SIGNALS = ("logprob_mean", "verbal", "consistency", "logprob_low10", "caller", "ptrue")
#: The signals read from a model's reply (what a response record stores); ``caller`` is given
#: by the caller instead.
REPLY_SIGNALS = tuple(s for s in SIGNALS if s != "caller")
#: Signals that are log-probabilities (<= 0); their raw probability is ``exp(value)``.
LOG_SIGNALS = ("logprob_mean", "logprob_low10")
#: Signals that are already probabilities in [0, 1].
PROB_SIGNALS = tuple(s for s in SIGNALS if s not in LOG_SIGNALS)

Decision = Literal["answer", "refuse", "passthrough_refusal"]
Mode = Literal["enforce", "shadow"]
#: Where ``L`` came from: the cost model on what the request asks, the caller, the ceiling
#: for text the guard cannot read or that lives upstream, or nothing asked (:mod:`guard.asking`).
CostSource = Literal["model", "caller", "unreadable", "upstream", "nothing_asked"]
PSource = Literal["calibrated", "uncalibrated", "caller", "prior", "none"]
#: Where the text that set a model price sits (:mod:`guard.asking`): the user's last turn, an
#: earlier turn of the user's (``history``), the model's own text (an earlier turn, or a
#: ``prefill`` after the last user turn), a ``system`` or ``developer`` prompt, a tool
#: definition (``tools``), a text with no role (a Responses ``input`` string, a schema, a
#: reasoning summary; a role a client made up: ``other``), or the last turn read with what
#: came before it (``joined``). ``None`` when no text set the price (given by the caller, a
#: ceiling, nothing asked).
PricedBy = Literal["user", "history", "assistant", "prefill", "system", "developer", "tools",
                   "other", "joined"]
#: Each :data:`PricedBy` in plain words, in its order (the audit report, the dry run).
PRICED_BY_NAMES: dict[str, str] = {
    "user": "the user's last turn", "history": "an earlier turn of the user's",
    "assistant": "the model's own earlier text",
    "prefill": "a prefill (the model's text after the last turn)", "system": "a system prompt",
    "developer": "a developer prompt", "tools": "a tool definition",
    "other": "a text with no role (a Responses input string, a schema, a summary)",
    "joined": "the last turn read with what came before it"}
#: What set a price when no text did (``priced_by`` ``None``), in plain words.
NO_TEXT_PRICED = "a given cost, a ceiling, or nothing asked"

_Prob = OptionalProbability
_LogProb = Annotated[float | None, Field(le=0.0, allow_inf_nan=False)]


def check_signal(signal: str) -> str:
    """``signal`` if it names a confidence signal, else :class:`ConfidenceError`."""
    if signal not in SIGNALS:
        allowed = ", ".join(SIGNALS)
        raise ConfidenceError(f"unknown confidence signal {signal!r}; allowed: {allowed}")
    return signal


class Confidence(BaseModel):
    """The confidence signals read from one reply; every field may be missing (``None``).

    Attributes
    ----------
    verbal : float or None
        The confidence the model stated, in [0, 1].
    logprob_mean : float or None
        Mean token log-probability of the reply (<= 0).
    logprob_low10 : float or None
        Mean of the lowest 10% token log-probabilities (<= 0).
    consistency : float or None
        Share of sampled replies that agree with the delivered one, in [0, 1].
    caller : float or None
        A probability of correctness supplied by the caller, in [0, 1].
    ptrue : float or None
        P(True): the model's probability that its own reply is correct, asked in one extra
        call (:mod:`guard.confidence.ptrue`), in [0, 1].

    Examples
    --------
    >>> Confidence.coerce(0.8).caller
    0.8
    >>> Confidence.coerce({"logprob_mean": -0.2}).get("logprob_mean")
    -0.2
    >>> Confidence().is_empty
    True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    verbal: _Prob = None
    logprob_mean: _LogProb = None
    logprob_low10: _LogProb = None
    consistency: _Prob = None
    caller: _Prob = None
    ptrue: _Prob = None

    @classmethod
    def coerce(cls, value: Any) -> Confidence:
        """A :class:`Confidence` from ``None``, a probability, a mapping or a Confidence.

        A bare number is a caller-supplied probability. Raises :class:`ConfidenceError` for
        anything else, a value out of range, or an unknown key.
        """
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, Mapping)):
            raise ConfidenceError(
                f"confidence must be a probability, a mapping of signals or a Confidence; "
                f"got {type(value).__name__}"
            )
        try:
            if isinstance(value, Mapping):
                return cls.model_validate(dict(value))
            return cls(caller=float(value))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "confidence"
            raise ConfidenceError(f"confidence {where}: {first['msg']} (got {value!r})") from None

    def get(self, signal: str) -> float | None:
        """The value of one signal (see :data:`SIGNALS`), or ``None``."""
        value: float | None = getattr(self, check_signal(signal))
        return value

    def merged(self, other: Confidence) -> Confidence:
        """A copy with every signal ``other`` has overriding this one's."""
        update = {k: v for k in SIGNALS if (v := getattr(other, k)) is not None}
        return self.model_copy(update=update) if update else self

    @property
    def is_empty(self) -> bool:
        """True when no signal is present."""
        return all(getattr(self, s) is None for s in SIGNALS)


class DecisionRecord(BaseModel):
    """What the guard decided about one reply, and why (docs/design.md's decision record).

    ``decision`` is ``policies.should_answer(p, cost, c_r, alpha=alpha)`` when ``p`` is known;
    ``"passthrough_refusal"`` when the guard would have answered but the model refused by
    itself (its refusal is delivered as is and never counted as an answer); below the
    threshold the decision is ``"refuse"`` whatever the reply says. In ``"shadow"`` mode the
    decision is recorded but the reply is always delivered.

    Examples
    --------
    >>> r = DecisionRecord(request_id="r1", cost=8.0, cost_source="caller", p=0.5,
    ...     p_source="caller", threshold=6 / 9, c_r=2.0, expected_utility_answer=-3.5,
    ...     expected_utility_refuse=-2.0, decision="refuse", mode="enforce", latency_ms=0.1)
    >>> r.substitutes_refusal, r.delivered_refusal, r.margin
    (True, True, -1.5)
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str
    cost: Cost
    cost_source: CostSource
    p: _Prob
    p_source: PSource
    threshold: float
    c_r: RefusalCost
    expected_utility_answer: float | None
    expected_utility_refuse: float
    decision: Decision
    mode: Mode
    latency_ms: float = Field(ge=0.0)
    alpha: Probability = 1.0
    signal: str | None = None
    signal_value: float | None = None
    policy: str | None = None
    #: where the text that set ``cost`` sits (:data:`PricedBy`; ``None``: no text set it)
    priced_by: PricedBy | None = None

    @property
    def substitutes_refusal(self) -> bool:
        """True when the guard replaces the reply with its refusal text (enforce + refuse)."""
        return self.decision == "refuse" and self.mode == "enforce"

    @property
    def delivered_refusal(self) -> bool:
        """True when the caller receives a refusal: the guard's or the model's own."""
        return self.substitutes_refusal or self.decision == "passthrough_refusal"

    def summary(self, policy: str | None = None) -> dict[str, Any]:
        """The decision as a client reads it: the ``utilityguard`` object the proxy adds to a
        reply body (and the integrations to their replies).

        ``confidence`` is ``p`` (``None`` without one); ``alpha`` is the ``P(answerable)`` the
        threshold was computed with (:data:`policies.decision.THRESHOLD`); ``policy`` names
        the policy that decided: the record's own :attr:`policy` unless given (``None``: the
        guard's own settings, no fitted policy).

        Examples
        --------
        >>> r = DecisionRecord(request_id="r1", cost=8.0, cost_source="caller", p=0.5,
        ...     p_source="caller", threshold=6 / 9, c_r=2.0, expected_utility_answer=-3.5,
        ...     expected_utility_refuse=-2.0, decision="refuse", mode="enforce", latency_ms=0.1)
        >>> r.summary()  # doctest: +NORMALIZE_WHITESPACE
        {'decision': 'refuse', 'mode': 'enforce', 'cost': 8.0, 'confidence': 0.5,
         'threshold': 0.6666666666666666, 'alpha': 1.0, 'policy': None, 'request_id': 'r1'}
        """
        return {"decision": self.decision, "mode": self.mode, "cost": self.cost,
                "confidence": self.p, "threshold": self.threshold, "alpha": self.alpha,
                "policy": self.policy if policy is None else policy,
                "request_id": self.request_id}

    @property
    def margin(self) -> float | None:
        """``expected_utility_answer - expected_utility_refuse`` (``None`` without ``p``).

        This is the guard's natural ranking score (``q + C_R`` when ``alpha = 1``). The
        decision itself compares ``p`` with ``threshold``, which is exact at equality.
        """
        if self.expected_utility_answer is None:
            return None
        return self.expected_utility_answer - self.expected_utility_refuse
