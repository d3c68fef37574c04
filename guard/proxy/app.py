"""The proxy application: :func:`create_app` mounts the endpoints on the proxy's state.

``create_app(settings, transport=None)`` builds each route's :class:`~guard.Guard`
(:mod:`guard.proxy.build`: loading errors surface here, before serving) and the root
:class:`~guard.proxy.state.Proxy` (the state: routes, pooled upstream clients, audit writer,
metrics), and a FastAPI app whose lifespan is :meth:`~guard.proxy.state.Proxy.running`.
``transport`` replaces the network (an :class:`httpx.MockTransport` or ASGI transport in tests
and benchmarks). Nothing is global: the running state is ``app.state.proxy``.

Endpoints, each answering with and without the ``/v1`` prefix (for clients configured with the
bare host): the guarded ones of :data:`guard.proxy.pipeline.GUARDED` (``POST
/v1/chat/completions``, ``POST /v1/responses``: the request pipeline), the others of
:mod:`guard.proxy.endpoints` (feedback, models, embeddings, the refused ``/v1/completions``),
``GET /v1/decisions/{request_id}`` (:mod:`guard.proxy.gateway`); and, without the prefix,
``GET /healthz``, ``GET /readyz``, ``GET /metrics`` and ``POST /admin/reload``
(:mod:`guard.proxy.reload`; also on SIGHUP).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI

from guard.core import Guard
from guard.protocols import CostModel
from guard.proxy import endpoints
from guard.proxy.build import build_guard
from guard.proxy.errors import install_error_handlers
from guard.proxy.gateway import build_table, decision, use_table
from guard.proxy.metrics import MetricsMiddleware
from guard.proxy.pipeline import GUARDED, endpoint
from guard.proxy.redact import RedactSecrets, install_access_log_filter
from guard.proxy.reload import admin_reload, reload_on_sighup
from guard.proxy.state import Proxy
from guard.settings import Settings

__all__ = ["Proxy", "app_from_environment", "build_guard", "create_app"]


def create_app(settings: Settings, transport: httpx.AsyncBaseTransport | None = None, *,
               cost_model: CostModel | None = None) -> FastAPI:
    """The guard proxy as an ASGI app.

    Parameters
    ----------
    settings : Settings
        The configuration (``settings.upstream`` must be set to serve).
    transport : httpx.AsyncBaseTransport, optional
        Replaces the network between the proxy and its upstream (tests, benchmarks).
    cost_model : CostModel, optional
        Used instead of ``settings.cost_model`` / the shipped default (tests, embedding).
    """
    if settings.config is None:
        proxy = Proxy(settings, build_guard(settings, cost_model), cost_model)
    else:  # the routes of the file; the root itself serves none
        proxy = Proxy(settings, Guard(cost_model), cost_model)
        use_table(proxy, build_table(proxy))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        install_access_log_filter()  # here: after uvicorn configured logging in this process
        async with proxy.running(transport):
            with reload_on_sighup(proxy):  # POST /admin/reload is mounted below
                yield

    app = FastAPI(title="utilityguard proxy", lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url=None)
    app.state.proxy = proxy
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware, metrics=proxy.metrics)
    app.add_middleware(RedactSecrets, secrets=lambda: proxy.secrets)  # a reload may add keys
    routes: list[tuple[str, Any, str]] = [
        *((path, endpoint(api), "POST") for path, api in GUARDED.items()),
        ("/feedback", endpoints.feedback, "POST"),
        ("/models", endpoints.models, "GET"),
        ("/embeddings", endpoints.embeddings, "POST"),
        ("/completions", endpoints.not_guarded, "POST"),
        ("/models/{model:path}", endpoints.models, "GET"),
        ("/decisions/{request_id}", decision, "GET"),
    ]
    for path, serve, method in routes:
        for prefix in ("/v1", ""):
            app.add_api_route(prefix + path, serve, methods=[method],
                              include_in_schema=False)
    app.add_api_route("/healthz", endpoints.healthz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/readyz", endpoints.readyz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/metrics", endpoints.metrics, methods=["GET"], include_in_schema=False)
    app.add_api_route("/admin/reload", admin_reload, methods=["POST"], include_in_schema=False)
    return app


def app_from_environment() -> FastAPI:
    """The app from ``Settings()`` (environment / ``.env``): the factory each worker process
    of ``utilityguard serve --workers N`` calls."""
    return create_app(Settings())
