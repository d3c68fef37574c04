"""Prometheus metrics of the proxy, summed over every worker process of ``serve --workers N``.

The metrics are :mod:`prometheus_client` counters and histograms behind two small wrappers,
:class:`Counter` (``inc(*labels, amount=1)``, ``value(*labels)``) and :class:`Histogram`
(``observe(value, *labels)``, ``count(*labels)``), each with a fixed tuple of label names.
Each :class:`ProxyMetrics` has its own registry, so several proxies can live in one process
(tests, embedding).

**Several workers.** With ``serve --workers N`` each worker is a process with its own counters,
and a scrape reaches one of them. ``serve`` therefore runs prometheus_client's multiprocess
mode: before starting the workers it points ``PROMETHEUS_MULTIPROC_DIR`` at a fresh private
directory, or uses the one already set (:func:`multiprocess_directory`); every worker keeps
its values in memory-mapped files there, and ``GET /metrics`` on any worker renders the sum
over all of them — counters and histogram buckets, sums and counts alike
(:func:`multiprocess_enabled` says which mode runs). A private directory is deleted when
``serve`` exits. :meth:`Counter.value` and :meth:`Histogram.count` read this process's own
values only.

:class:`MetricsMiddleware` counts every HTTP request by endpoint and status.

Examples
--------
>>> c = Counter("demo_total", "Demo requests.", ("status",))
>>> c.inc("200"); c.inc("200"); c.value("200")
2.0
>>> h = Histogram("demo_seconds", "Demo latency.", buckets=(0.1, 1.0))
>>> h.observe(0.05); h.observe(0.5); h.count()
2
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client import Counter as _PromCounter
from prometheus_client import Histogram as _PromHistogram
from prometheus_client.metrics_core import Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Latency buckets in seconds: sub-millisecond guard overhead up to slow LLM replies.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                   1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: Paths counted under their own name; everything else is ``"other"`` (bounded cardinality).
ENDPOINTS = {
    "/v1/chat/completions": "chat_completions", "/chat/completions": "chat_completions",
    "/v1/responses": "responses", "/responses": "responses",
    "/v1/models": "models", "/models": "models", "/healthz": "healthz", "/metrics": "metrics",
}
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_enabled() -> bool:
    """True when this process keeps its metrics in the shared multiprocess directory."""
    from prometheus_client import values

    return bool(getattr(values.ValueClass, "_multiprocess", False))


@contextmanager
def multiprocess_directory() -> Iterator[Path]:
    """The ``PROMETHEUS_MULTIPROC_DIR`` of the worker processes started inside the block
    (they inherit the environment). When the variable is already set, that directory is used
    (its ``*.db`` files from an earlier run are deleted first, as multiprocess mode requires)
    and kept; otherwise a fresh private one is made, and deleted on exit."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix="utilityguard-metrics-"))
    os.environ[MULTIPROC_ENV] = str(path)
    try:
        yield path
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(path, ignore_errors=True)


class _WithoutCreated:
    """A collector serving ``source``'s metrics without their ``*_created`` series (one line
    per value), leaving prometheus_client's process-wide settings alone."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        for family in self.source.collect():
            kept = Metric(family.name, family.documentation, family.type, family.unit)
            kept.samples = [s for s in family.samples if not s.name.endswith("_created")]
            yield kept


def _text(source: CollectorRegistry) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_WithoutCreated(source))
    return generate_latest(registry).decode()


class Counter:
    """A monotonically increasing count per label combination."""

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = (),
                 registry: CollectorRegistry | None = None) -> None:
        self.name = name
        self.labelnames = tuple(labelnames)
        self._metric = _PromCounter(name, help_text, self.labelnames, registry=registry)

    def _child(self, labels: Sequence[str]) -> Any:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}; got {tuple(labels)}")
        return self._metric.labels(*labels) if labels else self._metric

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        """Add ``amount`` (default 1) to the count of ``labels``."""
        self._child(labels).inc(amount)

    def value(self, *labels: str) -> float:
        """This process's count of ``labels`` (0 when never incremented)."""
        return float(self._child(labels)._value.get())


