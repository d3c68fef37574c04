"""The forward stage: the plan sent upstream within the deadline, the reply judged.

:func:`forward` sends the exchange's plan (:mod:`guard.proxy.plan`) with the API's
:meth:`~guard.proxy.exchange.Api.fetch` through the route's pooled client
(:class:`~guard.proxy.pool.Upstream`). If the upstream rejects the request (HTTP 400 /
422) and the guard added fields to it, it is sent once more exactly as the client sent it
(:func:`resend_as_sent`: no signal, the no-confidence policy decides). The reply is then
judged (:meth:`~guard.proxy.exchange.Api.judged`: the consistency samples the upstream did
not return, P(True)); everything asked of the upstream for the request runs within the total
deadline (``--request-timeout``, 504 past it) and is cancelled when the client disconnects
(:func:`watched`). An early stream (:mod:`guard.proxy.early`) relays the upstream's stream
under the same watch; when the upstream answered it with JSON, its reply enters here, judged
as a buffered one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from starlette.requests import Request

from guard.exceptions import ClientDisconnected, UpstreamStatusError
from guard.proxy.exchange import Exchange, Fetched, Forwarded, P

if TYPE_CHECKING:
    from guard.proxy.state import Proxy

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Upstream statuses after which the request is retried without the guard's additions.
REJECTED = (400, 422)


async def disconnected(request: Request) -> None:
    """Return when the client has gone (after its body was read)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


class Watched(Generic[T]):
    """``work`` started now as a task, cancelled when the client disconnects (the upstream
    call stops and its pooled connection is freed); awaiting it gives the work's result, or
    :class:`ClientDisconnected`. One task besides the work's (the disconnect watch), no
    ``asyncio.wait``: this wraps every upstream exchange."""

    def __init__(self, request: Request, work: Awaitable[T]) -> None:
        self.task: asyncio.Future[T] = asyncio.ensure_future(work)
        self._watcher = asyncio.ensure_future(disconnected(request))
        self._watcher.add_done_callback(self._gone)

    def _gone(self, watcher: asyncio.Future[None]) -> None:
        if not watcher.cancelled():  # the client left (or its receive failed)
            self.task.cancel()

    def cancel(self) -> None:
        """Stop the work and the watch (the caller failed before awaiting)."""
        self._watcher.remove_done_callback(self._gone)
        self._watcher.cancel()
        self.task.cancel()

    async def result(self) -> T:
        try:
            return await self.task
        except asyncio.CancelledError:
            if self._watcher.done() and not self._watcher.cancelled():
                raise ClientDisconnected("the client closed the connection before the reply",
                                         code="client_disconnected") from None
            raise
        finally:
            self._watcher.remove_done_callback(self._gone)
            self._watcher.cancel()
            if not self.task.done():  # we were cancelled: the work with us
                self.task.cancel()

    def __await__(self) -> Generator[Any, None, T]:
        return self.result().__await__()


def watched(ex: Exchange[Any], work: Awaitable[T]) -> Watched[T]:
    """``work`` (every upstream call of one exchange) started now under the exchange's
    bounds: the total deadline (``--request-timeout``; past it ``UpstreamTimeout``,
    :meth:`guard.proxy.pool.Upstream.within`) and the client's disconnect
    (:class:`ClientDisconnected`): the buffered path's forward stage and the early stream
    (:mod:`guard.proxy.early`) alike."""
    return Watched(ex.request, ex.upstream.within(ex.settings.request_timeout, work))


def resend_as_sent(proxy: Proxy, exc: UpstreamStatusError, sent: Mapping[str, Any],
                   body: Mapping[str, Any]) -> bool:
    """Whether to send the client's ``body`` again as it sent it: the upstream rejected
    (:data:`REJECTED`) the request ``sent``, to which the guard added fields (logprobs, ``n``,
    ``include``) it may not support; the reply then has no signal and the no-confidence
    policy decides. Logged and counted (``rejected_guard_fields``)."""
    if exc.status not in REJECTED or sent == body:
        return False
    log.warning("the upstream rejected the guard's request fields (HTTP %d); retrying with "
                "the client's request as sent", exc.status)
    proxy.metrics.upstream_errors.inc("rejected_guard_fields")
    return True


async def sent(ex: Exchange[P], attempt: Callable[[P], Awaitable[T]]) -> tuple[T, P]:
    """``attempt(plan)`` of the exchange's plan, and of the plan as the client sent its body
    when the upstream rejects what the guard added (:func:`resend_as_sent`); with the plan
    used."""
    plan = ex.plan
    try:
        return await attempt(plan), plan
    except UpstreamStatusError as exc:
        if not resend_as_sent(ex.proxy, exc, plan.body, ex.body):
            raise
        plan = plan.as_sent(ex.body)
        return await attempt(plan), plan


async def forward(ex: Exchange[P], fetched: Fetched[P] | None = None) -> Forwarded[P]:
    """The forward stage: the upstream's reply to the exchange (``fetched``: already read by
    an early stream the upstream answered with JSON), judged, within the deadline."""
    return await forwarding(ex, fetched)


def forwarding(ex: Exchange[P], fetched: Fetched[P] | None = None, *,
               priced: asyncio.Event | None = None) -> Watched[Forwarded[P]]:
    """The forward stage started now (its task scheduled; await the result); with
    ``priced``, the reply is judged once it is set (the price stage running meanwhile,
    :func:`guard.proxy.pipeline.forwarded_while_priced`)."""
    upstream = ex.upstream

    async def exchange() -> Forwarded[P]:
        got = fetched
        if got is None:
            (reply, events), plan = await sent(
                ex, lambda plan: ex.api.fetch(upstream, plan, ex.headers))
            got = Fetched(reply, events, plan)
        if priced is not None:
            await priced.wait()  # judging reads the price (P(True) only when p matters)
        answer, view = await ex.api.judged(ex, got.plan, got.reply)
        return Forwarded(got.reply, got.events, got.plan, answer=answer, view=view,
                         upstream_s=time.perf_counter() - ex.t_up)

    return watched(ex, exchange())
