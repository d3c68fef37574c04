"""The deliver stage: what the client receives once the guard has decided.

:func:`deliver` answers with the decision headers (:func:`~guard.proxy.decide.decision_headers`)
and the body the API's adapter builds, the ``utilityguard`` decision object
(:func:`~guard.proxy.decide.decision_body`, unless ``decision_headers_only``) in the body, or
in a stream's last event. The adapters' bodies are here too:

* chat completions (:func:`chat_delivery`): what :meth:`guard.Guard.apply` delivers
  (:func:`guard.delivery.delivered_completion`): a refusal delivered in enforce mode is built
  from an allow-list (:func:`guard.refusal_substitution.refused_completion`); otherwise the
  reply with what the guard added removed and every further choice (``n > 1``) judged by
  itself; the choices and logprobs the client did not ask for removed. A stream replays the
  upstream's chunks when the text is the upstream's, else is synthesized from the delivered
  completion (:mod:`guard.proxy.streaming`);
* the Responses API (:func:`responses_delivery`): the refusal of
  :func:`guard.refusal_substitution.refused_response` (one assistant message saying the
  refusal text), or the reply as the client may see it
  (:meth:`~guard.proxy.plan.ResponsesPlan.shaped`); a stream replays the upstream's events or
  carries a new event sequence for the refusal (:mod:`guard.proxy.responses_stream`).

A reply the guard does not change is still encoded again (its JSON value, not its bytes, is
relayed): the decision object is added to it, and the bytes the guard decided on must be the
ones delivered (a reply with a key twice would read differently to another JSON parser).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Mapping
from typing import Any

from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from guard.completion import choice_answer
from guard.decision_records import DecisionRecord
from guard.delivery import delivered_completion
from guard.proxy import json_body, responses_stream, streaming
from guard.proxy.decide import decision_body, decision_headers
from guard.proxy.exchange import Delivery, Exchange, Forwarded
from guard.proxy.plan import ChatPlan, ResponsesPlan
from guard.refusal_substitution import refused_response

#: The response header listing the choices (``n > 1``) the guard refused although choice 0
#: answers.
REFUSED_CHOICES_HEADER = "x-utilityguard-refused-choices"


class _Recorded(Response):
    """A response whose ``after`` (the decision's record: metrics, the ``GET /v1/decisions``
    store, the audit row) runs once the server has the response, sent or not (the client
    left, the send failed): a record is never lost, and the client does not wait for it."""

    after: Callable[[], None]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.after()


class Delivered(_Recorded):
    """The response of a decided exchange (:class:`_Recorded`); ``after`` runs before the
    event loop serves anything else (it does not await), unless the body filled the socket's
    buffers and the send had to wait for them to drain."""

    def __init__(self, content: bytes, *, media_type: str, headers: Mapping[str, str],
                 after: Callable[[], None]) -> None:
        super().__init__(content, media_type=media_type, headers=headers)
        self.after = after


class DeliveredStream(_Recorded, StreamingResponse):
    """An event stream sent as its parts are ready (:mod:`guard.proxy.early`), recorded as
    :class:`Delivered` is (:class:`_Recorded`): also when the client leaves mid-stream or a
    send fails."""

    def __init__(self, parts: AsyncIterable[bytes], *, headers: Mapping[str, str],
                 after: Callable[[], None]) -> None:
        super().__init__(parts, media_type="text/event-stream", headers=headers)
        self.after = after


def deliver(ex: Exchange[Any], got: Forwarded[Any], record: DecisionRecord) -> Response:
    """The deliver stage: the client's response to a decided exchange, the decision
    recorded (:meth:`~guard.proxy.exchange.Exchange.record`) once it is handed over."""
    final = decision_body(record, enabled=not ex.settings.decision_headers_only)
    out = ex.api.deliver(ex, got, record, final)
    headers = {**decision_headers(record), **out.headers}

    def after() -> None:
        ex.record(record, got.upstream_s)

    if not out.stream:
        return Delivered(out.content, media_type="application/json", headers=headers,
                         after=after)
    return Delivered(out.content, media_type="text/event-stream",
                     headers={**headers, "cache-control": "no-cache"}, after=after)


def _own(reply: Mapping[str, Any]) -> dict[str, Any]:
    """``reply`` without a ``utilityguard`` key (the decision object is the guard's, never
    the upstream's)."""
    return {k: v for k, v in reply.items() if k != "utilityguard"}


def chat_delivery(ex: Exchange[ChatPlan], got: Forwarded[ChatPlan], record: DecisionRecord,
                  final: Mapping[str, Any]) -> Delivery:
    """A chat completion's body: JSON, or SSE replayed from the upstream's chunks when the
    text is the upstream's, else synthesized from the delivered completion."""
    plan = got.plan
    delivered, changed, refused = delivered_completion(
        ex.guard, ex.query, got.reply, record, view=got.view,
        confidence=ex.overrides.confidence, limit=plan.client_n,
        keep_logprobs=plan.client_logprobs)
    headers = {REFUSED_CHOICES_HEADER: ",".join(map(str, sorted(refused)))} if refused else {}
    if not plan.stream:
        return Delivery(json_body.dumps({**_own(delivered), **final}), False, headers)
    if got.events is None or changed:
        content = streaming.synthesize(delivered, include_usage=plan.include_usage,
                                       final=final)
    else:
        content = streaming.replay(got.events, client_n=plan.client_n,
                                   keep_logprobs=plan.client_logprobs,
                                   include_usage=plan.include_usage, final=final)
    return Delivery(content, True, headers)


def responses_delivery(ex: Exchange[ResponsesPlan], got: Forwarded[ResponsesPlan],
                       record: DecisionRecord, final: Mapping[str, Any]) -> Delivery:
    """A Responses API body: the response object, or its event stream (the upstream's
    events when it streamed, else the answer as one completed event)."""
    plan, reply = got.plan, got.reply
    refusal = ex.guard.refusal_for(record, choice_answer(got.answer).content)
    if not ex.stream:
        delivered = refused_response(reply, refusal) if refusal is not None else \
            plan.shaped(_own(reply))
        return Delivery(json_body.dumps({**delivered, **final}), False, {})
    if refusal is not None:
        content = responses_stream.refused_events(refused_response(reply, refusal), refusal,
                                                  final)
    elif got.events is None:  # the upstream answered JSON: the answer as one completed event
        content = responses_stream.replay([{"type": "response.completed",
                                            "response": plan.shaped(reply)}], final)
    else:
        content = responses_stream.replay([plan.shaped(e) for e in got.events], final)
    return Delivery(content, True, {})
