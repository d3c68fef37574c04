"""Confidence extractors: what each signal needs from the upstream request, and how to read it.

An :class:`Extractor` has three methods:

``request_overrides(body)``
    The keys to set in a Chat Completions request body so the reply carries the signal
    (logprobs: ``{"logprobs": True, "top_logprobs": 1}``; verbal: the ``messages`` with the
    confidence instruction added to the system prompt; consistency: ``{"n": k}``).
``extract(completion)``
    A :class:`~guard.decision_records.Confidence` read from the reply: a completion mapping, an
    ``openai`` ``ChatCompletion``, or plain text. A reply without the signal gives an empty
    Confidence ("no signal"), never an exception.
``clean(text)``
    The text to deliver: the verbal extractor removes the confidence line it asked for.

A caller-supplied probability needs no extractor: pass ``Confidence(caller=p)`` (or just ``p``)
to :meth:`guard.Guard.decide`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from guard.completion import completion_logprobs, completion_text, completion_texts
from guard.confidence.consistency import ANSWER_TYPES, consistency
from guard.confidence.logprobs import logprob_signal
from guard.confidence.verbal import VERBAL_INSTRUCTION, parse_verbal_confidence, strip_confidence
from guard.decision_records import Confidence
from guard.exceptions import ConfigError


@runtime_checkable
class Extractor(Protocol):
    """What a confidence extractor provides (see the module docstring)."""

    name: str
    #: the confidence signals this extractor can read from a reply (see ``guard.decision_records``)
    signals: tuple[str, ...]

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The request-body keys to set (new values; ``body`` is not modified)."""
        ...

    def extract(self, completion: Any) -> Confidence:
        """The signal found in a reply; an empty :class:`Confidence` when there is none."""
        ...

    def clean(self, text: str) -> str:
        """The reply text as delivered to the caller."""
        ...


class LogprobExtractor:
    """Mean token log-probability and L10% from OpenAI-format ``logprobs``.

    Examples
    --------
    >>> ex = LogprobExtractor()
    >>> ex.request_overrides({})
    {'logprobs': True, 'top_logprobs': 1}
    >>> reply = {"choices": [{"message": {"content": "Paris"},
    ...          "logprobs": {"content": [{"token": "Paris", "logprob": -0.25}]}}]}
    >>> ex.extract(reply).logprob_mean
    -0.25
    >>> ex.extract({"choices": [{"message": {"content": "Paris"}, "logprobs": None}]}).is_empty
    True
    """

    name = "logprobs"
    signals: tuple[str, ...] = ("logprob_mean", "logprob_low10")

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"logprobs": True, "top_logprobs": 1}

    def extract(self, completion: Any) -> Confidence:
        if isinstance(completion, str):
            return Confidence()
        sig = logprob_signal(completion_logprobs(completion))
        if sig is None:
            return Confidence()
        return Confidence(logprob_mean=sig.mean, logprob_low10=sig.low10)

    def clean(self, text: str) -> str:
        return text


class VerbalExtractor:
    """The model's stated confidence ("Confidence: 85%", "8/10", "almost certain").

    Examples
    --------
    >>> ex = VerbalExtractor(instruction="Say how sure you are.")
    >>> body = {"messages": [{"role": "user", "content": "Capital of France?"}]}
    >>> ex.request_overrides(body)["messages"][0]
    {'role': 'system', 'content': 'Say how sure you are.'}
    >>> ex.extract("Paris.\\nConfidence: 90%").verbal
    0.9
    >>> ex.clean("Paris.\\nConfidence: 90%")
    'Paris.'
    """

    name = "verbal"
    signals: tuple[str, ...] = ("verbal",)

    def __init__(self, instruction: str = VERBAL_INSTRUCTION) -> None:
        self.instruction = instruction

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        messages = [dict(m) if isinstance(m, Mapping) else m for m in body.get("messages") or []]
        first = messages[0] if messages else None
        if isinstance(first, dict) and first.get("role") in ("system", "developer"):
            content = first.get("content")
            if isinstance(content, str):
                if self.instruction not in content:
                    first["content"] = f"{content.rstrip()} {self.instruction}".strip()
                return {"messages": messages}
        return {"messages": [{"role": "system", "content": self.instruction}, *messages]}

    def extract(self, completion: Any) -> Confidence:
        text = completion if isinstance(completion, str) else completion_text(completion)
        parsed = parse_verbal_confidence(text)
        return Confidence(verbal=parsed.value) if parsed else Confidence()

    def clean(self, text: str) -> str:
        return strip_confidence(text)


