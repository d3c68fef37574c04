"""Streaming without waiting, when the decision cannot depend on the reply.

A streamed reply is normally buffered whole: the decision (and so the response headers) needs
the complete reply. Two kinds of request are decided before the upstream answers:

* the threshold is <= 0 (``L <= C_R``: a wrong answer costs no more than a refusal), so every
  ``p`` answers: the guard needs no confidence signal and forwards the request as the client
  sent it (no logprobs, no verbal instruction, no consistency samples, no extra calls);
* the request is in shadow mode, so the reply is delivered whatever the decision; the guard
  still asks for its signal (the shadow record must hold the ``p`` that enforce mode would
  see) but never makes the client wait for it.

:func:`streams_early` says which, :func:`relay` streams (the forward, decide and deliver
stages of :mod:`guard.proxy.pipeline` as the reply arrives, for any API's adapter): the query
is priced first
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

An upstream that answers a streaming request with JSON (it ignored ``stream: true``) is not
streamed: :func:`relay` returns its reply (:class:`~guard.proxy.exchange.Fetched`), which the
pipeline then judges, decides and delivers as on the buffered path.

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
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

from starlette.responses import Response, StreamingResponse

from guard.confidence.extractors import ConsistencyExtractor, LogprobExtractor
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import ClientDisconnected, UpstreamError, UpstreamTimeout
from guard.price import Price
from guard.proxy.decide import decide, decision_body, fmt_value
from guard.proxy.errors import upstream_failure, upstream_words
from guard.proxy.exchange import Event, Exchange, Fetched, P
from guard.proxy.forward import cancel_on_disconnect, disconnected, sent
from guard.proxy.pool import Relay
from guard.proxy.streaming import SSEReader, json_reply

log = logging.getLogger(__name__)
#: Extractors whose signal is read without rewriting the reply's text (a shadow stream
#: relays the text as it comes; the verbal extractor removes a line from it).
TEXT_PRESERVING = (LogprobExtractor, ConsistencyExtractor)
EARLY_HEADER = "x-utilityguard-stream"
#: The most an early stream waits, after its last event, for the end of the upstream's body
#: (so that the connection is kept alive, :func:`_drain`).
DRAIN_SECONDS = 0.05


def streams_early(price: Price, guard: Guard) -> bool:
    """Whether a streamed request is relayed as it arrives: every ``p`` answers, or shadow
    mode with extractors that leave the text as it is (see the module docstring)."""
    if price.answers_any_p:
        return True
    return price.mode == "shadow" and all(isinstance(ex, TEXT_PRESERVING)
                                          for ex in guard.extractors)


def early_headers(ex: Exchange[Any]) -> dict[str, str]:
    """The decision headers known before the reply."""
    p = ex.price
    return {"x-utilityguard-mode": p.mode, "x-utilityguard-cost": fmt_value(p.cost),
            "x-utilityguard-threshold": fmt_value(p.threshold),
            "x-utilityguard-c-r": fmt_value(p.c_r),
            "x-utilityguard-request-id": ex.request_id, EARLY_HEADER: "early",
            **({"x-utilityguard-policy": ex.guard.policy} if ex.guard.policy else {}),
            "cache-control": "no-cache"}


async def relay(ex: Exchange[P]) -> Response | Fetched[P]:
    """The exchange streamed as the upstream's reply arrives: the response, or the reply
    when the upstream answered JSON (the caller decides it as on the buffered path). Every
    ``p`` answering, the request is sent as the client sent it (nothing the guard would add
    can change the decision). Raises what the upstream answered before the stream started
    (an error status, after :func:`~guard.proxy.forward.resend_as_sent`)."""
    if ex.price.answers_any_p:
        ex.plan = ex.plan.as_sent(ex.body)
    out, plan = await sent(ex, lambda plan: _attempt(ex, plan))
    return out if isinstance(out, Response) else Fetched(out, None, plan)


async def _attempt(ex: Exchange[P], plan: P) -> Response | dict[str, Any]:
    """Open the upstream stream of ``plan`` and answer with a stream relaying it; the JSON
    object the upstream sent instead of a stream."""
    upstream, timeout = ex.upstream, ex.settings.request_timeout
    loop = asyncio.get_running_loop()
    t_up = time.perf_counter()
    deadline = loop.time() + timeout
    stack = AsyncExitStack()

    async def open_() -> Relay:
        return await stack.enter_async_context(upstream.open_stream(ex.api.path, plan.body,
                                                                    ex.headers))

    try:
        opened = await cancel_on_disconnect(ex.request, upstream.within(timeout, open_()))
        if "json" in opened.content_type.lower():
            raw = await cancel_on_disconnect(ex.request, upstream.within(
                max(deadline - loop.time(), 0.0), opened.read()))
            await stack.aclose()
            return json_reply(raw, upstream.name, "a JSON object")
    except BaseException:
        await stack.aclose()
        raise
    stream = _Stream(ex, plan, opened, stack, t_up, deadline)
    return await stream.respond()


class _Stream:
    """One early stream: the upstream's events relayed, the tail decided and recorded."""

    def __init__(self, ex: Exchange[Any], plan: Any, opened: Relay, stack: AsyncExitStack,
                 t_up: float, deadline: float) -> None:
        self.ex, self.api, self.plan = ex, ex.api, plan
        self.opened, self.stack = opened, stack
        self.t_up, self.deadline = t_up, deadline
        self.name = ex.upstream.name
        self.upstream_done = False  # the upstream's stream had ended at the last yield

    def left(self) -> float:
        """Seconds left of the total deadline."""
        return max(self.deadline - asyncio.get_running_loop().time(), 0.0)

    def timed_out(self) -> UpstreamTimeout:
        return UpstreamTimeout(
            f"the upstream at {self.name} did not finish within the proxy's deadline of "
            f"{self.ex.settings.request_timeout:g} s (--request-timeout)")

    async def parts(self) -> AsyncIterator[bytes]:
        """The client's body: the upstream's events as they arrive, then the tail (an error
        event when the upstream fails after the response started)."""
        events: list[Event] = []
        held: list[Event] = []
        gone = asyncio.ensure_future(disconnected(self.ex.request))
        try:
            relayed = self._relayed(events, held, gone)
            async with self.stack, contextlib.aclosing(relayed):
                async for ready in relayed:
                    yield ready
            upstream_s = time.perf_counter() - self.t_up
            try:  # the consistency samples, if any, within the deadline
                tail, record = await asyncio.wait_for(self._tail(events, held), self.left())
            except asyncio.TimeoutError:
                raise self.timed_out() from None
        except ClientDisconnected:
            log.info("request %s: the client left during an early stream",
                     self.ex.request_id)
            return
        except UpstreamError as exc:
            yield self._failed(exc)
            return
        finally:
            gone.cancel()
        yield tail
        self.ex.record(record, upstream_s)

    async def _relayed(self, events: list[Event], held: list[Event],
                       gone: asyncio.Future[None]) -> AsyncGenerator[bytes, None]:
        """The encoded client events, as each upstream read releases them (appending every
        upstream event to ``events``, the ones that may be the last to ``held``)."""
        reader, chunks = SSEReader(self.name), self.opened.chunks()
        raw: bytes | None = b""
        while not reader.done:
            raw = await _next_chunk(chunks, gone, self.left(), self.timed_out)
            new = reader.feed(raw or b"", final=raw is None)
            events += new
            ready = _ready(new, held, lambda e: self.api.shape(self.plan, e, self.name),
                           self.api.hold, self.api.encode)  # sent together
            if ready:
                self.upstream_done = raw is None or reader.done
                yield b"".join(ready)
            if raw is None:
                break
        if raw is not None:  # the stream ended before the body: keep-alive
            await _drain(chunks, min(DRAIN_SECONDS, self.left()))

    async def _tail(self, events: list[Event], held: list[Event]
                    ) -> tuple[bytes, DecisionRecord]:
        """The stream's last bytes (the decision object in the last event) and the decision,
        made on the assembled reply as on the buffered path."""
        reply = self.api.assembled(events, self.name)
        answer, view = await self.api.judged(self.ex, self.plan, reply)
        record = decide(self.ex, answer, view)
        final = decision_body(record, enabled=not self.ex.settings.decision_headers_only)
        return self.api.tail(held, reply, final), record

    async def respond(self) -> Response:
        """The response carrying the stream: one plain body when the first part already held
        the whole stream, else a stream (no chunking otherwise)."""
        parts = self.parts()
        headers = early_headers(self.ex)
        try:  # the first events (the headers go with them)
            first = await parts.__anext__()
        except StopAsyncIteration:
            raise ClientDisconnected("the client closed the connection before the reply",
                                     code="client_disconnected") from None
        if self.upstream_done:  # the whole stream came at once: one plain body, no chunking
            rest = [part async for part in parts]
            return Response(b"".join([first, *rest]), media_type="text/event-stream",
                            headers=headers)
        return StreamingResponse(_chained(first, parts), media_type="text/event-stream",
                                 headers=headers)

    def _failed(self, exc: UpstreamError) -> bytes:
        """The error event ending a stream that failed after it started (counted and logged
        as on the buffered path; no decision is recorded)."""
        _status, body, kind, _headers = upstream_failure(exc)
        self.ex.proxy.metrics.upstream_errors.inc(kind)
        said = upstream_words(self.ex.request, exc)
        log.warning("request %s: the upstream failed during an early stream (%s): %s%s",
                    self.ex.request_id, kind, exc, f": {said}" if said else "")
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
