"""What the guard adds to a Responses API request, and removes from the reply.

Under ``--confidence logprobs`` the guard reads token log-probabilities. On
``/v1/responses`` they are asked for with ``include: ["message.output_text.logprobs"]``
(:data:`LOGPROBS_INCLUDE`); :func:`plan_responses` adds it to the client's ``include`` unless
the client asked for it itself, and then every ``logprobs`` list of the reply and of its
stream events is emptied (:meth:`ResponsesPlan.shaped`): the client receives what the
upstream would have sent it (an empty ``logprobs`` list, as the API sends without
``include``). A client that asks for the logprobs itself gets its request sent as it is (its
own ``top_logprobs`` or none), and so exactly what the upstream sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guard.confidence.extractors import provided_signals
from guard.core import Guard

#: The ``include`` value asking for the token logprobs of the output text.
LOGPROBS_INCLUDE = "message.output_text.logprobs"


def without_logprobs(value: Any) -> Any:
    """``value`` (a response, an event) with every ``logprobs`` list emptied.

    >>> without_logprobs({"type": "response.output_text.delta", "delta": "Par",
    ...                   "logprobs": [{"token": "Par", "logprob": -0.1}]})
    {'type': 'response.output_text.delta', 'delta': 'Par', 'logprobs': []}
    """
    if isinstance(value, Mapping):
        return {k: [] if k == "logprobs" and isinstance(v, list) else without_logprobs(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [without_logprobs(v) for v in value]
    return value


@dataclass(frozen=True)
class ResponsesPlan:
    """The upstream request for one Responses API request, and what to undo in the reply.

    Attributes
    ----------
    body : dict
        What is sent upstream: the client's body plus the guard's ``include``.
    client_logprobs : bool
        The client asked for the output text's logprobs itself (else they are emptied).
    """

    body: dict[str, Any]
    client_logprobs: bool

    def as_sent(self, body: Mapping[str, Any]) -> ResponsesPlan:
        """The plan for sending ``body`` as the client sent it (nothing added)."""
        return ResponsesPlan(dict(body), self.client_logprobs)

    def shaped(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value`` (the reply, or one of its events) as the client receives it."""
        out: dict[str, Any] = value if self.client_logprobs else without_logprobs(value)
        return out


def plan_responses(body: Mapping[str, Any], guard: Guard) -> ResponsesPlan:
    """The upstream request for ``body``: :data:`LOGPROBS_INCLUDE` added to ``include`` when
    the guard reads token logprobs and the client did not ask for them.

    >>> from guard.confidence.extractors import LogprobExtractor
    >>> plan = plan_responses({"input": "hi", "include": ["reasoning.encrypted_content"]},
    ...                       Guard(extractors=[LogprobExtractor()]))
    >>> plan.body["include"], plan.client_logprobs
    (['reasoning.encrypted_content', 'message.output_text.logprobs'], False)
    """
    include = body.get("include")
    given = list(include) if isinstance(include, list) else []
    asked = LOGPROBS_INCLUDE in given
    out = dict(body)
    if "logprob_mean" in provided_signals(guard.extractors) and not asked:
        out["include"] = [*given, LOGPROBS_INCLUDE]
    return ResponsesPlan(out, asked)
