"""Deciding about a chat completion and building what the caller receives: the one way, for
:meth:`guard.Guard.apply` (the decorator and the integrations) and the proxy's chat
completions (:mod:`guard.proxy.decide`, :func:`guard.proxy.deliver.chat_delivery`).

* :func:`decide_completion` decides on choice 0: its answer (a tool call is an answer, decided
  on its name and arguments), the confidence read from ``view`` (the reply with what the
  signal needs: consistency samples, P(True); default the reply itself), a caller's
  confidence merged over it;
* :func:`refused_choices` judges each further choice (``n > 1``) by itself when choice 0
  answers: no answer goes out unjudged;
* :func:`delivered_completion` builds what is delivered: the allow-listed refusal of
  :func:`guard.refusal_substitution.refused_completion` (every choice says it, nothing else
  of the reply is kept), or every choice cleaned the same way (the confidence line the
  guard asked for removed), each refused further choice replaced by an allow-listed refused
  choice, the logprobs the caller did not ask for removed, the first ``limit`` choices kept.

>>> from guard import Guard
>>> class FixedCost:
...     def predict(self, texts):
...         return [4.0 for _ in texts]
>>> g = Guard(FixedCost(), policy=None)
>>> reply = {"choices": [{"index": 0, "message": {"content": "Paris.\\nConfidence: 90%"}},
...                      {"index": 1, "message": {"content": "Paris!\\nConfidence: 80%"}}]}
>>> record = decide_completion(g, "Capital of France?", reply)
>>> out = delivered_completion(g, "Capital of France?", reply, record)
>>> record.decision, [c["message"]["content"] for c in out.completion["choices"]]
('answer', ['Paris.', 'Paris!'])
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, TypeVar, cast

from guard.completion import choice_answer, without_logprobs
from guard.context import remember_decision
from guard.decision_records import Confidence, DecisionRecord
from guard.exceptions import ConfigError
from guard.price import Price
from guard.refusal_substitution import plain_mapping, refused_choice, refused_completion
from guard.segments import Query

T = TypeVar("T")


class Decider(Protocol):
    """What deciding about a completion needs of a guard (:class:`guard.Guard` has it)."""

    @property
    def refusal_text(self) -> str: ...

    def decide(self, query: Query | None, response: str | None, *, confidence: Any = None,
               cost: float | None = None, c_r: float | None = None, mode: str | None = None,
               alpha: float | None = None, request_id: str | None = None, acts: bool = False,
               price: Price | None = None) -> DecisionRecord: ...

    def extract(self, reply: Any) -> Confidence: ...

    def clean(self, text: str) -> str: ...

    def refusal_for(self, record: DecisionRecord, content: str | None) -> str | None: ...


class Delivered(NamedTuple):
    """What the caller receives (:func:`delivered_completion`)."""

    #: the chat completion delivered (a new dict; the reply is not modified)
    completion: dict[str, Any]
    #: the text of some choice differs from the reply's (a refusal, a removed line)
    changed: bool
    #: the further choices refused although choice 0 answers (position -> refusal text)
    refused: dict[int, str]


def decide_completion(guard: Decider, query: Query | None, reply: Any, *, view: Any = None,
                      confidence: Any = None, **decide: Any) -> DecisionRecord:
    """The decision about choice 0 of the chat completion ``reply`` (see the module
    docstring); ``decide`` goes to :meth:`guard.Guard.decide` (``price``, ``request_id``,
    ``cost``, ...)."""
    conf = guard.extract(reply if view is None else view).merged(Confidence.coerce(confidence))
    answer = choice_answer(reply)
    return guard.decide(query, answer.text, confidence=conf, acts=answer.acts, **decide)


def refused_choices(guard: Decider, query: Query | None, reply: Any, record: DecisionRecord,
                    *, view: Any = None, confidence: Any = None, limit: int | None = None
                    ) -> dict[int, str]:
    """The choices after the first (``n > 1``) that may not be delivered with choice 0, by
    position, each with the text of the refusal that replaces it.

    In enforce mode each further choice is decided on by itself — its own text and confidence
    (read from ``view``, default ``reply``, with that choice first; ``confidence`` merged in
    as in :func:`decide_completion`), the cost and threshold of ``record`` (choice 0's
    decision) — and one the guard refuses (or the model's own refusal) is listed; a choice
    that is not an object is refused. In shadow mode nothing is. ``limit``: only the first
    ``limit`` choices are delivered. :func:`guard.last_decision` stays ``record``.
    """
    if record.mode != "enforce":
        return {}
    data = plain_mapping(reply)
    choices = list(data.get("choices") or [])
    stop = len(choices) if limit is None else min(limit, len(choices))
    out: dict[int, str] = {}
    if stop < 2:  # one choice delivered (the usual case): nothing more to judge
        remember_decision(record)
        return out
    seen_in = plain_mapping(view if view is not None else reply)
    seen = list(seen_in.get("choices") or [])
    price = Price(cost=record.cost, cost_source=record.cost_source, c_r=record.c_r,
                  mode=record.mode, alpha=record.alpha, threshold=record.threshold,
                  priced_by=record.priced_by)
    for k in range(1, stop):
        if not isinstance(choices[k], Mapping) or k >= len(seen):
            out[k] = guard.refusal_text
            continue
        own = {**seen_in, "choices": [seen[k], *seen[:k], *seen[k + 1:]]}
        decided = decide_completion(guard, query, {"choices": [choices[k]]}, view=own,
                                    confidence=confidence, price=price,
                                    request_id=record.request_id)
        refusal = guard.refusal_for(decided, choice_answer(data, k).content)
        if refusal is not None:
            out[k] = refusal
    remember_decision(record)
    return out


def delivered_completion(guard: Decider, query: Query | None, reply: Any,
                         record: DecisionRecord, *, view: Any = None, confidence: Any = None,
                         limit: int | None = None, keep_logprobs: bool = True) -> Delivered:
    """What the caller receives of the chat completion ``reply`` once choice 0 is decided
    (``record``; see the module docstring). ``view`` and ``confidence`` are those choice 0
    was decided with (each further choice is judged on them, :func:`refused_choices`);
    ``limit``: the choices the caller asked for (the rest were the guard's samples);
    ``keep_logprobs``: the caller asked for the logprobs."""
    data = plain_mapping(reply)
    refusal = guard.refusal_for(record, choice_answer(data).content)
    if refusal is not None:  # every choice: other samples must not leak the answer
        refused = refused_completion(dict(data), refusal)
        refused["choices"] = refused["choices"][:limit]
        return Delivered(refused, True, {})
    judged = refused_choices(guard, query, data, record, view=view, confidence=confidence,
                             limit=limit)
    changed = False
    choices: list[Any] = []
    for k, ch in enumerate((data.get("choices") or [])[:limit]):
        if k in judged:
            index = ch.get("index") if isinstance(ch, Mapping) else None
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                index = k
            choices.append(refused_choice(index, judged[k]))
            changed = True
            continue
        if not isinstance(ch, Mapping):  # nothing to clean (a further one is refused above)
            choices.append(ch)
            continue
        ch = dict(ch)
        message = dict(ch["message"]) if isinstance(ch.get("message"), Mapping) else {}
        content = message.get("content")
        if isinstance(content, str):
            cleaned = guard.clean(content)
            changed |= cleaned != content
            message["content"] = cleaned
        ch["message"] = message
        choices.append(ch if keep_logprobs else without_logprobs(ch))
    return Delivered({**data, "choices": choices}, changed, judged)


def as_given(reply: T, completion: Mapping[str, Any]) -> T:
    """``completion`` (a delivered chat completion, :func:`delivered_completion`) as the type
    ``reply`` was given in: a ``dict`` (a deep copy: nothing is shared with the reply) for a
    mapping, the same pydantic model class (``openai``'s ``ChatCompletion``) for a model."""
    if isinstance(reply, Mapping):
        return cast(T, copy.deepcopy(dict(completion)))
    validate = getattr(type(reply), "model_validate", None)
    if not callable(validate):
        raise ConfigError(f"cannot deliver a {type(reply).__name__}; expected a chat "
                          "completion mapping or a pydantic model")
    return cast(T, validate(dict(completion)))
