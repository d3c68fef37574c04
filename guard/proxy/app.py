"""The proxy application: :func:`create_app` and the state its lifespan owns.

``create_app(settings, transport=None)`` builds the :class:`~guard.Guard` from the settings
(cost model, calibrator, confidence extractors: loading errors surface here, before serving)
and a FastAPI app whose lifespan owns one pooled :class:`httpx.AsyncClient` (and so one
:class:`~guard.proxy.upstream.Upstream`) and the audit writer, and warms the cost model up.
``transport`` replaces the network (an :class:`httpx.MockTransport` or ASGI transport in tests
and benchmarks). Nothing is global: the running state is ``app.state.proxy``, a :class:`Proxy`.

Routes: ``POST /v1/chat/completions`` (:mod:`guard.proxy.chat`), ``GET /v1/models`` and
``GET /v1/models/{model}`` (passed through), ``GET /healthz`` (liveness: the proxy answers),
``GET /readyz`` (readiness: the upstream answers too; 503 when it does not), ``GET /metrics``.
The same routes answer without the ``/v1`` prefix, for clients configured with the bare host.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response

from guard.calibration import Calibrator
from guard.confidence.extractors import (
    ConsistencyExtractor,
    Extractor,
    LogprobExtractor,
    VerbalExtractor,
)
from guard.core import Guard
from guard.exceptions import ConfigError, InvalidRequestError
from guard.protocols import CostModel
from guard.proxy.audit import AuditWriter
from guard.proxy.audit.schema import SECURITY_EVENTS
from guard.proxy.chat import chat_completions
from guard.proxy.errors import install_error_handlers
from guard.proxy.metrics import CONTENT_TYPE, MetricsMiddleware, ProxyMetrics
from guard.proxy.redact import RedactSecrets, install_access_log_filter
from guard.proxy.request import check_auth, key_in, read_body
from guard.proxy.upstream import Upstream, upstream_headers
from guard.records import DecisionRecord
from guard.settings import Settings

log = logging.getLogger(__name__)


#: The confidence signals each ``--confidence`` kind provides (what a calibrator may read).
SIGNALS_OF: dict[str, tuple[str, ...]] = {
    "logprobs": ("logprob_mean", "logprob_low10"), "verbal": ("verbal",),
    "consistency": ("consistency",), "caller": ("caller",),
}


def build_extractors(settings: Settings) -> tuple[Extractor, ...]:
    """The confidence extractors for ``settings.confidence`` (none for ``"caller"``)."""
    kind = settings.confidence
    if kind == "logprobs":
        return (LogprobExtractor(),)
    if kind == "verbal":
        return (VerbalExtractor(),)
    if kind == "consistency":
        return (ConsistencyExtractor(n=settings.consistency_samples),)
    return ()


def build_guard(settings: Settings, cost_model: CostModel | None = None) -> Guard:
    """The Guard described by ``settings``; ``cost_model`` overrides ``settings.cost_model``."""
    if cost_model is None and settings.cost_model is not None:
        from cost_models import load_model

        cost_model = load_model(settings.cost_model, trust=settings.trust_artifacts)
    calibrator = None
    if settings.calibrator is not None:
        calibrator = Calibrator.load(settings.calibrator, trust=settings.trust_artifacts)
        allowed = SIGNALS_OF[settings.confidence]
        if calibrator.signal not in allowed:
            raise ConfigError(
                f"the calibrator in {settings.calibrator} reads {calibrator.signal!r}, which "
                f"confidence={settings.confidence!r} does not provide ({', '.join(allowed)})")
    return Guard(cost_model, calibrator, config=settings.decision_config(),
                 extractors=build_extractors(settings))


class Proxy:
    """What the running app holds: settings, guard, metrics, and (while serving) the
    upstream client and the audit writer."""

    def __init__(self, settings: Settings, guard: Guard) -> None:
        self.settings = settings
        self.guard = guard
        self.metrics = ProxyMetrics()
        self.client_keys = tuple(k.get_secret_value().encode() for k in settings.api_keys)
        self.override_keys = tuple(k.get_secret_value().encode()
                                   for k in settings.override_api_keys)
        key = settings.upstream_api_key
        self.upstream_key = key.get_secret_value() if key is not None else None
        self._upstream: Upstream | None = None
        self.audit: AuditWriter | None = None

    @property
    def upstream(self) -> Upstream:
        """The upstream client (only while the app's lifespan runs)."""
        if self._upstream is None:
            raise RuntimeError("the proxy is not running (its lifespan has not started)")
        return self._upstream

    @property
    def secrets(self) -> list[str]:
        """Every configured secret (scrubbed from whatever the proxy relays)."""
        out = [k.decode() for k in self.client_keys]
        if self.upstream_key:
            out.append(self.upstream_key)
        if (url := self.settings.audit_url) is not None:  # its password, should it echo
            password = urlsplit(url.get_secret_value()).password
            out.extend([password] if password else [])
        return out

    def upstream_headers(self, client_headers: Mapping[str, str]) -> dict[str, str]:
        """The headers sent upstream for a request (a proxy key is never forwarded)."""
        return upstream_headers(client_headers, self.upstream_key,
                                forward_client_key=not self.client_keys)

    def upstream_key_source(self) -> str:
        """Which key the upstream receives, in words (never the key itself)."""
        if self.upstream_key:
            return "the configured upstream key (UTILITYGUARD_UPSTREAM_API_KEY)"
        if self.client_keys:
            return ("no key: proxy keys (UTILITYGUARD_API_KEYS) are never forwarded; set "
                    "UTILITYGUARD_UPSTREAM_API_KEY if the upstream needs one")
        return "the client's own Authorization header (no proxy keys configured)"

    def may_override(self, key: bytes | None) -> bool:
        """Whether a request authenticated with ``key`` may use the override headers."""
        return self.settings.allow_client_overrides or key_in(key, self.override_keys)

    @staticmethod
    def new_request_id() -> str:
        """A fresh request id (32 hex digits)."""
        return uuid.uuid4().hex

    def record(self, record: DecisionRecord, *, query: str, model: str | None, stream: bool,
               upstream_s: float, total_s: float) -> None:
        """Count a decision and its latencies, and queue its audit row."""
        m, label = self.metrics, "true" if stream else "false"
        m.decisions.inc(record.decision, record.mode)
        m.upstream_seconds.observe(upstream_s, label)
        m.guard_seconds.observe(max(total_s - upstream_s, 0.0), label)
        if self.audit is not None:
            self.audit.submit(record, query=query, model=model, stream=stream)

    def forbidden(self, request_id: str, kind: str, detail: str) -> None:
        """Record a request refused for using what it was not granted (a security event): a
        warning in the log and a row of the audit log's ``security_events`` table (``detail``
        names headers only, never a value or a key)."""
        log.warning("request %s refused (403 %s): %s", request_id, kind, detail)
        if self.audit is not None:
            self.audit.submit_row(SECURITY_EVENTS, SECURITY_EVENTS.row(
                {"ts": time.time(), "request_id": request_id, "kind": kind,
                 "detail": detail}))

    @asynccontextmanager
    async def running(self, transport: httpx.AsyncBaseTransport | None) -> AsyncIterator[None]:
        """Open the upstream client and the audit writer; close both (flushing the audit
        log) on the way out."""
        s = self.settings
        if s.upstream is None:
            raise ConfigError("no upstream: pass --upstream URL or set UTILITYGUARD_UPSTREAM")
        timeout = httpx.Timeout(s.read_timeout, connect=s.connect_timeout,
                                pool=s.pool_timeout)
        limits = httpx.Limits(max_connections=s.max_connections,
                              max_keepalive_connections=s.max_keepalive)
        await asyncio.to_thread(self.guard.predict_cost, "warm-up")  # loads the default model
        if s.audit_target is not None:
            self.audit = AuditWriter(s.audit_target, queue_size=s.audit_queue_size,
                                     metrics=self.metrics, store_queries=s.audit_queries)
            self.audit.start()
        try:
            async with httpx.AsyncClient(base_url=s.upstream + "/", timeout=timeout,
                                         limits=limits, transport=transport,
                                         trust_env=False) as client:
                self._upstream = Upstream(client, max_bytes=s.max_upstream_bytes)
                log.info("guarding %s (confidence %s, C_R %s, %s mode)", self._upstream.name,
                         s.confidence, s.c_r, s.mode)
                log.info("the upstream receives %s", self.upstream_key_source())
                log.info("client overrides of the guard: %s", "allowed for every client"
                         if s.allow_client_overrides else
                         f"allowed for {len(self.override_keys)} proxy key(s)"
                         if self.override_keys else "off")
                yield
        finally:
            self._upstream = None
            if self.audit is not None:
                await asyncio.to_thread(self.audit.close)  # writes everything queued
                self.audit = None


#: A model id: segments of letters, digits and ``._:@+-`` (not starting with a dot), joined
#: by ``/`` (``meta-llama/Llama-3-8B``). Nothing else reaches the upstream.
MODEL_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:@+-]*(?:/[A-Za-z0-9_][A-Za-z0-9._:@+-]*)*")
MAX_MODEL_ID = 256


