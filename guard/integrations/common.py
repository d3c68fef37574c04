"""What every integration does with a reply: decide with the guard, deliver the result.

One function, :func:`guarded_completion`, shared by the LiteLLM guardrail and the LangChain
runnable: :meth:`guard.Guard.apply` on a chat completion mapping (the refusal is the guard's
allow-list refusal), then the logprobs the caller did not ask for removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.core import Guard
from guard.records import DecisionRecord
from guard.segments import Query


def without_logprobs(completion: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``completion`` whose choices carry no ``logprobs``.

    Examples
    --------
    >>> without_logprobs({"choices": [{"index": 0, "logprobs": {"content": []}}]})
    {'choices': [{'index': 0, 'logprobs': None}]}
    """
    choices = [
        {**ch, "logprobs": None} if isinstance(ch, Mapping) and "logprobs" in ch else ch
        for ch in completion.get("choices") or []
    ]
    return {**completion, "choices": choices}


def guarded_completion(guard: Guard, query: Query | None, completion: Mapping[str, Any], *,
                       keep_logprobs: bool, **overrides: Any
                       ) -> tuple[dict[str, Any], DecisionRecord]:
    """Decide about ``completion`` (a chat completion mapping) and return what to deliver
    with the decision record; ``overrides`` go to :meth:`guard.Guard.decide` (``request_id``,
    ``cost``, ...). The input is not modified."""
    delivered, record = guard.apply(query, dict(completion), **overrides)
    out = dict(delivered)
    return (out if keep_logprobs else without_logprobs(out)), record
