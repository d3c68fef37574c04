"""``POST /v1/chat/completions``: forward, decide, deliver.

1. Authenticate, read the body (size limit), check it is a chat completion request, read the
   ``x-utilityguard-*`` override headers.
2. Forward it with the guard's additions (:func:`guard.proxy.request.plan_request`); a
   streaming request is sent with ``stream: true`` and buffered whole.
   If the upstream rejects the request (HTTP 400 / 422) and the guard added fields to it, it
   is retried once exactly as the client sent it (no signal: the no-confidence policy).
3. With the consistency signal (only), when the upstream returned fewer choices than the
   signal needs (it ignores ``n``), make the missing samples as extra calls. Steps 2-3 run
   within the total deadline (``--request-timeout``, 504 past it) and are cancelled when the
   client disconnects. With ``--confidence ptrue``, one more call asks the model whether its
   reply (choice 0) is correct (P(True), :mod:`guard.confidence.ptrue`; a failed call leaves
   the signal missing), within the same deadline.
4. Decide on choice 0 (:meth:`guard.Guard.decide`; a tool call is an answer, decided on its
   name and arguments); deliver a refusal built from an allow-list
   (:func:`guard.refusal_substitution.refused_completion`) or the cleaned reply, each further choice
   (``n > 1``) judged by itself (:meth:`guard.Guard.refused_choices`); remove the
   logprobs and choices the client did not ask for. A stream whose decision is known before
   the reply (every ``p`` answers, or shadow mode) skips the buffering: :mod:`guard.proxy.early`.
5. Answer with the decision headers and (unless ``decision_headers_only``) the decision as the
   ``utilityguard`` object of the body, or of a stream's last chunk; count the decision;
   queue the audit record.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from guard.completion import choice_answer
from guard.confidence.ptrue import PTRUE_KEY, PTrueExtractor, ptrue_from_reply, ptrue_request
from guard.decision_records import Confidence, DecisionRecord
from guard.exceptions import UpstreamError, UpstreamStatusError
from guard.messages import query_text, request_texts
from guard.proxy import json_body
from guard.proxy.decided import (
    admit,
    decide_reply,
    decision_body,
    decision_headers,
    resend_as_sent,
    route_for,
)
from guard.proxy.decisions import credential
from guard.proxy.deliver import REFUSED_CHOICES_HEADER, deliver
from guard.proxy.early import NotStreamed, Pending, streams_early
from guard.proxy.request import (
    ChatPlan,
    cancel_on_disconnect,
    parse_chat_request,
    parse_overrides,
    plan_request,
    read_body,
)
from guard.proxy.streaming import (
    assemble,
    encode,
    finish,
    json_reply,
    parse_sse,
    relay_chunk,
    replay,
    synthesize,
)
from guard.proxy.upstream import Upstream
from guard.refusal_detection import is_refusal

if TYPE_CHECKING:
    from guard.core import Guard
    from guard.proxy.app import Proxy

log = logging.getLogger(__name__)


def wants_ptrue(guard: Guard) -> bool:
    """Whether the guard reads P(True) (``--confidence ptrue``)."""
    return any(isinstance(ex, PTrueExtractor) for ex in guard.extractors)


async def with_ptrue(upstream: Upstream, body: Mapping[str, Any], query: str | None,
                     view: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    """``view`` with the P(True) of its first choice (:mod:`guard.confidence.ptrue`): one
    extra call to the same model, the question and the reply shown, one token asked. A
    failed call or a reply without True/False among the top tokens leaves P(True) missing
    (logged), never fatal; a model refusal or tool call is not asked about."""
    answer = choice_answer(view) if view.get("choices") else None
    if answer is None or answer.acts or not answer.text or is_refusal(answer.text):
        return view
    req = {"model": body.get("model"), **ptrue_request(query or "", answer.text)}
    try:
        reply = await upstream.chat(req, headers)
    except UpstreamError as exc:
        log.warning("the P(True) call failed: %s", type(exc).__name__)
        return view
    p, _top = ptrue_from_reply(reply) if isinstance(reply, dict) else (None, None)
    if p is None:
        log.info("P(True): no True/False among the verdict's top tokens")
        return view
    return {**view, PTRUE_KEY: p}


async def _extra_samples(upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str],
                         reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` with the choices the upstream did not return (it ignores ``n``) added from
    separate calls; failed calls are left out (logged), never fatal."""
    have = len(reply.get("choices") or [])
    missing = plan.signal_samples - have
    if missing <= 0 or have == 0:
        return reply
    body = {k: v for k, v in plan.body.items() if k not in ("n", "stream", "stream_options")}
    results = await asyncio.gather(*(upstream.chat(body, headers) for _ in range(missing)),
                                   return_exceptions=True)
    extra: list[Any] = []
    for r in results:
        if isinstance(r, UpstreamError):
            log.warning("a consistency sample failed: %s", type(r).__name__)
        elif isinstance(r, BaseException):
            raise r
        else:
            extra.extend((r.get("choices") or [])[:1])
    return {**reply, "choices": [*(reply.get("choices") or []), *extra]}


