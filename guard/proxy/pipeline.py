"""The one request pipeline of the guarded endpoints: parse -> price -> forward -> decide ->
deliver.

Each stage is one module, written once for every API; an API is a thin adapter
(:class:`~guard.proxy.exchange.Api`) saying what is particular to it. A request reads top to
bottom through :func:`handle`:

========  ===============================  =================================================
stage     module                           what it does
========  ===============================  =================================================
parse     :mod:`guard.proxy.parse`         auth, overrides, size limit, the body, the route,
                                           the plan (:mod:`guard.proxy.plan`)
price     :func:`price_of`                 ``L``, ``C_R``, the threshold: before any reply
                                           (:meth:`guard.Guard.price`)
forward   :mod:`guard.proxy.forward`       the plan sent within the deadline, resent as
                                           sent on a rejection, the signal's extra calls
decide    :mod:`guard.proxy.decide`        the confidence, the rule, the decision record
deliver   :mod:`guard.proxy.deliver`       the reply or the allow-listed refusal, the
                                           decision headers and body object; the
                                           decision recorded once the server has the
                                           response (:class:`~guard.proxy.deliver.
                                           Delivered`: the client does not wait for it)
========  ===============================  =================================================

A buffered request (not streamed, or streamed under ``--buffer-streams``) is priced while the
upstream answers it (:func:`forwarded_while_priced`): the plan sent upstream does not depend on
the price, so the request is put on the wire first and the cost model, the answerability
classifier and the rule's arithmetic run while the upstream computes its reply; the reply is
judged only once the price is known. The decision is the one the stages make in order, the
deadline covers both, and a failure of either ends the request as before (the other is
cancelled). A streamed request is priced first: whether it streams early, and what it sends
upstream then, depend on the price.

A streamed request whose decision cannot depend on its reply (:func:`~guard.proxy.early.
streams_early`) goes through forward, decide and deliver as the reply arrives
(:func:`guard.proxy.early.relay`); an upstream that answers it with JSON continues down the
buffered path. A new guarded endpoint is one more adapter and one more entry of
:data:`GUARDED` (the app mounts each under ``/v1`` and bare).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from guard.price import Price
from guard.proxy.chat import CHAT
from guard.proxy.decide import decide
from guard.proxy.deliver import deliver
from guard.proxy.early import relay, streams_early
from guard.proxy.exchange import Api, Exchange, Forwarded, P
from guard.proxy.forward import forward, forwarding
from guard.proxy.parse import parse
from guard.proxy.responses import RESPONSES


def price_of(ex: Exchange[Any]) -> Price:
    """The price stage: what the decision needs before any reply (``L`` of what the request
    asks, :mod:`guard.asking`; ``C_R``, mode, threshold), the allowed overrides applied; the
    client's memo remembers the scores of texts it sent before."""
    o = ex.overrides
    return ex.guard.price(ex.query, cost=o.cost, c_r=ex.proxy.c_r(o.c_r), mode=o.mode,
                          memo=ex.proxy.memo(ex.guard, ex.owner))


#: A request with more text than this (characters) is priced in a worker thread, so that the
#: event loop keeps serving other requests (``/healthz`` among them) meanwhile; smaller ones
#: are priced in place (a thread hop would cost more than their price).
OFF_LOOP_CHARS = 20_000


async def priced(ex: Exchange[Any]) -> Price:
    """:func:`price_of`, in a worker thread when the request is large (:data:`OFF_LOOP_CHARS`);
    the time is bounded either way by the segment cap (``--max-segments``)."""
    if sum(len(t.text) for t in ex.query.texts) > OFF_LOOP_CHARS:
        return await asyncio.to_thread(price_of, ex)
    return price_of(ex)


#: How many times the request's task yields to the event loop after starting the upstream
#: call and before pricing: enough for the request to reach the upstream's socket through
#: the pooled client (either transport) when a connection is free. A performance matter
#: only: the reply is judged after the price whatever the order (``tests/guard/proxy/
#: test_priced_while_forwarded.py`` checks that the upstream has the request while the
#: guard prices).
SEND_YIELDS = 10


async def forwarded_while_priced(ex: Exchange[P]) -> Forwarded[P]:
    """The price and forward stages of a buffered request at once: the upstream call is
    started, then the request is priced (:func:`price_of`) while the upstream answers; the
    forward stage judges the reply once the price is set. Either failing cancels the other
    and raises its error."""
    is_priced = asyncio.Event()
    ex.t_up = time.perf_counter()
    pending = forwarding(ex, priced=is_priced)
    try:
        for _ in range(SEND_YIELDS):
            if pending.task.done():
                break
            await asyncio.sleep(0)
        ex.price = await priced(ex)
    except BaseException:
        pending.cancel()
        with contextlib.suppress(BaseException):
            await pending.task
        raise
    is_priced.set()
    return await pending


async def handle(request: Request, api: Api[P]) -> Response:
    """Serve one guarded request of ``api`` through every stage."""
    ex = await parse(request, api)
    if not ex.stream or ex.settings.buffer_streams:
        got = await forwarded_while_priced(ex)
    else:
        ex.price = await priced(ex)
        ex.t_up = time.perf_counter()
        fetched = None
        if streams_early(ex.price, ex.guard):
            early = await relay(ex)
            if isinstance(early, Response):
                return early
            fetched = early  # the upstream answered JSON: decided as on the buffered path
        got = await forward(ex, fetched)
    return deliver(ex, got, decide(ex, got.answer, got.view))  # recorded once handed over


def endpoint(api: Api[Any]) -> Callable[[Request], Awaitable[Response]]:
    """The ASGI endpoint serving ``api`` through the pipeline."""

    async def guarded(request: Request) -> Response:
        request.state.guarded = True  # an upstream error's words are not relayed (errors.py)
        return await handle(request, api)

    guarded.__name__ = f"guarded_{api.path.replace('/', '_')}"
    return guarded


#: The guarded endpoints: path (under ``/v1``) -> the API's adapter.
GUARDED: dict[str, Api[Any]] = {"/chat/completions": CHAT, "/responses": RESPONSES}
