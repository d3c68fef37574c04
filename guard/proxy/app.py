"""The proxy application: :func:`create_app` and the state its lifespan owns.

``create_app(settings, transport=None)`` builds the :class:`~guard.Guard` from the settings
(cost model, calibrator, confidence extractors: loading errors surface here, before serving)
and a FastAPI app whose lifespan owns one pooled :class:`httpx.AsyncClient` (and so one
:class:`~guard.proxy.upstream.Upstream`) and the audit writer, and warms the cost model up.
``transport`` replaces the network (an :class:`httpx.MockTransport` or ASGI transport in tests
and benchmarks). Nothing is global: the running state is ``app.state.proxy``, a :class:`Proxy`.

Routes: ``POST /v1/chat/completions`` (:mod:`guard.proxy.chat`), ``POST /v1/responses``
(:mod:`guard.proxy.responses`, the same decision), ``POST /v1/feedback``
(:mod:`guard.proxy.feedback`), ``GET /v1/models`` and ``GET /v1/models/{model}`` (passed
through), ``GET /healthz`` (liveness: the proxy answers), ``GET /readyz`` (readiness: the
upstream answers too; 503 when it does not), ``GET /metrics``, ``POST /admin/reload`` (admin
key: reload the policy, :meth:`Proxy.reload`; also on SIGHUP). The same routes answer without
the ``/v1`` prefix, for clients configured with the bare host.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response

from guard.calibration import Calibrator
from guard.confidence.extractors import Extractor, extractors_for
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import (
    AuthenticationError,
    ConfigError,
    InvalidRequestError,
    PermissionDeniedError,
    UnknownRequestError,
)
from guard.protocols import CostModel
from guard.proxy.audit import FEEDBACK, AuditWriter
from guard.proxy.audit.schema import SECURITY_EVENTS
from guard.proxy.decisions import DecisionStore
from guard.proxy.errors import error_body, install_error_handlers
from guard.proxy.feedback import RecentIds, decided, feedback_row, parse_feedback
from guard.proxy.gateway import (
    build_table,
    decision,
    is_routed,
    policies,
    reload_config,
    routed_models,
    use_table,
)
from guard.proxy.labels import LabelRateLimit
from guard.proxy.labels import key_id as label_key_id
from guard.proxy.metrics import CONTENT_TYPE, MetricsMiddleware, ProxyMetrics
from guard.proxy.parse import check_auth, key_in, read_body
from guard.proxy.pipeline import GUARDED, endpoint
from guard.proxy.redact import RedactSecrets, install_access_log_filter
from guard.proxy.routes import ANY_MODEL, RouteTable, UnknownModelError
from guard.proxy.upstream import READY_TIMEOUT_S, Upstream, upstream_headers
from guard.refusal_budget import BudgetConfig, RefusalBudget, key_id
from guard.settings import Settings

log = logging.getLogger(__name__)


#: The confidence signals each ``--confidence`` kind provides (what a calibrator may read).
SIGNALS_OF: dict[str, tuple[str, ...]] = {
    "logprobs": ("logprob_mean", "logprob_low10"), "verbal": ("verbal",),
    "consistency": ("consistency",), "caller": ("caller",),
    "ptrue": ("logprob_mean", "logprob_low10", "ptrue"),
}


#: ``--policy none``: the bare rule (no default policy).
NO_POLICY = "none"


def build_extractors(settings: Settings) -> tuple[Extractor, ...]:
    """The confidence extractors for ``settings.confidence`` (none for ``"caller"``)."""
    return extractors_for(settings.confidence,
                          consistency_samples=settings.consistency_samples)


def build_guard(settings: Settings, cost_model: CostModel | None = None) -> Guard:
    """The Guard described by ``settings``; ``cost_model`` overrides ``settings.cost_model``
    (and a policy's)."""
    bare = settings.policy == NO_POLICY
    if settings.policy is not None and not bare:
        return policy_guard(settings, cost_model)
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
    # no --policy: the parts not given come from the shipped default policy (Guard's
    # default); --policy none: the bare rule
    if bare:
        return Guard(cost_model, calibrator, config=settings.decision_config(),
                     extractors=build_extractors(settings), policy=None)
    return Guard(cost_model, calibrator, config=settings.decision_config(),
                 extractors=build_extractors(settings))


def policy_guard(settings: Settings, cost_model: CostModel | None = None) -> Guard:
    """The Guard of ``settings.policy`` (a fitted policy), with the proxy's settings for
    mode, refusal text, no-confidence policy and extractors; ``C_R`` is the policy's unless
    set explicitly."""
    from guard.policy import load_policy

    if settings.cost_model is not None or settings.calibrator is not None:
        raise ConfigError("a policy carries its own cost model and calibrator: pass --policy "
                          "without --cost-model / --calibrator")
    policy = load_policy(str(settings.policy), trust=settings.trust_artifacts)
    allowed = SIGNALS_OF[settings.confidence]
    if policy.signal not in allowed:
        raise ConfigError(
            f"the policy {policy.label} reads {policy.signal!r}, which confidence="
            f"{settings.confidence!r} does not provide; serve with --confidence "
            f"{policy.confidence}")
    if cost_model is not None:  # the policy's cost scale was fitted for its own cost model
        policy.cost_model, policy.cost_scale = cost_model, None
    overrides: dict[str, Any] = {
        "refusal_text": settings.refusal_text, "mode": settings.mode,
        "no_confidence": settings.no_confidence, "extractors": build_extractors(settings)}
    if "c_r" in settings.model_fields_set:
        overrides["c_r"] = settings.c_r
    return policy.guard(**overrides)


#: requests admitted whose client key the budget controller still waits for
MAX_PENDING_KEYS = 10_000


def refusal_budget(settings: Settings, guard: Guard) -> RefusalBudget | None:
    """The ``--refusal-budget`` controller, starting from the guard's C_R (None when off)."""
    if settings.refusal_budget is None:
        return None
    return RefusalBudget(BudgetConfig(
        rate=settings.refusal_budget, c_r_min=settings.c_r_min, c_r_max=settings.c_r_max,
        window=settings.budget_window, max_step=settings.budget_max_step,
        key_share=settings.budget_key_share), c_r=guard.c_r)


class Proxy:
    """What the running app holds: settings, guard, metrics, and (while serving) the
    upstream clients and the audit writer.

    The app's proxy is the *root*; with ``--config`` each route is a child :class:`Proxy`
    (its own settings, guard and upstream pool) sharing the root's metrics, audit writer,
    keys and decision store; :meth:`routed` picks it for a request's model. Without
    ``--config`` the root is its only route, serving every model."""

    metrics: ProxyMetrics
    recent: RecentIds
    decisions: DecisionStore
    client_keys: tuple[bytes, ...]
    override_keys: tuple[bytes, ...]
    owners: RecentIds
    labeller_keys: tuple[bytes, ...]
    label_limit: LabelRateLimit

    def __init__(self, settings: Settings, guard: Guard,
                 cost_model: CostModel | None = None, *, root: Proxy | None = None,
                 route: str = ANY_MODEL) -> None:
        self.settings = settings
        self.configured = settings  # what the operator configured: what SIGHUP reloads
        self.guard = guard  # replaced whole by reload(); a request reads it once
        self.route = route  # the model id or glob this proxy serves
        self._cost_model = cost_model
        self.root: Proxy = self if root is None else root
        #: this route's --refusal-budget controller of C_R (None: C_R fixed); the root keeps
        #: the client key of each request admitted and not yet recorded (bounded)
        self.budget = refusal_budget(settings, guard)
        key = settings.upstream_api_key
        self.upstream_key = key.get_secret_value() if key is not None else None
        if root is not None:  # a route: everything else is the root's
            self.metrics, self.recent, self.decisions = root.metrics, root.recent, root.decisions
            self.client_keys, self.override_keys = root.client_keys, root.override_keys
            self.owners, self.labeller_keys = root.owners, root.labeller_keys
            self.label_limit = root.label_limit
            return
        self._reload_lock = asyncio.Lock()
        self.metrics = ProxyMetrics()
        self.client_keys = tuple(k.get_secret_value().encode() for k in settings.api_keys)
        self.override_keys = tuple(k.get_secret_value().encode()
                                   for k in settings.override_api_keys)
        self._audit: AuditWriter | None = None
        self.recent = RecentIds()  # ids decided here, for feedback before the audit write
        self.owners = RecentIds()  # ids admitted here, with the key that made each
        self.labeller_keys = tuple(k.get_secret_value().encode()
                                   for k in settings.feedback_api_keys)
        self.label_limit = LabelRateLimit(settings.feedback_rate)
        self._budget_keys: OrderedDict[str, str] = OrderedDict()
        self.decisions = DecisionStore(settings.decision_retention, settings.decision_capacity)
        self.table: RouteTable[Proxy] = RouteTable([(ANY_MODEL, self)])
        self._pools: dict[tuple[Any, ...], Upstream] = {}
        self._transport: httpx.AsyncBaseTransport | None = None
        self._running = False

    @property
    def audit(self) -> AuditWriter | None:
        """The audit writer (the root's; only while serving with an audit log)."""
        return self.root._audit

    @audit.setter
    def audit(self, writer: AuditWriter | None) -> None:
        self.root._audit = writer

    @property
    def upstream(self) -> Upstream:
        """This route's upstream client (only while the app's lifespan runs)."""
        return self.root.pool(self)

    def pool(self, route: Proxy) -> Upstream:
        """The upstream client of ``route``: one pool per route and upstream settings, made
        on first use and kept until shutdown (a reload that keeps them keeps the pool)."""
        if not self._running:
            raise RuntimeError("the proxy is not running (its lifespan has not started)")
        s = route.settings
        key = (route.route, s.upstream, s.read_timeout, s.connect_timeout, s.pool_timeout,
               s.max_connections, s.max_keepalive, s.max_upstream_bytes)
        found = self._pools.get(key)
        if found is None:
            if s.upstream is None:
                raise ConfigError("no upstream: pass --upstream URL or set UTILITYGUARD_UPSTREAM")
            client = httpx.AsyncClient(
                base_url=s.upstream + "/", trust_env=False, transport=self._transport,
                timeout=httpx.Timeout(s.read_timeout, connect=s.connect_timeout,
                                      pool=s.pool_timeout),
                limits=httpx.Limits(max_connections=s.max_connections,
                                    max_keepalive_connections=s.max_keepalive))
            # readiness has its own small client: a busy pool must not make /readyz wait
            probe = httpx.AsyncClient(base_url=s.upstream + "/", trust_env=False,
                                      transport=self._transport, timeout=READY_TIMEOUT_S,
                                      limits=httpx.Limits(max_connections=2))
            found = self._pools[key] = Upstream(client, max_bytes=s.max_upstream_bytes,
                                                probe=probe)
        return found

    def routed(self, model: Any) -> Proxy:
        """The route serving ``model`` (the request body's); :class:`UnknownModelError`
        (404) when none does."""
        if self.root.configured.config is None:
            return self.root  # one route: every model
        found = self.root.table.match(model) if isinstance(model, str) else None
        if found is None:
            raise UnknownModelError(
                f"the model {str(model)[:200]!r} is not served here; GET /v1/models lists "
                "the models this gateway routes", param="model")
        return found

    @property
    def secrets(self) -> list[str]:
        """Every configured secret (scrubbed from whatever the proxy relays): the proxy keys,
        every route's upstream key, the audit database's password."""
        out = [k.decode() for k in self.client_keys]
        out.extend(r.upstream_key for r in self.root.table.routes if r.upstream_key)
        if self.upstream_key and self.upstream_key not in out:
            out.append(self.upstream_key)
        if (url := self.settings.audit_url) is not None:  # its password, should it echo
            password = urlsplit(url.get_secret_value()).password
            out.extend([password] if password else [])
        return out

    def child(self, settings: Settings, guard: Guard, route: str) -> Proxy:
        """A route of this (root) proxy: its own settings, guard and upstream pool."""
        return Proxy(settings, guard, self._cost_model, root=self, route=route)

    def upstream_headers(self, client_headers: Mapping[str, str]) -> dict[str, str]:
        """The headers sent upstream for a request (a proxy key is never forwarded)."""
        return upstream_headers(client_headers, self.upstream_key,
                                forward_client_key=not self.client_keys)

    def upstream_key_source(self) -> str:
        """Which key the upstream receives, in words (never the key itself)."""
        routed = self.root.configured.config is not None
        if self.upstream_key:
            return ("the route's key (its api_key_env)" if routed else
                    "the configured upstream key (UTILITYGUARD_UPSTREAM_API_KEY)")
        if self.client_keys:
            return ("no key: proxy keys (UTILITYGUARD_API_KEYS) are never forwarded; set "
                    + ("the route's api_key_env" if routed else "UTILITYGUARD_UPSTREAM_API_KEY")
                    + " if the upstream needs one")
        return "the client's own Authorization header (no proxy keys configured)"

    def may_override(self, key: bytes | None) -> bool:
        """Whether a request authenticated with ``key`` may use the override headers."""
        return self.settings.allow_client_overrides or key_in(key, self.override_keys)

    async def reload(self, policy: str | None = None) -> Guard:
        """Load the configured policy again (the one given at start, whatever an admin
        switched to since) — or ``policy`` (a path or shipped name) instead, until the next
        reload — in a thread, and swap it in atomically: requests already running finish with
        the guard they started with; new ones get the new one. A policy that fails to load
        raises (ConfigError / ArtifactError) and leaves the old one serving. With
        ``--config`` the file is read again, whole (:func:`guard.proxy.gateway.reload_config`)."""
        async with self._reload_lock:
            if self.configured.config is not None:
                return await reload_config(self)
            settings = self.configured if policy is None else self.configured.model_copy(
                update={"policy": policy})
            try:
                guard = await asyncio.to_thread(build_guard, settings, self._cost_model)
                await asyncio.to_thread(guard.predict_cost, "warm-up")
            except Exception as exc:
                log.error("policy reload failed, still serving %s: %s",
                          self.guard.policy or "no policy", exc)
                raise
            old, self.guard, self.settings = self.guard, guard, settings
            log.warning("policy reloaded: %s -> %s", old.policy or "no policy",
                        guard.policy or "no policy")
            return guard

    def announce(self) -> None:
        """Say once, at start-up, which policy decides each route (or that none does)."""
        for route in self.root.table.routes:
            guard = route.guard
            who = "" if route.route == ANY_MODEL else f"model {route.route}: "
            if guard.policy is not None:
                log.info("%sdeciding with policy %s (C_R %s)", who, guard.policy, guard.c_r)
            elif guard.calibrator is None:
                log.warning("%sno policy: p is uncalibrated and alpha = 1 (every query "
                            "assumed answerable). Fit one on graded replies of your model "
                            "with 'utilityguard fit --data ITEMS --responses REPLIES --out "
                            "DIR' and serve with --policy DIR (or --policy smollm2, the "
                            "shipped one)", who)
            else:
                log.warning("%sno policy: p is calibrated but alpha = 1 (every query assumed "
                            "answerable); 'utilityguard fit' makes a policy with an "
                            "answerability model, served with --policy DIR", who)

    @staticmethod
    def new_request_id() -> str:
        """A fresh request id (32 hex digits)."""
        return uuid.uuid4().hex

    def c_r(self, requested: float | None) -> float | None:
        """The C_R a request is priced with: the client's (an allowed override), else the
        budget controller's, else None (the guard's own)."""
        if requested is not None or self.budget is None:
            return requested
        return self.budget.c_r

    def admitted(self, request_id: str, key: bytes | str | None) -> None:
        """Remember which client key (hashed) made a request, for the budget controllers
        (of any route: the route is known only once the body is read)."""
        keys = self.root._budget_keys
        if any(r.budget is not None for r in self.root.table.routes):
            keys[request_id] = key_id(key)
            while len(keys) > MAX_PENDING_KEYS:
                keys.popitem(last=False)

    def record(self, record: DecisionRecord, *, query: str, model: str | None, stream: bool,
               upstream_s: float, total_s: float, owner: bytes = b"") -> None:
        """Count a decision and its latencies, keep it for ``GET /v1/decisions`` (readable
        with ``owner``, :func:`~guard.proxy.decisions.credential`), and queue its audit row;
        each names this route and the key that made the request (who may label it)."""
        key_owner = self.owners.owner(record.request_id)[1]
        self.recent.add(record.request_id, key_owner)
        self.decisions.put(record, owner, route=self.route, model=model)
        if self.budget is not None:
            self.budget.observe(record, self.root._budget_keys.pop(record.request_id,
                                                                   "anonymous"))
        m, label = self.metrics, "true" if stream else "false"
        m.decisions.inc(record.decision, record.mode)
        m.route_decisions.inc(self.route, record.decision)
        m.upstream_seconds.observe(upstream_s, label)
        m.guard_seconds.observe(max(total_s - upstream_s, 0.0), label)
        if self.audit is not None:
            self.audit.submit(record, query=query, model=model, stream=stream,
                              route=self.route, key_id=key_owner)

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
        """Open every route's upstream client and the audit writer; close them (flushing the
        audit log) on the way out."""
        s = self.settings
        if s.upstream is None and s.config is None:
            raise ConfigError("no upstream: pass --upstream URL or set UTILITYGUARD_UPSTREAM")
        for route in self.table.routes:  # loads the default model
            await asyncio.to_thread(route.guard.predict_cost, "warm-up")
        self.announce()
        reload_signal = _watch_sighup(self)
        if s.audit_target is not None:
            self.audit = AuditWriter(s.audit_target, queue_size=s.audit_queue_size,
                                     metrics=self.metrics, store_queries=s.audit_queries)
            self.audit.start()
        self._transport, self._running = transport, True
        try:
            for route in self.table.routes:
                r = route.settings
                log.info("guarding %s for model %s (confidence %s, C_R %s, %s mode); the "
                         "upstream receives %s", route.upstream.name, route.route,
                         r.confidence, route.guard.c_r, r.mode, route.upstream_key_source())
            log.info("client overrides of the guard: %s", "allowed for every client"
                     if s.allow_client_overrides else
                     f"allowed for {len(self.override_keys)} proxy key(s)"
                     if self.override_keys else "off")
            yield
        finally:
            self._running = False
            pools, self._pools = list(self._pools.values()), {}
            for upstream in pools:
                await upstream.client.aclose()
                if upstream.probe is not None:
                    await upstream.probe.aclose()
            if reload_signal:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)
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


