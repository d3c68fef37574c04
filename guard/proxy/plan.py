"""What the guard adds to the upstream request, and removes from the reply: one plan per API.

Chat completions (:class:`ChatPlan`, :func:`plan_request`): the guard's extractors' request
fields (``logprobs`` / ``top_logprobs``, ``n`` for the consistency samples), keeping what the
client chose where it asks for at least as much; the reply is cut back to the client's ``n``
and its logprobs dropped unless the client asked for them.

Responses API (:class:`ResponsesPlan`, :func:`plan_responses`): under ``--confidence logprobs``
the guard reads token log-probabilities. On ``/v1/responses`` they are asked for with
``include: ["message.output_text.logprobs"]`` (:data:`LOGPROBS_INCLUDE`); :func:`plan_responses`
adds it to the client's ``include`` unless the client asked for it itself, and then every
``logprobs`` list of the reply and of its stream events is emptied
(:meth:`ResponsesPlan.shaped`, :func:`guard.completion.without_logprobs`): the client
receives what the upstream would have sent it (an empty ``logprobs`` list, as the API sends
without ``include``). A client that asks for the
logprobs itself gets its request sent as it is (its own ``top_logprobs`` or none), and so
exactly what the upstream sends.

Either plan's ``as_sent(body)`` is the client's request as it sent it, nothing added: what is
sent again when the upstream rejects the guard's additions
(:func:`guard.proxy.forward.resend_as_sent`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from guard.completion import without_logprobs
from guard.confidence.extractors import provided_signals
from guard.core import Guard

#: The ``include`` value asking for the token logprobs of the output text.
LOGPROBS_INCLUDE = "message.output_text.logprobs"


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


@dataclass(frozen=True)
class ChatPlan:
    """The upstream request for one client request, and what to undo in the reply.

    Attributes
    ----------
    body : dict
        What is sent upstream: the client's body plus the guard's overrides.
    stream : bool
        The client asked for a stream.
    client_logprobs : bool
        The client asked for logprobs itself (otherwise they are removed from the reply).
    client_n : int
        Choices the client asked for; the reply is cut to this many.
    samples : int
        Choices asked of the upstream (``> client_n`` only for the consistency signal).
    signal_samples : int
        Choices the confidence signal needs (``> 1`` only for consistency): the only reason
        the proxy makes extra upstream calls when the upstream returns fewer choices.
    """

    body: dict[str, Any]
    stream: bool
    client_logprobs: bool
    client_n: int
    samples: int
    signal_samples: int = 1

    def as_sent(self, body: Mapping[str, Any]) -> ChatPlan:
        """The plan for sending ``body`` as the client sent it (nothing added)."""
        return ChatPlan(body=dict(body), stream=self.stream,
                        client_logprobs=self.client_logprobs, client_n=self.client_n,
                        samples=self.client_n)

    @property
    def include_usage(self) -> bool:
        """The client asked for a usage chunk at the end of the stream."""
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))


def plan_request(body: Mapping[str, Any], guard: Guard) -> ChatPlan:
    """The upstream body for ``body``: the guard's extractors' overrides, keeping what the
    client chose where it asks for at least as much (its ``top_logprobs``, a larger ``n``);
    a client that asks for ``logprobs`` without ``top_logprobs`` gets none added."""
    client_n = int(body.get("n") or 1)
    stream = bool(body.get("stream"))
    upstream = guard.request_overrides(body)
    top = body.get("top_logprobs")
    if "top_logprobs" in upstream and isinstance(top, int) and not isinstance(top, bool):
        upstream["top_logprobs"] = max(top, int(upstream["top_logprobs"]))
    elif body.get("logprobs") is True and top is None:
        # the client asked for logprobs itself: send its request as it is, so that it gets
        # what the upstream would have sent it (no top_logprobs alternatives)
        upstream.pop("top_logprobs", None)
    # what the signal alone asks for (the client's own n is not a reason for extra calls)
    own = {k: v for k, v in body.items() if k != "n"}
    signal_samples = int(guard.request_overrides(own).get("n") or 1)
    samples = max(client_n, signal_samples)
    if samples > 1 or "n" in body:
        upstream["n"] = samples
    return ChatPlan(body=upstream, stream=stream, client_logprobs=body.get("logprobs") is True,
                    client_n=client_n, samples=samples, signal_samples=signal_samples)