async def _fetch(upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str]
                 ) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """The upstream's reply as a completion, and its chunks when it streamed."""
    if not plan.stream:
        return await upstream.chat(plan.body, headers), None
    content_type, raw = await upstream.chat_stream(plan.body, headers)
    if "json" in content_type.lower():  # the upstream ignored stream=true
        return json_reply(raw, upstream.name, "a chat completion"), None
    chunks = parse_sse(raw, upstream.name)
    if not chunks:
        raise UpstreamError(f"the upstream at {upstream.name} sent no stream events "
                            f"(content type {content_type or 'missing'!r})")
    return assemble(chunks), chunks


def _response(plan: ChatPlan, delivered: dict[str, Any], chunks: list[dict[str, Any]] | None,
              changed: bool, headers: dict[str, str], final: dict[str, Any]) -> Response:
    """The client's response: JSON, or SSE replayed from the upstream's chunks when the text
    is the upstream's, else synthesized from ``delivered``; ``final`` (the decision object)
    added to the body, or to the stream's last chunk."""
    if not plan.stream:
        own = {k: v for k, v in delivered.items() if k != "utilityguard"}  # never the upstream's
        return Response(json_body.dumps({**own, **final}),
                        media_type="application/json", headers=headers)
    if chunks is None or changed:
        content = synthesize(delivered, include_usage=plan.include_usage, final=final)
    else:
        content = replay(chunks, client_n=plan.client_n, keep_logprobs=plan.client_logprobs,
                         include_usage=plan.include_usage, final=final)
    return Response(content, media_type="text/event-stream",
                    headers={**headers, "cache-control": "no-cache"})


async def _exchange(proxy: Proxy, plan: ChatPlan, body: dict[str, Any],
                    headers: Mapping[str, str]
                    ) -> tuple[dict[str, Any], list[dict[str, Any]] | None, ChatPlan,
                               dict[str, Any]]:
    """Everything asked of the upstream for one request: ``(reply, its stream chunks, the
    plan used, the reply with the consistency samples)``. The caller bounds it by the total
    deadline (``--request-timeout``)."""
    upstream = proxy.upstream
    try:
        reply, chunks = await _fetch(upstream, plan, headers)
    except UpstreamStatusError as exc:
        if not resend_as_sent(proxy, exc, plan.body, body):
            raise
        plan = plan.as_sent(body)
        reply, chunks = await _fetch(upstream, plan, headers)
    return reply, chunks, plan, await _with_samples(upstream, plan, headers, reply)