def check_policy_allowed(policy: str, settings: Settings) -> None:
    """A policy ``POST /admin/reload`` may load: a shipped name, the configured ``--policy``,
    or a folder inside one of the operator's ``--policy-dir`` directories (symlinks
    resolved); :class:`PermissionDeniedError` (403) otherwise."""
    from guard.policy.artifact import shipped_policies

    if policy in shipped_policies() or policy == settings.policy:
        return
    target = Path(policy).resolve()
    for root in settings.policy_dirs:
        if target.is_relative_to(Path(root).resolve()):
            return
    raise PermissionDeniedError(
        "the admin endpoint loads only shipped policies, the configured --policy and "
        "folders inside an operator-configured --policy-dir", param="policy",
        code="policy_dir_not_allowed")


def _watch_sighup(proxy: Proxy) -> bool:
    """Reload the configured policy on SIGHUP (where the platform has it and this is the
    main thread's loop); True when the handler was installed."""
    if (proxy.configured.policy is None and proxy.configured.config is None) or \
            not hasattr(signal, "SIGHUP"):
        return False
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[Any]] = set()

    def on_hup() -> None:
        task = loop.create_task(_reload_quietly(proxy))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    try:
        loop.add_signal_handler(signal.SIGHUP, on_hup)
    except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
        return False
    return True


