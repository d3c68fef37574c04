"""``POST /v1/chat/completions``: the chat completions adapter of the request pipeline.

Every stage is :mod:`guard.proxy.pipeline`'s; this adapter says what is particular to the API:

1. Parse: :func:`guard.proxy.parse.parse_chat_request` (``n`` at most ``--max-n``); priced on
   everything the model reads (:func:`guard.request_walk.walk`, :mod:`guard.asking`).
2. Forward: the plan (:func:`guard.proxy.plan.plan_request`) adds what the signal needs
   (logprobs, ``n``); a streaming request is sent with ``stream: true`` and buffered whole
   (:func:`guard.proxy.streaming.assemble`). With the consistency signal (only), when the
   upstream returned fewer choices than the signal needs (it ignores ``n``), the missing
   samples are extra calls; with ``--confidence ptrue``, one more call asks the model whether
   its reply (choice 0) is correct (:mod:`guard.proxy.signal_calls`), within the same
   deadline.
3. Decide on choice 0 (a tool call is an answer, decided on its name and arguments).
4. Deliver (:func:`guard.proxy.deliver.chat_delivery`): a refusal built from an allow-list
   (:func:`guard.refusal_substitution.refused_completion`) or the cleaned reply, each further choice
   (``n > 1``) judged by itself (:meth:`guard.Guard.refused_choices`); the logprobs and
   choices the client did not ask for removed; the decision as the ``utilityguard`` object of
   the body, or of a stream's last chunk. A stream whose decision is known before the reply
   (every ``p`` answers, or shadow mode) skips the buffering: :mod:`guard.proxy.early`, its
   chunks relayed without what the guard added (:func:`guard.proxy.streaming.relay_chunk`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.core import Guard
from guard.exceptions import UpstreamError
from guard.messages import query_text
from guard.proxy import streaming
from guard.proxy.deliver import chat_delivery
from guard.proxy.exchange import Event, Exchange
from guard.proxy.parse import parse_chat_request
from guard.proxy.plan import ChatPlan, plan_request
from guard.proxy.pool import Upstream
from guard.proxy.signal_calls import wants_ptrue, with_ptrue, with_samples
from guard.request_walk import Asked, walk
from guard.settings import Settings


class ChatApi:
    """The chat completions API (:class:`~guard.proxy.exchange.Api`)."""

    path = "chat/completions"
    kind = "a chat completion"
    deliver = staticmethod(chat_delivery)
    encode = staticmethod(streaming.encode)

    def parse(self, raw: bytes, settings: Settings) -> dict[str, Any]:
        return parse_chat_request(raw, max_n=settings.max_n)

    def query(self, body: Mapping[str, Any]) -> Asked:
        return walk(body)

    def question(self, ex: Exchange[ChatPlan]) -> str:
        return query_text(ex.body["messages"])  # the question the reply answers

    def plan(self, body: Mapping[str, Any], guard: Guard) -> ChatPlan:
        return plan_request(body, guard)

    async def fetch(self, upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str]
                    ) -> tuple[dict[str, Any], list[Event] | None]:
        """The upstream's reply as a completion, and its chunks when it streamed."""
        if not plan.stream:
            return await upstream.chat(plan.body, headers), None
        reply, raw, content_type = await upstream.read_stream(self.path, plan.body, headers,
                                                              self.kind)
        if reply is not None:  # the upstream ignored stream=true
            return reply, None
        chunks = streaming.parse_sse(raw, upstream.name)
        if not chunks:
            raise UpstreamError(f"the upstream at {upstream.name} sent no stream events "
                                f"(content type {content_type or 'missing'!r})")
        return streaming.assemble(chunks), chunks

    async def judged(self, ex: Exchange[ChatPlan], plan: ChatPlan, reply: dict[str, Any]
                     ) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The reply decided on, and the reply with the samples and P(True) the signal
        reads (P(True) not asked when every ``p`` answers)."""
        view = await with_samples(ex.upstream, plan, ex.headers, reply)
        if wants_ptrue(ex.guard) and not ex.price.answers_any_p:
            view = await with_ptrue(ex.upstream, ex.body, self.question(ex), view,
                                    ex.headers)
        return reply, view

    def answer(self, reply: Mapping[str, Any]) -> Mapping[str, Any]:
        return reply

    def relayed(self, events: list[Event]) -> dict[str, Any]:
        return streaming.assemble(events)

    def shape(self, plan: ChatPlan, event: Event, upstream: str) -> Event | None:
        return streaming.relay_chunk(event, client_n=plan.client_n,
                                     keep_logprobs=plan.client_logprobs,
                                     include_usage=plan.include_usage)

    def hold(self, event: Event) -> bool:
        """A chunk that may end the stream (a finish or a usage chunk)."""
        choices = event.get("choices") or []
        return not choices or any(isinstance(c, dict) and c.get("finish_reason") is not None
                                  for c in choices)

    def assembled(self, events: list[Event], upstream: str) -> dict[str, Any]:
        if not events:
            raise UpstreamError(f"the upstream at {upstream} sent no stream events")
        return streaming.assemble(events)

    def tail(self, held: list[Event], reply: Mapping[str, Any], final: Mapping[str, Any]
             ) -> bytes:
        if not held:  # the stream ended without a finish: one more chunk, for the decision
            held = [{k: reply[k] for k in ("id", "created", "model") if k in reply}
                    | {"object": "chat.completion.chunk", "choices": []}]
        return streaming.finish(held, final)


#: The adapter the pipeline serves ``/v1/chat/completions`` with.
CHAT = ChatApi()