async def _with_samples(upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str],
                        reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` checked to have choices, with the consistency samples the upstream did not
    return (the reply the confidence is read from)."""
    if not isinstance(reply.get("choices"), list):
        raise UpstreamError(f"the upstream at {upstream.name} returned a reply without "
                            "'choices'")
    if plan.signal_samples > len(reply["choices"]):  # only the consistency signal
        return await _extra_samples(upstream, plan, headers, reply)
    return reply


def _may_be_last(chunk: Mapping[str, Any]) -> bool:
    """A chunk that may end the stream (a finish or a usage chunk): held back by an early
    stream until another arrives, since the last one carries the decision."""
    choices = chunk.get("choices") or []
    return not choices or any(isinstance(c, dict) and c.get("finish_reason") is not None
                              for c in choices)


async def stream_chat(request: Request, pending: Pending, plan: ChatPlan,
                      body: dict[str, Any], headers: Mapping[str, str]) -> Response:
    """Relay the upstream's stream as it arrives (:mod:`guard.proxy.early`): its chunks
    without what the guard added (:func:`guard.proxy.streaming.relay_chunk`), the decision
    on the assembled reply in the last chunk. :class:`NotStreamed` (its ``plan`` set) when
    the upstream answered JSON."""
    upstream = pending.proxy.upstream

    async def attempt(plan: ChatPlan) -> Response:
        def shape(chunk: dict[str, Any]) -> dict[str, Any] | None:
            return relay_chunk(chunk, client_n=plan.client_n,
                               keep_logprobs=plan.client_logprobs,
                               include_usage=plan.include_usage)

        async def tail(events: list[dict[str, Any]], held: list[dict[str, Any]]
                       ) -> tuple[bytes, DecisionRecord]:
            if not events:
                raise UpstreamError(f"the upstream at {upstream.name} sent no stream events")
            reply = assemble(events)
            view = await _with_samples(upstream, plan, headers, reply)
            record = decide_reply(pending.guard, reply, view, query=pending.query,
                                  overrides=pending.overrides, price=pending.price,
                                  request_id=pending.request_id)
            if not held:  # the stream ended without a finish: one more chunk, for the decision
                held = [{k: reply[k] for k in ("id", "created", "model") if k in reply}
                        | {"object": "chat.completion.chunk", "choices": []}]
            enabled = not pending.proxy.settings.decision_headers_only
            return finish(held, decision_body(record, enabled=enabled)), record

        return await pending.relay(request, "chat/completions", plan.body, headers,
                                   shape=shape, hold=_may_be_last, encode=encode,
                                   finish=tail)

    return await pending.planned(plan, body, attempt)


async def chat_completions(request: Request) -> Response:
    """Handle one chat completion request (see the module docstring)."""
    t0 = time.perf_counter()
    root: Proxy = request.app.state.proxy
    rid = admit(request, root, root.settings)
    body = parse_chat_request(await read_body(request, root.settings.max_body_bytes),
                              max_n=root.settings.max_n)
    proxy = route_for(request, root, rid, body.get("model"))
    settings, guard = proxy.settings, proxy.guard  # one route and policy for the request
    overrides = parse_overrides(request.headers)
    plan = plan_request(body, guard)
    headers = proxy.upstream_headers(request.headers)
    query = request_texts(body["messages"])
    price = guard.price(query, cost=overrides.cost, c_r=proxy.c_r(overrides.c_r),
                        mode=overrides.mode)
    t_up = time.perf_counter()
    if plan.stream and not settings.buffer_streams and streams_early(price, guard):
        pending = Pending(proxy=proxy, guard=guard, request_id=rid, query=query,
                          overrides=overrides, price=price, model=body.get("model"), t0=t0,
                          owner=credential(request.headers))
        try:  # every p answers: nothing the guard would add can change the decision
            return await stream_chat(request, pending, plan.as_sent(body)
                                     if price.answers_any_p else plan, body, headers)
        except NotStreamed as exc:  # decided as on the buffered path
            plan, reply, chunks = exc.plan, exc.reply, None
            view = await cancel_on_disconnect(request, proxy.upstream.within(
                settings.request_timeout, _with_samples(proxy.upstream, plan, headers,
                                                        reply)))
    else:
        reply, chunks, plan, view = await cancel_on_disconnect(request, proxy.upstream.within(
            settings.request_timeout, _exchange(proxy, plan, body, headers)))
    if wants_ptrue(guard) and not price.answers_any_p:
        shown = query_text(body["messages"])  # the question the reply answers
        view = await cancel_on_disconnect(request, proxy.upstream.within(
            settings.request_timeout, with_ptrue(proxy.upstream, body, shown, view, headers)))
    upstream_s = time.perf_counter() - t_up
    record = decide_reply(guard, reply, view, query=query, overrides=overrides, price=price,
                          request_id=rid)
    caller = None if overrides.confidence is None else Confidence(caller=overrides.confidence)
    refused_choices = guard.refused_choices(query, reply, record, view=view,
                                            confidence=caller, limit=plan.client_n)
    delivered, changed = deliver(reply, record, guard, plan, refused_choices)
    final = decision_body(record, enabled=not settings.decision_headers_only)
    out_headers = decision_headers(record)
    if refused_choices:
        out_headers[REFUSED_CHOICES_HEADER] = ",".join(map(str, sorted(refused_choices)))
    response = _response(plan, delivered, chunks, changed, out_headers, final)
    model = body.get("model")
    proxy.record(record, query=price.question or query_text(body["messages"]),
                 model=model if isinstance(model, str) else None, stream=plan.stream,
                 upstream_s=upstream_s, total_s=time.perf_counter() - t0,
                 owner=credential(request.headers))
    return response