def model_path(request: Request) -> str:
    """The upstream path of a models request; :class:`InvalidRequestError` for a model id
    that is not one (a dot segment, an encoded character, anything that could leave the
    upstream's ``/v1``)."""
    model = request.path_params.get("model")
    if model is None:
        return "models"
    raw = request.scope.get("raw_path") or b""
    if len(model) > MAX_MODEL_ID or b"%" in raw or not MODEL_ID.fullmatch(model):
        raise InvalidRequestError(
            "invalid model id: use letters, digits, '._:@+-' and '/' between segments",
            param="model", code="invalid_model_id")
    return "models/" + "/".join(quote(part, safe="") for part in model.split("/"))


async def _models(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    upstream = proxy.upstream
    data = await upstream.within(proxy.settings.request_timeout, upstream.get(
        model_path(request), proxy.upstream_headers(request.headers)))
    return JSONResponse(data)


async def _embeddings(request: Request) -> Response:
    """``POST /v1/embeddings``, passed through unchanged: an embedding answers no question."""
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    body = await read_body(request, proxy.settings.max_body_bytes)
    upstream = proxy.upstream
    data = await upstream.within(proxy.settings.request_timeout, upstream.post(
        "embeddings", body, proxy.upstream_headers(request.headers)))
    return JSONResponse(data)


async def _not_guarded(request: Request) -> Response:
    """``/v1/completions`` and ``/v1/responses``: not served, so that no endpoint delivers
    an unguarded answer."""
    raise InvalidRequestError(
        f"the utilityguard proxy does not serve {request.url.path}: it guards "
        "/v1/chat/completions only (an endpoint it passed through would deliver unguarded "
        "answers); send the request as a chat completion", code="endpoint_not_guarded")


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def _readyz(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    headers = upstream_headers({}, proxy.upstream_key)  # the operator's key only, if any
    ready, detail = await proxy.upstream.ready(headers)
    body: dict[str, Any] = {"status": "ready" if ready else "unavailable",
                            "upstream": proxy.upstream.name, "detail": detail}
    if proxy.audit is not None:  # reported, not a condition: records queue while it is down
        body["audit"] = proxy.audit.status()
    return JSONResponse(body, status_code=200 if ready else 503)


async def _metrics(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    return Response(proxy.metrics.render(), media_type=CONTENT_TYPE)


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
    proxy = Proxy(settings, build_guard(settings, cost_model))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        install_access_log_filter()  # here: after uvicorn configured logging in this process
        async with proxy.running(transport):
            yield

    app = FastAPI(title="utilityguard proxy", lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url=None)
    app.state.proxy = proxy
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware, metrics=proxy.metrics)
    app.add_middleware(RedactSecrets, secrets=proxy.secrets)
    routes: list[tuple[str, Any, str]] = [
        ("/chat/completions", chat_completions, "POST"),
        ("/models", _models, "GET"),
        ("/embeddings", _embeddings, "POST"),
        ("/completions", _not_guarded, "POST"),
        ("/responses", _not_guarded, "POST"),
        ("/models/{model:path}", _models, "GET"),
    ]
    for path, endpoint, method in routes:
        for prefix in ("/v1", ""):
            app.add_api_route(prefix + path, endpoint, methods=[method],
                              include_in_schema=False)
    app.add_api_route("/healthz", _healthz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/readyz", _readyz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/metrics", _metrics, methods=["GET"], include_in_schema=False)
    return app


def app_from_environment() -> FastAPI:
    """The app from ``Settings()`` (environment / ``.env``): the factory each worker process
    of ``utilityguard serve --workers N`` calls."""
    return create_app(Settings())
