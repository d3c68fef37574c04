"""The deliver stage: what the client receives once the guard has decided.

:func:`deliver` answers with the decision headers (:func:`~guard.proxy.decide.decision_headers`)
and the body the API's adapter builds, the ``utilityguard`` decision object
(:func:`~guard.proxy.decide.decision_body`, unless ``decision_headers_only``) in the body, or
in a stream's last event. The adapters' bodies are here too:

* chat completions (:func:`chat_delivery`): a refusal delivered in enforce mode is built from
  an allow-list (:func:`guard.refusal_substitution.refused_completion`); otherwise the reply
  with what the guard added removed and every further choice (``n > 1``) judged by itself
  (:func:`delivered_completion`). A stream replays the upstream's chunks when the text is the
  upstream's, else is synthesized from the delivered completion (:mod:`guard.proxy.streaming`);
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

from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from guard.completion import choice_answer
from guard.core import Guard
from guard.decision_records import Confidence, DecisionRecord
from guard.proxy import json_body, responses_stream, streaming
from guard.proxy.decide import decision_body, decision_headers
from guard.proxy.exchange import Delivery, Exchange, Forwarded
from guard.proxy.plan import ChatPlan, ResponsesPlan
from guard.refusal_substitution import refused_choice, refused_completion, refused_response

#: The response header listing the choices (``n > 1``) the guard refused although choice 0
#: answers.
REFUSED_CHOICES_HEADER = "x-utilityguard-refused-choices"


class Delivered(Response):
    """The response of a decided exchange; ``after`` (the decision's record: metrics, the
    ``GET /v1/decisions`` store, the audit row) runs once the server has the response's
    bytes, sent or not (the client left, the send failed): a record is never lost, and the
    client does not wait for it. It runs before the event loop serves anything else (it
    does not await), unless the body filled the socket's buffers and the send had to wait
    for them to drain."""

    def __init__(self, content: bytes, *, media_type: str, headers: Mapping[str, str],
                 after: Callable[[], None]) -> None:
        super().__init__(content, media_type=media_type, headers=headers)
        self.after = after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.after()


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
    plan, reply = got.plan, got.reply
    caller = None if ex.overrides.confidence is None else \
        Confidence(caller=ex.overrides.confidence)
    refused = ex.guard.refused_choices(ex.query, reply, record, view=got.view,
                                       confidence=caller, limit=plan.client_n)
    delivered, changed = delivered_completion(reply, record, ex.guard, plan, refused)
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


def delivered_completion(reply: Mapping[str, Any], record: DecisionRecord, guard: Guard,
                         plan: ChatPlan, refused_choices: Mapping[int, str] | None = None
                         ) -> tuple[dict[str, Any], bool]:
    """The completion the client receives, and whether its text differs from the upstream's.

    A refusal delivered in enforce mode (the guard's, or the model's own) is built by
    :func:`guard.refusal_substitution.refused_completion` from an allow-list: the refusal text
    in every choice, finish ``"stop"``, and nothing else of the reply (no tool calls, logprobs,
    reasoning, audio). Otherwise each content is cleaned (the verbal confidence line removed),
    logprobs the client did not ask for are dropped, and each choice in ``refused_choices``
    (position -> refusal text, :meth:`guard.Guard.refused_choices`) is replaced by an allow-listed
    refused choice. Only the first ``client_n`` choices are kept.
    """
    refusal = guard.refusal_for(record, choice_answer(reply).content)
    if refusal is not None:
        refused = refused_completion(dict(reply), refusal)
        refused["choices"] = refused["choices"][: plan.client_n]
        return refused, True
    out = dict(reply)
    changed = False
    choices: list[Any] = []
    for k, ch in enumerate((reply.get("choices") or [])[: plan.client_n]):
        if refused_choices and k in refused_choices:
            index = ch.get("index") if isinstance(ch, dict) else None
            choices.append(refused_choice(index if isinstance(index, int) else k,
                                          refused_choices[k]))
            changed = True
            continue
        ch = dict(ch)
        message = dict(ch["message"]) if isinstance(ch.get("message"), dict) else {}
        content = message.get("content")
        if isinstance(content, str):
            cleaned = guard.clean(content)
            changed |= cleaned != content
            message["content"] = cleaned
        if not plan.client_logprobs and ch.get("logprobs") is not None:
            ch["logprobs"] = None
        ch["message"] = message
        choices.append(ch)
    out["choices"] = choices
    return out, changed