class ConsistencyExtractor:
    """Agreement of the delivered reply (choice 0) with ``n - 1`` other samples.

    Parameters
    ----------
    n : int, default 5
        Number of choices requested (``n >= 2``); the first is the one delivered.
    answer_type : {"choice", "number", "text", "code"}, default "text"
        How replies are normalized before comparison.
    temperature : float or None, default 0.7
        Set in the request when the caller's body has no temperature or temperature 0
        (identical greedy samples would always agree); ``None`` never sets it.

    Examples
    --------
    >>> ex = ConsistencyExtractor(n=3, answer_type="number")
    >>> ex.request_overrides({"temperature": 0})
    {'n': 3, 'temperature': 0.7}
    >>> reply = {"choices": [{"message": {"content": c}} for c in ("12", "It is 12.", "13")]}
    >>> round(ex.extract(reply).consistency, 3)
    0.667
    """

    name = "consistency"
    signals: tuple[str, ...] = ("consistency",)

    def __init__(
        self, n: int = 5, answer_type: str = "text", temperature: float | None = 0.7
    ) -> None:
        if n < 2:
            raise ConfigError(f"self-consistency needs n >= 2 samples; got n={n}")
        if answer_type not in ANSWER_TYPES:
            raise ConfigError(f"answer_type must be one of {', '.join(ANSWER_TYPES)}")
        self.n = n
        self.answer_type = answer_type
        self.temperature = temperature

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n}
        if self.temperature is not None and not body.get("temperature"):
            out["temperature"] = self.temperature
        return out

    def extract(self, completion: Any, question: str | None = None) -> Confidence:
        if isinstance(completion, str):
            return Confidence()
        # a confidence line (when verbal confidence is also asked for) is not part of the answer
        texts = [strip_confidence(t) if t else t for t in completion_texts(completion)]
        if len(texts) < 2:
            return Confidence()
        share = consistency(texts, self.answer_type, question, reference=texts[0] or "")
        return Confidence(consistency=share)

    def clean(self, text: str) -> str:
        return text


def provided_signals(extractors: Iterable[Extractor]) -> tuple[str, ...]:
    """The signals ``extractors`` can read, in order, without repeats.

    >>> provided_signals([LogprobExtractor(), VerbalExtractor()])
    ('logprob_mean', 'logprob_low10', 'verbal')
    """
    return tuple(dict.fromkeys(s for ex in extractors for s in getattr(ex, "signals", ())))


def apply_overrides(extractors: Iterable[Extractor], body: Mapping[str, Any]) -> dict[str, Any]:
    """A new request body with every extractor's overrides applied in order (input unchanged)."""
    out = dict(body)
    for ex in extractors:
        out.update(ex.request_overrides(out))
    return out


def extract_confidence(extractors: Iterable[Extractor], completion: Any) -> Confidence:
    """The signals all ``extractors`` find in ``completion``, merged into one Confidence."""
    conf: Confidence | None = None
    for ex in extractors:  # the first one's as it is (merged into nothing: the same values)
        got = ex.extract(completion)
        conf = got if conf is None else conf.merged(got)
    return Confidence() if conf is None else conf


def confidence_kind(*signals: str) -> str:
    """The ``--confidence`` source that provides every one of ``signals``.

    >>> confidence_kind("logprob_mean"), confidence_kind("logprob_mean", "verbal")
    ('logprobs', 'logprobs+verbal')
    """
    kinds = []
    for signal in signals:
        if signal in ("logprob_mean", "logprob_low10"):
            kind = "logprobs"
        elif signal in ("verbal", "consistency", "caller", "ptrue"):
            kind = signal
        else:
            raise ConfigError(f"unknown confidence signal {signal!r}")
        if kind not in kinds:
            kinds.append(kind)
    if set(kinds) == {"logprobs", "verbal"}:
        return "logprobs+verbal"
    if len(kinds) != 1:
        raise ConfigError(f"no one confidence source provides {', '.join(signals)}")
    return kinds[0]


def extractors_for(kind: str, *, consistency_samples: int = 5) -> tuple[Extractor, ...]:
    """The extractors of one confidence source (``--confidence``): ``logprobs``, ``verbal``,
    ``logprobs+verbal`` (both: what the ``default`` policy reads), ``consistency``, ``ptrue``
    (logprobs and P(True), which costs one extra upstream call per reply) or ``caller`` (none:
    the caller supplies ``p``)."""
    if kind == "logprobs":
        return (LogprobExtractor(),)
    if kind == "verbal":
        return (VerbalExtractor(),)
    if kind == "logprobs+verbal":
        return (LogprobExtractor(), VerbalExtractor())
    if kind == "consistency":
        return (ConsistencyExtractor(n=consistency_samples),)
    if kind == "caller":
        return ()
    if kind == "ptrue":  # the reply's logprobs, and P(True) from one extra call
        from guard.confidence.ptrue import PTrueExtractor

        return (LogprobExtractor(), PTrueExtractor())
    raise ConfigError(f"unknown confidence source {kind!r}")