class Histogram:
    """Observations counted in cumulative buckets, with their sum and count."""

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = (),
                 buckets: Sequence[float] = LATENCY_BUCKETS,
                 registry: CollectorRegistry | None = None) -> None:
        self.name = name
        self.labelnames = tuple(labelnames)
        self._metric = _PromHistogram(name, help_text, self.labelnames, registry=registry,
                                      buckets=tuple(buckets))

    def _child(self, labels: Sequence[str]) -> Any:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}; got {tuple(labels)}")
        return self._metric.labels(*labels) if labels else self._metric

    def observe(self, value: float, *labels: str) -> None:
        """Record one observation (e.g. a latency in seconds)."""
        self._child(labels).observe(value)

    def count(self, *labels: str) -> int:
        """How many observations ``labels`` has in this process."""
        return int(sum(b.get() for b in self._child(labels)._buckets))


class ProxyMetrics:
    """The proxy's metrics (all names start with ``utilityguard_``), in their own registry."""

    def __init__(self) -> None:
        p, reg = "utilityguard_", CollectorRegistry(auto_describe=True)
        self.registry = reg
        self.requests = Counter(f"{p}requests_total", "HTTP requests by endpoint and status.",
                                ("endpoint", "status"), reg)
        self.decisions = Counter(f"{p}decisions_total", "Guard decisions by outcome and mode.",
                                 ("decision", "mode"), reg)
        self.route_decisions = Counter(
            f"{p}route_decisions_total",
            "Guard decisions by route (the model id or glob of serve --config; '*' without "
            "one) and outcome.", ("route", "decision"), reg)
        self.priced_by = Counter(
            f"{p}priced_by_total",
            "Guard decisions by where the text that set the price sits (user, history, "
            "assistant, prefill, system, developer, tools, other, joined; none: no text set "
            "it) and outcome.", ("priced_by", "decision"), reg)
        self.upstream_errors = Counter(f"{p}upstream_errors_total",
                                       "Failed upstream calls by kind.", ("kind",), reg)
        self.audit_dropped = Counter(f"{p}audit_dropped_total",
                                     "Audit records not written, by reason (queue_full, "
                                     "rejected, shutdown).", ("reason",), reg)
        self.audit_written = Counter(f"{p}audit_written_total",
                                     "Decision records written to the audit log.", (), reg)
        self.audit_reconnects = Counter(f"{p}audit_reconnects_total",
                                        "Reconnections to the audit database after it was "
                                        "unreachable.", (), reg)
        self.request_seconds = Histogram(f"{p}request_duration_seconds",
                                         "Time to answer an HTTP request.", ("endpoint",),
                                         registry=reg)
        self.upstream_seconds = Histogram(f"{p}upstream_duration_seconds",
                                          "Time from sending a request upstream to its reply "
                                          "read and judged (the price of a buffered request "
                                          "is computed meanwhile).", ("stream",),
                                          registry=reg)
        self.guard_seconds = Histogram(f"{p}added_latency_seconds",
                                       "Time the proxy adds to a chat completion (total minus "
                                       "upstream).", ("stream",), registry=reg)

    def render(self) -> str:
        """Every metric in the Prometheus text format: this process's values, or in
        multiprocess mode the sum over every worker."""
        if multiprocess_enabled():
            from prometheus_client.multiprocess import MultiProcessCollector

            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return _text(registry)
        return _text(self.registry)


class MetricsMiddleware:
    """Pure ASGI middleware counting each HTTP request by endpoint and status, and timing it.

    Parameters
    ----------
    app : ASGI app
        The wrapped application.
    metrics : ProxyMetrics
        Where to count.
    """

    def __init__(self, app: ASGIApp, metrics: ProxyMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            endpoint = ENDPOINTS.get(scope.get("path", ""), "other")
            self.metrics.requests.inc(endpoint, str(status))
            self.metrics.request_seconds.observe(time.perf_counter() - t0, endpoint)
