"""The floor of the proxy benchmarks: a bare relay on the guard's own stack, without the guard.

FastAPI on uvicorn, one pooled :class:`httpx.AsyncClient` built with the guard proxy's client
settings (the :class:`guard.settings.Settings` defaults: timeouts, pool limits,
``trust_env=False``, the upstream as ``base_url``) and its transport (aiohttp's connections
when the ``fast-upstream`` extra is installed: :mod:`guard.proxy.aio_transport`).
``POST /v1/chat/completions`` (its upstream URL merged once and the request handed to the
transport as the proxy's pool does: :meth:`guard.proxy.pool.Upstream.sent`) sends the
client's body upstream as received and answers the
upstream's bytes, status and content type; a streaming request is relayed chunk by chunk as
it arrives. Nothing is parsed, priced,
decided or logged: whatever the guard proxy takes beyond this is the guard's cost.

Serve it with ``UTILITYGUARD_PERF_RELAY_UPSTREAM=http://127.0.0.1:PORT/v1 python -m uvicorn
--factory benchmarks.perf.relay:app_from_environment --port N``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, Request
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from guard.proxy.pool import Upstream, upstream_client
from guard.settings import Settings

#: the environment variable naming the upstream (``http://HOST:PORT/v1``)
UPSTREAM_ENV = "UTILITYGUARD_PERF_RELAY_UPSTREAM"
#: set to ``httpcore`` for httpx's own transport even where aiohttp is installed (the
#: ``client_floor`` benchmark's "before")
TRANSPORT_ENV = "UTILITYGUARD_PERF_RELAY_TRANSPORT"


def client_for(upstream: str, *, httpcore: bool = False) -> httpx.AsyncClient:
    """An upstream client configured as the guard proxy configures its own (``httpcore``:
    with httpx's own transport instead of the proxy's)."""
    return _client_and_transport(upstream, httpcore=httpcore)[0]


def _client_and_transport(upstream: str, *, httpcore: bool = False
                          ) -> tuple[httpx.AsyncClient, httpx.AsyncBaseTransport | None]:
    """The guard proxy's own client (:func:`guard.proxy.pool.upstream_client`, default
    settings); ``httpcore``: on httpx's own transport."""
    s = Settings(_env_file=None)  # type: ignore[call-arg]  # (pydantic-settings keyword)
    if not httpcore:
        return upstream_client(s, upstream)
    client = upstream_client(s, upstream, httpx.AsyncHTTPTransport(
        limits=httpx.Limits(max_connections=s.max_connections,
                            max_keepalive_connections=s.max_keepalive), trust_env=False))[0]
    return client, None


def create_relay(upstream: str, *, httpcore: bool = False) -> FastAPI:
    """The relay app in front of ``upstream`` (its ``.../v1`` URL); ``httpcore``: see
    :func:`client_for`."""
    holder: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client, transport = _client_and_transport(upstream, httpcore=httpcore)
        async with client:
            holder["client"] = client
            holder["upstream"] = Upstream(client, transport=transport)
            yield

    app = FastAPI(lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

    async def chat(request: Request) -> Response:
        client = holder["client"]
        body = await request.body()
        if "url" not in holder:  # merged once, as the guard proxy's pool does (Upstream.url)
            holder["url"] = client.build_request("POST", "chat/completions").url
        up = client.build_request("POST", holder["url"], content=body,
                                  headers={"content-type": "application/json"})
        response = await holder["upstream"].sent(up)  # as the guard proxy sends
        ctype = response.headers.get("content-type", "application/json")
        if ctype.startswith("text/event-stream"):
            return StreamingResponse(response.aiter_raw(), status_code=response.status_code,
                                     media_type=ctype,
                                     background=BackgroundTask(response.aclose))
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        return Response(content, status_code=response.status_code, media_type=ctype)

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    app.add_api_route("/v1/chat/completions", chat, methods=["POST"], include_in_schema=False)
    app.add_api_route("/v1/models", models, methods=["GET"], include_in_schema=False)
    return app


def app_from_environment() -> FastAPI:
    """The relay in front of the upstream named by :data:`UPSTREAM_ENV`."""
    upstream = os.environ.get(UPSTREAM_ENV)
    if not upstream:
        raise SystemExit(f"set {UPSTREAM_ENV} to the upstream's http://HOST:PORT/v1")
    return create_relay(upstream, httpcore=os.environ.get(TRANSPORT_ENV) == "httpcore")
