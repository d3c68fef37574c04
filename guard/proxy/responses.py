"""``POST /v1/responses`` (the OpenAI Responses API): forward, decide, deliver.

The same decision as ``/v1/chat/completions`` (:mod:`guard.proxy.chat`): authentication, the
body size limit, the override checks, the total deadline, cancellation on disconnect, the
decision headers and the ``utilityguard`` body object are the chat route's.

* The request is priced on ``instructions`` and every input item
  (:func:`guard.messages.responses_texts`), as the chat route prices every message.
* The request is forwarded to the upstream's ``/v1/responses`` as the client sent it, plus,
  when the guard reads token logprobs (``--confidence logprobs``),
  ``include: ["message.output_text.logprobs"]``; what the client did not ask for is removed
  from the reply and its events (:mod:`guard.proxy.responses_plan`), and an upstream that
  rejects the addition (400 / 422) gets the request again as the client sent it. The
  confidence signal is read from the reply: the token logprobs of its ``output_text`` parts,
  the verbal line of its text; with none, the guard's no-confidence rule decides
  (``--no-confidence``). No samples are asked for.
* The answer is the output text plus every ``function_call`` item (as ``name(arguments)``):
  a function call is an answer, never the model's own refusal.
* A refusal (enforce mode) is built from an allow-list by
:func:`guard.refusal_substitution.refused_response`:
  one assistant message saying the refusal text, nothing else of the reply.
* ``stream: true``: the upstream's events are buffered whole, the decision made on the final
  ``response`` object, then the client receives either the upstream's events (an answer, or
  shadow mode) or a new event sequence carrying the refusal only
  (:func:`guard.proxy.responses_stream.refused_events`); the last event carries the
  ``utilityguard`` object.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from guard.completion import choice_answer
from guard.decision_records import DecisionRecord
from guard.exceptions import InvalidRequestError, UpstreamError, UpstreamStatusError
from guard.messages import responses_texts
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
from guard.proxy.early import NotStreamed, Pending, streams_early
from guard.proxy.request import (
    cancel_on_disconnect,
    parse_json_object,
    parse_overrides,
    read_body,
)
from guard.proxy.responses_plan import ResponsesPlan, plan_responses
from guard.proxy.responses_stream import (
    FINAL_TYPES,
    check_event,
    check_events_match,
    encode_event,
    final_response,
    parse_events,
    refused_events,
    replay,
)
from guard.proxy.streaming import json_reply
from guard.refusal_substitution import refused_response
from guard.segments import as_text

if TYPE_CHECKING:
    from guard.proxy.app import Proxy


def parse_responses_request(raw: bytes) -> dict[str, Any]:
    """The JSON body of a Responses API request, checked for the fields the guard reads.

    >>> parse_responses_request(b'{"model": "m", "input": "hi"}')
    {'model': 'm', 'input': 'hi'}
    """
    body = parse_json_object(raw, "a Responses API request")
    inp = body.get("input")
    if not isinstance(inp, (str, list)) or not inp:
        raise InvalidRequestError("'input' is required: a string or a non-empty list of "
                                  "input items", param="input", code="invalid_request")
    include = body.get("include")
    if include is not None and (not isinstance(include, list)
                                or not all(isinstance(x, str) for x in include)):
        raise InvalidRequestError(f"'include' must be a list of strings; got {include!r}",
                                  param="include", code="invalid_request")
    if body.get("stream") is not None and not isinstance(body["stream"], bool):
        raise InvalidRequestError(f"'stream' must be a bool; got {body['stream']!r}",
                                  param="stream", code="invalid_request")
    return body


def response_query(body: Mapping[str, Any]) -> list[str]:
    """What the guard prices: every text of the request (:func:`guard.messages.responses_texts`).

    >>> response_query({"instructions": "Be brief.", "input": [{"role": "user", "content": [
    ...     {"type": "input_text", "text": "Max dose?"}]}]})
    ['Be brief.', 'Max dose?']
    """
    return responses_texts(body)


def _items(reply: Mapping[str, Any]) -> Sequence[Any]:
    output = reply.get("output")
    return output if isinstance(output, list) else []


def chat_view(reply: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API ``response`` seen as a one-choice chat completion (its output text as
    the content, its function calls as tool calls, its output-text logprobs in the chat
    format), so that the chat route's answer and confidence readers judge it unchanged.

    >>> view = chat_view({"output": [
    ...     {"type": "reasoning", "summary": []},
    ...     {"type": "message", "content": [{"type": "output_text", "text": "Paris"}]},
    ...     {"type": "function_call", "name": "f", "arguments": "{}"}]})
    >>> choice_answer(view)
    ChoiceAnswer(content='Paris', text='Paris\\nf({})', acts=True)
    """
    texts: list[str] = []
    tokens: list[Any] = []
    calls: list[dict[str, Any]] = []
    for item in _items(reply):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append({"type": "function", "function": {
                "name": item.get("name"), "arguments": item.get("arguments")}})
        elif item.get("type") == "message" and isinstance(item.get("content"), list):
            for part in item["content"]:
                if isinstance(part, dict) and part.get("type") == "output_text" and \
                        isinstance(part.get("text"), str):
                    texts.append(part["text"])
                    if isinstance(part.get("logprobs"), list):
                        tokens.extend(part["logprobs"])
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return {"object": "chat.completion", "choices": [
        {"index": 0, "message": message, "logprobs": {"content": tokens} if tokens else None,
         "finish_reason": "stop"}]}