async def _reload_quietly(proxy: Proxy) -> None:
    with contextlib.suppress(Exception):  # reload() logged why; the old policy serves on
        await proxy.reload()


async def _admin_reload(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    key = proxy.settings.admin_api_key
    if key is None:
        raise AuthenticationError("the admin endpoint is disabled: set "
                                  "UTILITYGUARD_ADMIN_API_KEY", code="admin_disabled")
    check_auth(request.headers, (key.get_secret_value().encode(),))
    raw = await read_body(request, proxy.settings.max_body_bytes)
    try:
        body = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        raise InvalidRequestError("the body must be empty or JSON", code="invalid_json") from None
    policy = body.get("policy") if isinstance(body, dict) else None
    if not isinstance(body, dict) or (policy is not None and not isinstance(policy, str)) or \
            set(body) - {"policy"}:
        raise InvalidRequestError('the body must be empty or {"policy": "PATH_OR_NAME"}',
                                  param="policy")
    if is_routed(proxy) and policy is not None:
        raise InvalidRequestError("this gateway serves a --config file: edit the file and "
                                  "reload it whole (an empty body)", param="policy")
    if proxy.configured.policy is None and policy is None and not is_routed(proxy):
        raise InvalidRequestError("nothing to reload: the proxy serves without --policy; "
                                  'send {"policy": "PATH_OR_NAME"} to start using one')
    if policy is not None:
        check_policy_allowed(policy, proxy.configured)
    try:
        guard = await proxy.reload(policy)
    except Exception as exc:
        return JSONResponse(error_body(f"the policy failed to load; still serving "
                                       f"{proxy.guard.policy}: {exc}", "server_error",
                                       code="policy_load_failed"), status_code=500)
    if is_routed(proxy):
        return JSONResponse({"reloaded": True, "routes": policies(proxy.table)})
    return JSONResponse({"reloaded": True, "policy": guard.policy})


async def _feedback(request: Request) -> Response:
    """``POST /v1/feedback``: a label for one decision, appended to the audit log."""
    proxy: Proxy = request.app.state.proxy
    key = check_auth(request.headers, (*proxy.client_keys, *proxy.labeller_keys))
    labeller = label_key_id(key)
    proxy.label_limit.admit(labeller)
    label = parse_feedback(await read_body(request, proxy.settings.max_body_bytes))
    target, audit = proxy.settings.audit_target, proxy.audit
    if target is None or audit is None:
        raise InvalidRequestError("feedback is stored in the audit log: serve with "
                                  "--audit-path (or --audit-url)", code="no_audit_log")
    rid = label["request_id"]
    known, owner = proxy.recent.owner(rid)
    if not known:
        known, owner = await asyncio.to_thread(decided, target, rid)
    if not known or (owner != labeller and not key_in(key, proxy.labeller_keys)):
        # another key's decision is answered as an unknown one: nothing to learn from it
        raise UnknownRequestError(f"no decision with request_id {rid!r} in the audit log",
                                  param="request_id")
    if not audit.submit_row(FEEDBACK, feedback_row(label, labeller)):
        return JSONResponse(error_body("the audit log is not keeping up; the label was not "
                                       "recorded, send it again", "server_error",
                                       code="audit_queue_full"), status_code=503)
    return JSONResponse({"recorded": True, **label})


async def _models(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    if is_routed(proxy):
        return routed_models(proxy, request.path_params.get("model"))
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
    """``/v1/completions``: not served, so that no endpoint delivers an unguarded answer."""
    raise InvalidRequestError(
        f"the utilityguard proxy does not serve {request.url.path}: it guards "
        "/v1/chat/completions and /v1/responses only (an endpoint it passed through would "
        "deliver unguarded answers); send the request as a chat completion",
        code="endpoint_not_guarded")


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def _readyz(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    routes = proxy.table.routes  # the operator's key only, if any, to each upstream
    checks = await asyncio.gather(*(r.upstream.ready(upstream_headers({}, r.upstream_key))
                                    for r in routes))
    ready = all(ok for ok, _ in checks)
    body: dict[str, Any] = {"status": "ready" if ready else "unavailable",
                            "upstream": routes[0].upstream.name, "detail": checks[0][1]}
    if is_routed(proxy):
        body["routes"] = [{"model": r.route, "upstream": r.upstream.name, "ready": ok,
                           "detail": detail} for r, (ok, detail) in zip(routes, checks,
                                                                        strict=True)]
    if proxy.audit is not None:  # reported, not a condition: records queue while it is down
        # without the log's name: where the audit database lives is the operator's business
        body["audit"] = {k: v for k, v in proxy.audit.status().items() if k != "log"}
    return JSONResponse(body, status_code=200 if ready else 503)


async def _metrics(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    if proxy.settings.metrics_api_key is not None:
        check_auth(request.headers, (proxy.settings.metrics_api_key.get_secret_value().encode(),))
    extra = proxy.budget.metrics_text() if proxy.budget is not None else ""
    return Response(proxy.metrics.render() + extra, media_type=CONTENT_TYPE)


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
            yield

    app = FastAPI(title="utilityguard proxy", lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url=None)
    app.state.proxy = proxy
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware, metrics=proxy.metrics)
    app.add_middleware(RedactSecrets, secrets=lambda: proxy.secrets)  # a reload may add keys
    routes: list[tuple[str, Any, str]] = [
        *((path, endpoint(api), "POST") for path, api in GUARDED.items()),
        ("/feedback", _feedback, "POST"),
        ("/models", _models, "GET"),
        ("/embeddings", _embeddings, "POST"),
        ("/completions", _not_guarded, "POST"),
        ("/models/{model:path}", _models, "GET"),
        ("/decisions/{request_id}", decision, "GET"),
    ]
    for path, serve, method in routes:
        for prefix in ("/v1", ""):
            app.add_api_route(prefix + path, serve, methods=[method],
                              include_in_schema=False)
    app.add_api_route("/healthz", _healthz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/readyz", _readyz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/metrics", _metrics, methods=["GET"], include_in_schema=False)
    app.add_api_route("/admin/reload", _admin_reload, methods=["POST"], include_in_schema=False)
    return app


def app_from_environment() -> FastAPI:
    """The app from ``Settings()`` (environment / ``.env``): the factory each worker process
    of ``utilityguard serve --workers N`` calls."""
    return create_app(Settings())
