"""The running proxy's state: :class:`Proxy`, one per route, the root holding what is shared.

The app's proxy is the root (``app.state.proxy``); with ``--config`` each route is a child
:class:`Proxy`. :meth:`Proxy.running` is the app's lifespan: it opens every route's pooled
upstream client and the audit writer, and closes them (flushing the audit log) on the way out;
:meth:`Proxy.record` is where a decision is counted, kept and queued for the audit log.
Reloading is :mod:`guard.proxy.reload`'s, building a guard :mod:`guard.proxy.build`'s.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx

from guard.asking import Memo, Memos
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError
from guard.protocols import CostModel
from guard.proxy import aio_transport
from guard.proxy.audit import AuditWriter
from guard.proxy.audit.schema import SECURITY_EVENTS
from guard.proxy.audit.shared import SharedStore
from guard.proxy.auth import key_in
from guard.proxy.budget_ledger import BudgetRunner, StoreLedger
from guard.proxy.build import refusal_budget
from guard.proxy.decisions import DecisionStore
from guard.proxy.feedback import RecentIds
from guard.proxy.labels import LabelRateLimit
from guard.proxy.metrics import ProxyMetrics
from guard.proxy.pool import Upstream, probe_client, upstream_client, upstream_headers
from guard.proxy.routes import ANY_MODEL, RouteTable, UnknownModelError
from guard.settings import Settings

log = logging.getLogger(__name__)


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
        self.guard = guard  # replaced whole by a reload; a request reads it once
        self.route = route  # the model id or glob this proxy serves
        self._cost_model = cost_model
        self.root: Proxy = self if root is None else root
        #: this route's --refusal-budget controller of C_R (None: C_R fixed); it reads the
        #: fleet's window and steps from the audit store while serving (budget_ledger)
        self.budget = refusal_budget(settings, guard)
        key = settings.upstream_api_key
        self.upstream_key = key.get_secret_value() if key is not None else None
        if root is not None:  # a route: everything else is the root's
            self.metrics, self.recent, self.decisions = root.metrics, root.recent, root.decisions
            self.client_keys, self.override_keys = root.client_keys, root.override_keys
            self.owners, self.labeller_keys = root.owners, root.labeller_keys
            self.label_limit = root.label_limit
            return
        #: held by a reload (:func:`guard.proxy.reload.reload`): one at a time
        self.reload_lock = asyncio.Lock()
        self.metrics = ProxyMetrics()
        self.client_keys = tuple(k.get_secret_value().encode() for k in settings.api_keys)
        self.override_keys = tuple(k.get_secret_value().encode()
                                   for k in settings.override_api_keys)
        self._audit: AuditWriter | None = None
        self._shared: SharedStore | None = None
        self.recent = RecentIds()  # ids decided here, for feedback before the audit write
        self.owners = RecentIds()  # ids admitted here, with the key that made each
        self.labeller_keys = tuple(k.get_secret_value().encode()
                                   for k in settings.feedback_api_keys)
        self.label_limit = LabelRateLimit(settings.feedback_rate)
        self._budgets: BudgetRunner | None = None
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
    def shared(self) -> SharedStore | None:
        """Lookups in the audit store: decisions any worker or replica made, the budget's
        ledger (the root's; only while serving with an audit log)."""
        return self.root._shared

    @shared.setter
    def shared(self, store: SharedStore | None) -> None:
        self.root._shared = store

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
            client, transport = upstream_client(s, s.upstream, self._transport)
            probe = probe_client(s.upstream, self._transport)
            found = self._pools[key] = Upstream(client, max_bytes=s.max_upstream_bytes,
                                                probe=probe, transport=transport)
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

    def announce(self) -> None:
        """Say once, at start-up, which policy decides each route (or that none does), how many
        of the operator's own prompts and tools it does not price, and warn when a route's
        calibrator cannot reach the thresholds of ordinary questions (:mod:`guard.reach`: no
        reply would be answered on most of them)."""
        from guard.reach import reach

        for route in self.root.table.routes:
            guard = route.guard
            who = "" if route.route == ANY_MODEL else f"model {route.route}: "
            bound = reach(guard)
            warning = bound.warning() if bound is not None else None
            if warning is not None:
                log.warning("%s%s", who, warning)
            trusted = guard.asking
            if trusted.trusted or trusted.trusted_tools:
                log.info("%snot pricing the operator's own %d system prompt(s) and %d tool "
                         "definition(s) (--trusted-prompts, --trusted-tools)", who,
                         len(trusted.trusted), len(trusted.trusted_tools))
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

    def memo(self, guard: Guard, client: str | bytes) -> Memo:
        """The pricing memo of ``client`` (a credential digest) for ``guard``: a repeated
        system prompt or history is not priced again, and clients share nothing (no timing
        channel). A reloaded guard starts with empty memos (its models may differ)."""
        memos = self.__dict__.get("_memos")
        if memos is None or memos[0] is not guard:
            memos = (guard, Memos())
            self.__dict__["_memos"] = memos
        return memos[1].of(client)

    def c_r(self, requested: float | None) -> float | None:
        """The C_R a request is priced with: the client's (an allowed override), else the
        budget controller's, else None (the guard's own)."""
        if requested is not None or self.budget is None:
            return requested
        return self.budget.c_r

    def run_budgets(self) -> None:
        """(Re)start the root's budget runner on the shared audit store for every route with
        a ``--refusal-budget`` (blocking: it reads the fleet's state first). Called when
        serving starts and after a config reload brought new routes."""
        root = self.root
        if root._budgets is not None:
            root._budgets.stop()
            root._budgets = None
        budgets = [r for r in root.table.routes if r.budget is not None]
        if not budgets or root.shared is None:
            return
        for route in budgets:
            assert route.budget is not None
            route.budget.use(StoreLedger(root.shared, route.route))
        root._budgets = BudgetRunner([r.budget for r in budgets if r.budget is not None])
        root._budgets.start()

    def record(self, record: DecisionRecord, *, query: str, model: str | None, stream: bool,
               upstream_s: float, total_s: float, owner: str = "") -> None:
        """Count a decision and its latencies, keep it for ``GET /v1/decisions`` (readable
        with ``owner``, :func:`~guard.proxy.auth.credential`), and queue its audit row;
        each names this route and the key that made the request (who may label it)."""
        key_owner = self.owners.owner(record.request_id)[1]
        self.recent.add(record.request_id, key_owner)
        self.decisions.put(record, owner, route=self.route, model=model)
        if self.budget is not None:  # counts; the decision itself is read from the store
            self.budget.observe(record)
        m, label = self.metrics, "true" if stream else "false"
        m.decisions.inc(record.decision, record.mode)
        m.route_decisions.inc(self.route, record.decision)
        m.priced_by.inc(record.priced_by or "none", record.decision)
        m.upstream_seconds.observe(upstream_s, label)
        m.guard_seconds.observe(max(total_s - upstream_s, 0.0), label)
        if self.audit is not None:
            self.audit.submit(record, query=query, model=model, stream=stream,
                              route=self.route, key_id=key_owner, owner=owner)

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
        await asyncio.to_thread(self.announce)  # prices the reference questions
        if s.audit_target is not None:
            self.audit = AuditWriter(s.audit_target, queue_size=s.audit_queue_size,
                                     metrics=self.metrics, store_queries=s.audit_queries)
            self.audit.start()
            self.shared = SharedStore(s.audit_target)
            await asyncio.to_thread(self.run_budgets)
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
            log.info("upstream client: %s", aio_transport.description() if transport is None
                     else f"the transport given to create_app ({type(transport).__name__})")
            yield
        finally:
            self._running = False
            if self._budgets is not None:
                await asyncio.to_thread(self._budgets.stop)
                self._budgets = None
            pools, self._pools = list(self._pools.values()), {}
            for upstream in pools:
                await upstream.client.aclose()
                if upstream.probe is not None:
                    await upstream.probe.aclose()
            if self.audit is not None:
                await asyncio.to_thread(self.audit.close)  # writes everything queued
                self.audit = None
            if self.shared is not None:
                await asyncio.to_thread(self.shared.close)
                self.shared = None
