"""``POST /v1/responses`` (the OpenAI Responses API): its adapter of the request pipeline.

The same stages and decision as ``/v1/chat/completions`` (:mod:`guard.proxy.pipeline`):
authentication, the body size limit, the override checks, the total deadline, cancellation
on disconnect, the early stream, the decision headers and the ``utilityguard`` body object
are the pipeline's, written once. What is particular to the API:

* The request is priced on ``instructions`` and every input item
  (:func:`guard.messages.responses_texts`), as the chat route prices every message.
* The request is forwarded to the upstream's ``/v1/responses`` as the client sent it, plus,
  when the guard reads token logprobs (``--confidence logprobs``),
  ``include: ["message.output_text.logprobs"]``; what the client did not ask for is removed
  from the reply and its events (:mod:`guard.proxy.plan`), and an upstream that
  rejects the addition (400 / 422) gets the request again as the client sent it. The
  confidence signal is read from the reply: the token logprobs of its ``output_text`` parts,
  the verbal line of its text; with none, the guard's no-confidence rule decides
  (``--no-confidence``). No samples are asked for.
* The answer is the output text plus every ``function_call`` item (as ``name(arguments)``):
  a function call is an answer, never the model's own refusal.
* A refusal (enforce mode) is built from an allow-list by
  :func:`guard.refusal_substitution.refused_response`: one assistant message saying the
  refusal text, nothing else of the reply (:func:`guard.proxy.deliver.responses_delivery`).
* ``stream: true``: the upstream's events are buffered whole, the decision made on the final
  ``response`` object, then the client receives either the upstream's events (an answer, or
  shadow mode) or a new event sequence carrying the refusal only
  (:func:`guard.proxy.responses_stream.refused_events`); the last event carries the
  ``utilityguard`` object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from guard.core import Guard
from guard.exceptions import UpstreamError
from guard.proxy import json_body
from guard.proxy.deliver import responses_delivery
from guard.proxy.exchange import Event, Exchange
from guard.proxy.parse import parse_responses_request
from guard.proxy.plan import ResponsesPlan, plan_responses
from guard.proxy.pool import Upstream
from guard.proxy.responses_stream import (
    FINAL_TYPES,
    check_event,
    check_events_match,
    encode_event,
    final_response,
    parse_events,
    relayed_response,
    replay,
)
from guard.request_walk import Asked, walk
from guard.settings import Settings


def response_query(body: Mapping[str, Any]) -> Asked:
    """What the guard prices: every text the model reads in the request
    (:func:`guard.request_walk.walk`), ``instructions`` in the system position.

    >>> [(t.role, t.text) for t in response_query({"instructions": "Be brief.", "input": [
    ...     {"role": "user", "content": [{"type": "input_text", "text": "Max dose?"}]}]}).texts]
    [('system', 'Be brief.'), ('user', 'Max dose?')]
    """
    return walk(body)


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
    >>> from guard.completion import choice_answer
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


class ResponsesApi:
    """The Responses API (:class:`~guard.proxy.exchange.Api`)."""

    path = "responses"
    kind = "a response object"
    deliver = staticmethod(responses_delivery)
    encode = staticmethod(encode_event)

    def parse(self, raw: bytes, settings: Settings) -> dict[str, Any]:
        return parse_responses_request(raw)

    def query(self, body: Mapping[str, Any]) -> Asked:
        return response_query(body)

    def question(self, ex: Exchange[ResponsesPlan]) -> str:
        return ex.query.last_text()

    def plan(self, body: Mapping[str, Any], guard: Guard) -> ResponsesPlan:
        return plan_responses(body, guard)

    async def fetch(self, upstream: Upstream, plan: ResponsesPlan, headers: Mapping[str, str]
                    ) -> tuple[dict[str, Any], list[Event] | None]:
        """The upstream's final ``response`` object, and its events when it streamed."""
        body = plan.body
        if not body.get("stream"):
            reply = await upstream.post(self.path, json_body.dumps(body), headers)
            if not isinstance(reply, dict):
                raise UpstreamError(f"the upstream at {upstream.name} returned a reply that "
                                    f"is not {self.kind}")
            return reply, None
        reply, raw, _ = await upstream.read_stream(self.path, body, headers, self.kind)
        if reply is not None:  # the upstream ignored stream=true
            return reply, None
        events = parse_events(raw, upstream.name)
        return self.assembled(events, upstream.name), events

    async def judged(self, ex: Exchange[ResponsesPlan], plan: ResponsesPlan,
                     reply: dict[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The reply seen as a chat completion, decided on and read for the confidence (no
        samples are asked for)."""
        view = self.answer(reply)
        return view, view

    def answer(self, reply: Mapping[str, Any]) -> Mapping[str, Any]:
        return chat_view(reply)

    def relayed(self, events: list[Event]) -> dict[str, Any]:
        return relayed_response(events)

    def shape(self, plan: ResponsesPlan, event: Event, upstream: str) -> Event | None:
        check_event(event, upstream)
        return plan.shaped(event)

    def hold(self, event: Event) -> bool:
        """The final event (``response.completed``): it is given the decision."""
        return event.get("type") in FINAL_TYPES

    def assembled(self, events: list[Event], upstream: str) -> dict[str, Any]:
        """The final ``response`` object, checked to hold the text its events streamed
        (:func:`~guard.proxy.responses_stream.check_events_match`)."""
        final = final_response(events, upstream)
        check_events_match(events, final, upstream)
        return final

    def tail(self, held: list[Event], reply: Mapping[str, Any], final: Mapping[str, Any]
             ) -> bytes:
        return replay(held, final)


#: The adapter the pipeline serves ``/v1/responses`` with.
RESPONSES = ResponsesApi()
