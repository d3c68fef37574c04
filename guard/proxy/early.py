"""Streaming without waiting, when the decision cannot depend on the reply.

A streamed reply is normally buffered whole: the decision (and so the response headers) needs
the complete reply. Two kinds of request are decided before the upstream answers:

* the threshold is <= 0 (``L <= C_R``: a wrong answer costs no more than a refusal), so every
  ``p`` answers: the guard needs no confidence signal and forwards the request as the client
  sent it (no logprobs, no verbal instruction, no consistency samples, no extra calls);
* the request is in shadow mode, so the reply is delivered whatever the decision; the guard
  still asks for its signal (the shadow record must hold the ``p`` that enforce mode would
  see) but never makes the client wait for it.

:func:`streams_early` says which, :meth:`Pending.relay` streams: the query is priced first
(:meth:`guard.Guard.price`, from the query only), the upstream's stream is opened and its
status checked before the response starts (an upstream 4xx / 5xx is answered as on the
buffered path), and then each upstream event is passed on as soon as it arrives, re-encoded:
each body message holds whole events (those one upstream read completed), so that
:class:`guard.proxy.redact.RedactSecrets` scrubs secrets from each, as from every body.
The events that may be the last (a finish, a usage chunk, the Responses API's final event)
are held back until another arrives: the stream's last event carries the ``utilityguard``
decision object, decided on the assembled reply as on the buffered path, and the audit row
is written. The total deadline
(``--request-timeout``), the upstream size limit and client disconnects hold as on the
buffered path; a failure after the response started ends the stream with an ``error`` event
in the OpenAI envelope (what the official clients raise).

The response headers carry what is known before the reply: mode, cost, threshold, request id,
policy, and ``x-utilityguard-stream: early``; the decision and the confidence are in the last
event only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from guard.confidence.extractors import ConsistencyExtractor, LogprobExtractor
from guard.core import Guard, Price
from guard.decision_records import DecisionRecord
from guard.exceptions import (
    ClientDisconnected,
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
)
from guard.proxy.decided import fmt_value, resend_as_sent
from guard.proxy.errors import upstream_failure
from guard.proxy.request import Overrides, cancel_on_disconnect, disconnected
from guard.proxy.streaming import SSEReader, json_reply
from guard.proxy.upstream import Relay
from guard.segments import Query, as_text

if TYPE_CHECKING:
    from guard.proxy.app import Proxy

log = logging.getLogger(__name__)
#: Extractors whose signal is read without rewriting the reply's text (a shadow stream
#: relays the text as it comes; the verbal extractor removes a line from it).
TEXT_PRESERVING = (LogprobExtractor, ConsistencyExtractor)
EARLY_HEADER = "x-utilityguard-stream"
#: The most an early stream waits, after its last event, for the end of the upstream's body
#: (so that the connection is kept alive, :func:`_drain`).
DRAIN_SECONDS = 0.05
Event = dict[str, Any]
#: Builds the stream's tail from every upstream event and the events held back: the bytes
#: to send last (the decision object in the last event) and the decision.
Finish = Callable[[list[Event], list[Event]], Awaitable[tuple[bytes, DecisionRecord]]]


def streams_early(price: Price, guard: Guard) -> bool:
    """Whether a streamed request is relayed as it arrives: every ``p`` answers, or shadow
    mode with extractors that leave the text as it is (see the module docstring)."""
    if price.answers_any_p:
        return True
    return price.mode == "shadow" and all(isinstance(ex, TEXT_PRESERVING)
                                          for ex in guard.extractors)


P = TypeVar("P", bound="Plan")


class Plan(Protocol):
    """A route's upstream request plan (:class:`~guard.proxy.request.ChatPlan`,
    :class:`~guard.proxy.responses_plan.ResponsesPlan`)."""

    @property
    def body(self) -> dict[str, Any]: ...

    def as_sent(self: P, body: Mapping[str, Any]) -> P: ...


class NotStreamed(Exception):
    """The upstream answered JSON to a streaming request (it ignored ``stream: true``): the
    route decides on ``reply`` as on the buffered path."""

    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__("the upstream did not stream")
        self.reply = reply
        #: the route's request plan (set by the route that raised it)
        self.plan: Any = None


@dataclass(frozen=True)
class Pending:
    """A streamed request whose delivery is decided before its reply."""

    proxy: Proxy
    guard: Guard
    request_id: str
    query: Query
    overrides: Overrides
    price: Price
    model: Any
    t0: float
    owner: bytes = b""  # who may read the decision again (GET /v1/decisions)

    def headers(self) -> dict[str, str]:
        """The decision headers known before the reply."""
        p = self.price
        return {"x-utilityguard-mode": p.mode, "x-utilityguard-cost": fmt_value(p.cost),
                "x-utilityguard-threshold": fmt_value(p.threshold),
                "x-utilityguard-c-r": fmt_value(p.c_r),
                "x-utilityguard-request-id": self.request_id, EARLY_HEADER: "early",
                **({"x-utilityguard-policy": self.guard.policy} if self.guard.policy else {}),
                "cache-control": "no-cache"}

    async def planned(self, plan: P, body: Mapping[str, Any],
                      attempt: Callable[[P], Awaitable[Response]]) -> Response:
        """``attempt(plan)``, and ``attempt`` of the plan as the client sent ``body`` when the
        upstream rejects what the guard added (:func:`~guard.proxy.decided.resend_as_sent`);
        the plan used is set on a :class:`NotStreamed` raised."""
        try:
            try:
                return await attempt(plan)
            except UpstreamStatusError as exc:
                if not resend_as_sent(self.proxy, exc, plan.body, body):
                    raise
                plan = plan.as_sent(body)
                return await attempt(plan)
        except NotStreamed as exc:
            exc.plan = plan
            raise

    def record(self, record: DecisionRecord, upstream_s: float) -> None:
        """Count the decision and queue its audit row (as the buffered path does)."""
        model = self.model if isinstance(self.model, str) else None
        self.proxy.record(record, query=self.price.question or as_text(self.query),
                          model=model, stream=True, upstream_s=upstream_s,
                          total_s=time.perf_counter() - self.t0, owner=self.owner)

    async def relay(self, request: Request, path: str, body: Mapping[str, Any],
                    headers: Mapping[str, str], *, shape: Callable[[Event], Event | None],
                    hold: Callable[[Event], bool], encode: Callable[[Event], bytes],
                    finish: Finish) -> Response:
        """Open the upstream stream at ``path`` and answer with a stream relaying it:
        ``shape`` gives each event as the client receives it (``None``: not the client's),
        ``hold`` says whether it may be the last one (held back), ``encode`` writes it and
        ``finish`` the tail. Raises what the upstream answered before the stream started
        (an error status, :class:`NotStreamed`)."""
        proxy = self.proxy
        upstream, timeout = proxy.upstream, proxy.settings.request_timeout
        loop = asyncio.get_running_loop()
        t_up = time.perf_counter()
        deadline = loop.time() + timeout
        stack = AsyncExitStack()

        async def open_() -> Relay:
            return await stack.enter_async_context(upstream.open_stream(path, body, headers))

        try:
            opened = await cancel_on_disconnect(request, upstream.within(timeout, open_()))
            if "json" in opened.content_type.lower():
                raw = await cancel_on_disconnect(request, upstream.within(
                    max(deadline - loop.time(), 0.0), opened.read()))
                raise NotStreamed(json_reply(raw, upstream.name, "a JSON object"))
        except BaseException:
            await stack.aclose()
            raise

        def timed_out() -> UpstreamTimeout:
            return UpstreamTimeout(
                f"the upstream at {upstream.name} did not finish within the proxy's deadline "
                f"of {timeout:g} s (--request-timeout)")

        upstream_done = [False]  # the upstream's stream had ended at the last yield

        async def stream() -> AsyncIterator[bytes]:
            events: list[Event] = []
            held: list[Event] = []
            gone = asyncio.ensure_future(disconnected(request))
            try:
                async with stack:
                    reader, chunks = SSEReader(upstream.name), opened.chunks()
                    while not reader.done:
                        raw = await _next_chunk(chunks, gone, max(deadline - loop.time(), 0),
                                                timed_out)
                        new = reader.feed(raw or b"", final=raw is None)
                        events += new
                        ready = _ready(new, held, shape, hold, encode)  # sent together
                        if ready:
                            upstream_done[0] = raw is None or reader.done
                            yield b"".join(ready)
                        if raw is None:
                            break
                    if raw is not None:  # the stream ended before the body: keep-alive
                        await _drain(chunks, min(DRAIN_SECONDS, max(deadline - loop.time(), 0)))
                upstream_s = time.perf_counter() - t_up
                try:  # the consistency samples, if any, within the deadline
                    tail, record = await asyncio.wait_for(finish(events, held),
                                                          max(deadline - loop.time(), 0))
                except asyncio.TimeoutError:
                    raise timed_out() from None
            except ClientDisconnected:
                log.info("request %s: the client left during an early stream",
                         self.request_id)
                return
            except UpstreamError as exc:
                yield self._failed(exc)
                return
            finally:
                gone.cancel()
            yield tail
            self.record(record, upstream_s)

        return await self._respond(stream(), upstream_done)

    async def _respond(self, body_parts: AsyncIterator[bytes], upstream_done: list[bool]
                       ) -> Response:
        """The response carrying ``body_parts``: one plain body when the first part already
        held the whole stream (``upstream_done``), else a stream (no chunking otherwise)."""
        try:  # the first events (the headers go with them)
            first = await body_parts.__anext__()
        except StopAsyncIteration:
            raise ClientDisconnected("the client closed the connection before the reply",
                                     code="client_disconnected") from None
        if upstream_done[0]:  # the whole stream came at once: one plain body, no chunking
            rest = [part async for part in body_parts]
            return Response(b"".join([first, *rest]), media_type="text/event-stream",
                            headers=self.headers())
        return StreamingResponse(_chained(first, body_parts), media_type="text/event-stream",
                                 headers=self.headers())

    def _failed(self, exc: UpstreamError) -> bytes:
        """The error event ending a stream that failed after it started (counted and logged
        as on the buffered path; no decision is recorded)."""
        _status, body, kind, _headers = upstream_failure(exc)
        self.proxy.metrics.upstream_errors.inc(kind)
        log.warning("request %s: the upstream failed during an early stream (%s): %s",
                    self.request_id, kind, exc)
        return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


async def _drain(chunks: AsyncIterator[bytes], wait: float) -> None:
    """Read what the upstream sends after its stream's last event (the end of the HTTP
    body, usually already on its way), for at most ``wait`` seconds: a body read to its end
    returns the connection to the pool, where one closed early is dropped and the next
    request waits for a new connection. An upstream still sending after ``wait`` (or past
    the size limit) is closed as before; what it sent is never relayed."""
    async def rest() -> None:
        async for _ in chunks:
            pass

    with contextlib.suppress(asyncio.TimeoutError, UpstreamError):
        await asyncio.wait_for(rest(), wait)


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for part in rest:
        yield part


async def _next_chunk(chunks: AsyncIterator[bytes], gone: asyncio.Future[None], wait: float,
                      timed_out: Callable[[], UpstreamTimeout]) -> bytes | None:
    """The next bytes of an early stream (``None`` at the end), waiting at most ``wait``
    seconds: ``timed_out()`` past it, :class:`ClientDisconnected` when the client left."""
    read = asyncio.ensure_future(chunks.__anext__())
    waiting: set[asyncio.Future[Any]] = {read, gone}
    done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
    if read in done:
        try:
            return read.result()
        except StopAsyncIteration:
            return None
    read.cancel()
    with contextlib.suppress(BaseException):
        await read
    if gone in done:
        raise ClientDisconnected("the client closed the connection during the stream",
                                 code="client_disconnected")
    raise timed_out()


def _ready(new: list[Event], held: list[Event], shape: Callable[[Event], Event | None],
           hold: Callable[[Event], bool], encode: Callable[[Event], bytes]) -> list[bytes]:
    """The encoded client events that ``new`` upstream events release: each shaped event
    that may be the last is held back (appended to ``held``); one that may not releases the
    held ones before it (``held`` is emptied)."""
    ready: list[bytes] = []
    for event in new:
        out = shape(event)
        if out is None:
            continue
        if hold(out):
            held.append(out)
            continue
        ready += [encode(e) for e in [*held, out]]
        held.clear()
    return ready