async def _get(proxy: Proxy, body: dict[str, Any], headers: Mapping[str, str]
               ) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """The upstream's final ``response`` object, and its events when it streamed."""
    upstream = proxy.upstream
    if not body.get("stream"):
        reply = await upstream.post("responses", json_body.dumps(body), headers)
        if not isinstance(reply, dict):
            raise UpstreamError(f"the upstream at {upstream.name} returned a reply that is "
                                "not a response object")
        return reply, None
    content_type, raw = await upstream.post_stream("responses", body, headers)
    if "json" in content_type.lower():  # the upstream ignored stream=true
        return json_reply(raw, upstream.name, "a response object"), None
    events = parse_events(raw, upstream.name)
    final = final_response(events, upstream.name)
    check_events_match(events, final, upstream.name)
    return final, events


async def _fetch(proxy: Proxy, plan: ResponsesPlan, body: dict[str, Any],
                 headers: Mapping[str, str]
                 ) -> tuple[dict[str, Any], list[dict[str, Any]] | None, ResponsesPlan]:
    """:func:`_get` for ``plan``, sent again as the client sent it when the upstream rejects
    what the guard added (:func:`~guard.proxy.decided.resend_as_sent`); and the plan used."""
    try:
        return (*await _get(proxy, plan.body, headers), plan)
    except UpstreamStatusError as exc:
        if not resend_as_sent(proxy, exc, plan.body, body):
            raise
        plan = plan.as_sent(body)
        return (*await _get(proxy, plan.body, headers), plan)


async def stream_responses(request: Request, pending: Pending, plan: ResponsesPlan,
                           body: dict[str, Any], headers: Mapping[str, str]) -> Response:
    """Relay the upstream's events as they arrive (:mod:`guard.proxy.early`), the final one
    (``response.completed``) held back and given the decision, made on its ``response``
    object; a stream whose events say what that object does not hold ends with an error
    event instead (:func:`~guard.proxy.responses_stream.check_events_match`)."""
    name = pending.proxy.upstream.name

    async def tail(events: list[dict[str, Any]], held: list[dict[str, Any]]
                   ) -> tuple[bytes, DecisionRecord]:
        final = final_response(events, name)
        check_events_match(events, final, name)
        view = chat_view(final)
        record = decide_reply(pending.guard, view, view, query=pending.query,
                              overrides=pending.overrides, price=pending.price,
                              request_id=pending.request_id)
        enabled = not pending.proxy.settings.decision_headers_only
        return replay(held, decision_body(record, enabled=enabled)), record

    async def attempt(plan: ResponsesPlan) -> Response:
        def shape(event: dict[str, Any]) -> dict[str, Any]:
            check_event(event, name)
            return plan.shaped(event)

        return await pending.relay(request, "responses", plan.body, headers, shape=shape,
                                   hold=lambda e: e.get("type") in FINAL_TYPES,
                                   encode=encode_event, finish=tail)

    return await pending.planned(plan, body, attempt)


async def responses(request: Request) -> Response:
    """Handle one Responses API request (see the module docstring)."""
    t0 = time.perf_counter()
    root: Proxy = request.app.state.proxy
    rid = admit(request, root, root.settings)
    body = parse_responses_request(await read_body(request, root.settings.max_body_bytes))
    proxy = route_for(request, root, rid, body.get("model"))
    settings, guard = proxy.settings, proxy.guard  # one route and policy for the request
    overrides = parse_overrides(request.headers)
    headers = proxy.upstream_headers(request.headers)
    query = response_query(body)
    price = guard.price(query, cost=overrides.cost, c_r=proxy.c_r(overrides.c_r),
                        mode=overrides.mode)
    stream = bool(body.get("stream"))
    t_up = time.perf_counter()
    plan = plan_responses(body, guard)
    got: dict[str, Any] | None = None
    events: list[dict[str, Any]] | None = None
    if stream and not settings.buffer_streams and streams_early(price, guard):
        pending = Pending(proxy=proxy, guard=guard, request_id=rid, query=query,
                          overrides=overrides, price=price, model=body.get("model"), t0=t0,
                          owner=credential(request.headers))
        try:  # every p answers: nothing the guard would add can change the decision
            return await stream_responses(request, pending, plan.as_sent(body)
                                          if price.answers_any_p else plan, body, headers)
        except NotStreamed as exc:  # decided as on the buffered path
            got, plan = exc.reply, exc.plan
    if got is not None:
        reply = got
    else:
        reply, events, plan = await cancel_on_disconnect(request, proxy.upstream.within(
            settings.request_timeout, _fetch(proxy, plan, body, headers)))
    upstream_s = time.perf_counter() - t_up
    view = chat_view(reply)
    record = decide_reply(guard, view, view, query=query, overrides=overrides, price=price,
                          request_id=rid)
    refusal = guard.refusal_for(record, choice_answer(view).content)
    final = decision_body(record, enabled=not settings.decision_headers_only)
    out_headers = decision_headers(record)
    if not stream:
        delivered = refused_response(reply, refusal) if refusal is not None else \
            plan.shaped({k: v for k, v in reply.items() if k != "utilityguard"})
        response = Response(json_body.dumps({**delivered, **final}),
                            media_type="application/json", headers=out_headers)
    else:
        if refusal is not None:
            content = refused_events(refused_response(reply, refusal), refusal, final)
        elif events is None:  # the upstream answered JSON: the answer as one completed event
            content = replay([{"type": "response.completed",
                               "response": plan.shaped(reply)}], final)
        else:
            content = replay([plan.shaped(e) for e in events], final)
        response = Response(content, media_type="text/event-stream",
                            headers={**out_headers, "cache-control": "no-cache"})
    model = body.get("model")
    proxy.record(record, query=price.question or as_text(query),
                 model=model if isinstance(model, str) else None, stream=stream,
                 upstream_s=upstream_s, total_s=time.perf_counter() - t0,
                 owner=credential(request.headers))
    return response
