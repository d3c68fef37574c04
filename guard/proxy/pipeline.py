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
                                           decision headers and body object
========  ===============================  =================================================

A streamed request whose decision cannot depend on its reply (:func:`~guard.proxy.early.
streams_early`) goes through forward, decide and deliver as the reply arrives
(:func:`guard.proxy.early.relay`); an upstream that answers it with JSON continues down the
buffered path. A new guarded endpoint is one more adapter and one more entry of
:data:`GUARDED` (the app mounts each under ``/v1`` and bare).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from guard.core import Price
from guard.proxy.chat import CHAT
from guard.proxy.decide import decide
from guard.proxy.deliver import deliver
from guard.proxy.early import relay, streams_early
from guard.proxy.exchange import Api, Exchange, P
from guard.proxy.forward import forward
from guard.proxy.parse import parse
from guard.proxy.responses import RESPONSES


def price_of(ex: Exchange[Any]) -> Price:
    """The price stage: what the decision needs before any reply (``L`` of the costliest
    question the request carries, ``C_R``, mode, threshold), the allowed overrides applied."""
    o = ex.overrides
    return ex.guard.price(ex.query, cost=o.cost, c_r=ex.proxy.c_r(o.c_r), mode=o.mode)


async def handle(request: Request, api: Api[P]) -> Response:
    """Serve one guarded request of ``api`` through every stage."""
    ex = await parse(request, api)
    ex.price = price_of(ex)
    ex.t_up = time.perf_counter()
    fetched = None
    if ex.stream and not ex.settings.buffer_streams and streams_early(ex.price, ex.guard):
        early = await relay(ex)
        if isinstance(early, Response):
            return early
        fetched = early  # the upstream answered JSON: decided as on the buffered path
    got = await forward(ex, fetched)
    record = decide(ex, got.answer, got.view)
    response = deliver(ex, got, record)
    ex.record(record, got.upstream_s)
    return response


def endpoint(api: Api[Any]) -> Callable[[Request], Awaitable[Response]]:
    """The ASGI endpoint serving ``api`` through the pipeline."""

    async def guarded(request: Request) -> Response:
        return await handle(request, api)

    guarded.__name__ = f"guarded_{api.path.replace('/', '_')}"
    return guarded


#: The guarded endpoints: path (under ``/v1``) -> the API's adapter.
GUARDED: dict[str, Api[Any]] = {"/chat/completions": CHAT, "/responses": RESPONSES}
