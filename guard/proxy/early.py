"""Streaming without waiting, when the decision cannot depend on the reply.

A streamed reply is normally buffered whole: the decision (and so the response headers) needs
the complete reply. Two kinds of request are decided before the upstream answers:

* the threshold is <= 0 (``L <= C_R``: a wrong answer costs no more than a refusal), so every
  ``p`` answers: the guard needs no confidence signal and forwards the request as the client
  sent it (no logprobs, no verbal instruction, no consistency samples, no extra calls);
* the request is in shadow mode, so the reply is delivered whatever the decision; the guard
  still asks for its signal (the shadow record must hold the ``p`` that enforce mode would
  see) but never makes the client wait for it.

:func:`streams_early` says which; :func:`relay` streams (the forward, decide and deliver
stages of :mod:`guard.proxy.pipeline` as the reply arrives, for any API's adapter) on the
stages the buffered path uses:

* forward: the upstream exchange is one piece of work under the forward stage's watch
  (:func:`guard.proxy.forward.watched`: one deadline, ``--request-timeout``, for opening the
  stream, relaying it and judging the reply, and cancelled when the client disconnects, with
  the same messages); its status is checked before the response starts (an upstream 4xx /
  5xx is answered as on the buffered path, :func:`~guard.proxy.forward.sent`). Each upstream
  read's complete events are passed on as soon as they arrive, re-encoded (so that
  :class:`guard.proxy.redact.RedactSecrets` scrubs secrets from each, as from every body);
  the events that may be the last (a finish, a usage chunk, the Responses API's final event)
  are held back until another arrives;
* decide: the assembled reply is judged and decided as on the buffered path
  (:func:`guard.proxy.decide.decide`); the stream's last event carries the ``utilityguard``
  decision object;
* deliver and record: the response is a :class:`~guard.proxy.deliver.DeliveredStream`, so the
  decision is recorded (metrics, ``GET /v1/decisions``, the audit row) once the response is
  handed over, in a ``finally``: also when the client leaves mid-stream, or the send fails.
  A stream cut short that way is decided on what it relayed (no further upstream call) and
  recorded; a stream that failed upstream after it started ends with an ``error`` event in
  the OpenAI envelope (what the official clients raise) and records no decision, as on the
  buffered path.

An upstream that answers a streaming request with JSON (it ignored ``stream: true``,
:meth:`guard.proxy.pool.Relay.json_instead`) is not streamed: :func:`relay` returns its reply
(:class:`~guard.proxy.exchange.Fetched`), which the pipeline then judges, decides and delivers
as on the buffered path.

The response headers carry what is known before the reply
(:func:`~guard.proxy.decide.priced_headers`: mode, cost, threshold, C_R, request id, policy)
and ``x-utilityguard-stream: early``; the decision and the confidence are in the last event
only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import Response

from guard.confidence.extractors import ConsistencyExtractor, LogprobExtractor
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import ClientDisconnected, UpstreamError, UtilityGuardError
from guard.price import Price
from guard.proxy.deadline import bounded
from guard.proxy.decide import decide, decision_body, priced_headers
from guard.proxy.deliver import Delivered, DeliveredStream
from guard.proxy.errors import upstream_failure, upstream_words
from guard.proxy.exchange import Event, Exchange, Fetched, P
from guard.proxy.forward import Watched, sent, watched
from guard.proxy.pool import Relay
from guard.proxy.streaming import SSEReader, sse

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


async def relay(ex: Exchange[P]) -> Response | Fetched[P]:
    """The exchange streamed as the upstream's reply arrives: the response, or the reply
    when the upstream answered JSON (the caller decides it as on the buffered path). Every
    ``p`` answering, the request is sent as the client sent it (nothing the guard would add
    can change the decision). Raises what the upstream answered before the stream started
    (an error status, after :func:`~guard.proxy.forward.resend_as_sent`)."""
    if ex.price.answers_any_p:
        ex.plan = ex.plan.as_sent(ex.body)
    out, plan = await sent(ex, lambda plan: EarlyStream(ex, plan).respond())
    return out if isinstance(out, Response) else Fetched(out, None, plan)


class EarlyStream:
    """One early stream: the upstream exchange (:meth:`exchange`, relaying each part into a
    queue as it is ready, then the tail) runs as the forward stage's watched work; the
    response (:meth:`respond`) sends the queue's parts and records the decision once handed
    over (:meth:`recorded`)."""

    def __init__(self, ex: Exchange[Any], plan: Any) -> None:
        self.ex, self.api, self.plan = ex, ex.api, plan
        self.name = ex.upstream.name
        #: the parts ready for the client; ``None`` once the upstream exchange has ended
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.events: list[Event] = []  # every upstream event read
        self.held: list[Event] = []  # the client events that may be the last, held back
        self.started = False  # a part was queued
        self.whole = False  # the first part queued held the upstream's whole stream
        self.record: DecisionRecord | None = None  # the decision, once the tail is made
        self.failed = False  # the upstream failed after the stream started: no decision
        self.upstream_s = 0.0
        self.work: Watched[dict[str, Any] | None] = watched(ex, self.exchange())
        self.work.task.add_done_callback(lambda _: self.queue.put_nowait(None))

    async def exchange(self) -> dict[str, Any] | None:
        """The upstream exchange: the stream opened (status checked), each upstream read's
        ready events put in the queue, then the tail (the decision in the last event);
        the JSON object the upstream sent instead of a stream, else ``None``."""
        t_up = time.perf_counter()
        async with self.ex.upstream.open_stream(self.api.path, self.plan.body,
                                                self.ex.headers) as opened:
            reply = await opened.json_instead(self.api.kind)
            if reply is not None:
                return reply
            await self._relay(opened)
        self.upstream_s = time.perf_counter() - t_up
        reply = self.api.assembled(self.events, self.name)
        answer, view = await self.api.judged(self.ex, self.plan, reply)
        self.record = decide(self.ex, answer, view)
        final = decision_body(self.record, enabled=not self.ex.settings.decision_headers_only)
        self.queue.put_nowait(self.api.tail(self.held, reply, final))
        return None

    async def _relay(self, opened: Relay) -> None:
        """Each upstream read's complete events into :attr:`events`, and the client events
        they release (sent together) into the queue; then the rest of the upstream's body
        (:func:`_drain`)."""
        reader, chunks = SSEReader(self.name), opened.chunks()
        raw: bytes | None = b""
        while not reader.done:
            raw = await anext(chunks, None)
            new = reader.feed(raw or b"", final=raw is None)
            self.events += new
            ready = _ready(new, self.held, lambda e: self.api.shape(self.plan, e, self.name),
                           self.api.hold, self.api.encode)
            if ready:
                if not self.started:
                    self.started, self.whole = True, raw is None or reader.done
                self.queue.put_nowait(b"".join(ready))
            if raw is None:
                return
        await _drain(chunks)

    async def respond(self) -> Response | dict[str, Any]:
        """The response carrying the stream, once its first part is ready (one plain body
        when that part held the whole stream, else a stream: no chunking otherwise); the
        JSON object the upstream sent instead. Raises what ended the exchange before any
        part (an upstream status, the deadline, a client that left)."""
        first = await self.queue.get()
        if first is None:  # nothing relayed: the JSON answer, or what ended the exchange
            reply = await self.work
            if reply is None:  # pragma: no cover - an exchange that queues nothing fails
                raise UpstreamError(f"the upstream at {self.name} sent no stream events")
            return reply
        headers = {**priced_headers(self.ex.price, self.ex.request_id, self.ex.guard.policy),
                   EARLY_HEADER: "early", "cache-control": "no-cache"}
        if self.whole:  # the whole stream came at once: one plain body, no chunking
            rest = [part async for part in self.parts()]
            return Delivered(b"".join([first, *rest]), media_type="text/event-stream",
                             headers=headers, after=self.recorded)
        return DeliveredStream(_chained(first, self.parts()), headers=headers,
                               after=self.recorded)

    async def parts(self) -> AsyncIterator[bytes]:
        """The parts after the first as the exchange queues them; an error event when the
        upstream fails after the stream started."""
        while (part := await self.queue.get()) is not None:
            yield part
        try:
            await self.work
        except ClientDisconnected:
            log.info("request %s: the client left during an early stream", self.ex.request_id)
        except UpstreamError as exc:
            self.failed = True
            yield self._failed(exc)

    def recorded(self) -> None:
        """Record the decision once the response is handed over (sent, or not: the client
        left, the send failed): the tail's, or, for a stream cut short, one made on what it
        relayed (no further upstream call); none when the upstream failed."""
        task = self.work.task
        if task.done() and not task.cancelled():
            task.exception()  # retrieved (raised by parts(), or the response ended first)
        self.work.cancel()  # the disconnect watch; the upstream too if the response ended
        # first (the client left, the send failed)
        record = self.record
        if record is None and not self.failed and self.events:
            record = self._decided_on_what_was_relayed()
        if record is not None:
            self.ex.record(record, self.upstream_s or time.perf_counter() - self.ex.t_up)

    def _decided_on_what_was_relayed(self) -> DecisionRecord | None:
        try:
            answer = self.api.answer(self.api.relayed(self.events))
            return decide(self.ex, answer, answer)
        except UtilityGuardError as exc:
            log.warning("request %s: no decision on the stream cut short: %s",
                        self.ex.request_id, exc)
            return None

    def _failed(self, exc: UpstreamError) -> bytes:
        """The error event ending a stream that failed after it started (counted and logged
        as on the buffered path)."""
        _status, body, kind, _headers = upstream_failure(exc)
        self.ex.proxy.metrics.upstream_errors.inc(kind)
        said = upstream_words(self.ex.request, exc)
        log.warning("request %s: the upstream failed during an early stream (%s): %s%s",
                    self.ex.request_id, kind, exc, f": {said}" if said else "")
        return sse(body)


async def _drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what the upstream sends after its stream's last event (the end of the HTTP
    body, usually already on its way), for at most :data:`DRAIN_SECONDS`: a body read to its
    end returns the connection to the pool, where one closed early is dropped and the next
    request waits for a new connection. An upstream still sending after that (or past the
    size limit) is closed as before; what it sent is never relayed."""
    async def rest() -> None:
        async for _ in chunks:
            pass

    with contextlib.suppress(asyncio.TimeoutError, UpstreamError):
        await bounded(rest(), DRAIN_SECONDS)


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for part in rest:
        yield part


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
