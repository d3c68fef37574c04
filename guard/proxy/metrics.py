"""Prometheus metrics of the proxy, in the text exposition format, written by hand.

Two metric types are enough here: :class:`Counter` and :class:`Histogram` (cumulative
``_bucket{le=...}``, ``_sum`` and ``_count``), each with a fixed tuple of label names. Updates
take a lock, because the audit writer thread updates counters too; an uncontended lock costs
tens of nanoseconds. :class:`ProxyMetrics` holds the proxy's metrics and renders them;
:class:`MetricsMiddleware` counts every HTTP request by endpoint and status.

Examples
--------
>>> c = Counter("demo_total", "Demo requests.", ("status",))
>>> c.inc("200"); c.inc("200"); c.value("200")
2.0
>>> print(c.render())
# HELP demo_total Demo requests.
# TYPE demo_total counter
demo_total{status="200"} 2
>>> h = Histogram("demo_seconds", "Demo latency.", buckets=(0.1, 1.0))
>>> h.observe(0.05); h.observe(0.5)
>>> print(h.render())
# HELP demo_seconds Demo latency.
# TYPE demo_seconds histogram
demo_seconds_bucket{le="0.1"} 1
demo_seconds_bucket{le="1"} 2
demo_seconds_bucket{le="+Inf"} 2
demo_seconds_sum 0.55
demo_seconds_count 2
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Latency buckets in seconds: sub-millisecond guard overhead up to slow LLM replies.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                   1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: Paths counted under their own name; everything else is ``"other"`` (bounded cardinality).
ENDPOINTS = {
    "/v1/chat/completions": "chat_completions", "/chat/completions": "chat_completions",
    "/v1/models": "models", "/models": "models", "/healthz": "healthz", "/metrics": "metrics",
}
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _fmt(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(float(value)).removesuffix(".0")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


class _Metric:
    kind = ""

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help_text
        self.labelnames = tuple(labelnames)
        self._lock = threading.Lock()

    def _key(self, labels: Sequence[str]) -> tuple[str, ...]:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}; got {tuple(labels)}")
        return tuple(str(v) for v in labels)

    def _header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]


class Counter(_Metric):
    """A monotonically increasing count per label combination."""

    kind = "counter"

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = ()) -> None:
        super().__init__(name, help_text, labelnames)
        self._values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        """Add ``amount`` (default 1) to the count of ``labels``."""
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, *labels: str) -> float:
        """The current count of ``labels`` (0 when never incremented)."""
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def render(self) -> str:
        """The metric in the text exposition format."""
        with self._lock:
            items = sorted(self._values.items())
        lines = self._header()
        if not items and not self.labelnames:
            items = [((), 0.0)]
        lines += [f"{self.name}{_labels(self.labelnames, k)} {_fmt(v)}" for k, v in items]
        return "\n".join(lines)


class Histogram(_Metric):
    """Observations counted in cumulative buckets, with their sum and count."""

    kind = "histogram"

    def __init__(self, name: str, help_text: str, labelnames: Sequence[str] = (),
                 buckets: Sequence[float] = LATENCY_BUCKETS) -> None:
        super().__init__(name, help_text, labelnames)
        self.buckets = tuple(sorted(float(b) for b in buckets))
        self._series: dict[tuple[str, ...], list[float]] = {}  # bucket counts, then sum, count

    def observe(self, value: float, *labels: str) -> None:
        """Record one observation (e.g. a latency in seconds)."""
        key = self._key(labels)
        i = bisect.bisect_left(self.buckets, value)
        with self._lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = [0.0] * (len(self.buckets) + 2)
            if i < len(self.buckets):
                series[i] += 1
            series[-2] += value
            series[-1] += 1

    def count(self, *labels: str) -> int:
        """How many observations ``labels`` has."""
        with self._lock:
            series = self._series.get(self._key(labels))
            return int(series[-1]) if series else 0

    def render(self) -> str:
        """The metric in the text exposition format."""
        with self._lock:
            items = sorted((k, list(v)) for k, v in self._series.items())
        lines = self._header()
        for key, series in items:
            cumulative = 0.0
            bounds = (*self.buckets, float("inf"))
            for bound, n in zip(bounds, [*series[:-2], 0.0], strict=True):
                cumulative += n
                le = f'le="{_fmt(bound)}"'
                lines.append(f"{self.name}_bucket{_labels(self.labelnames, key, le)} "
                             f"{_fmt(cumulative)}")
            lines.append(f"{self.name}_sum{_labels(self.labelnames, key)} {_fmt(series[-2])}")
            lines.append(f"{self.name}_count{_labels(self.labelnames, key)} {_fmt(series[-1])}")
        return "\n".join(lines)


class ProxyMetrics:
    """The proxy's metrics (all names start with ``utilityguard_``)."""

    def __init__(self) -> None:
        p = "utilityguard_"
        self.requests = Counter(f"{p}requests_total", "HTTP requests by endpoint and status.",
                                ("endpoint", "status"))
        self.decisions = Counter(f"{p}decisions_total", "Guard decisions by outcome and mode.",
                                 ("decision", "mode"))
        self.upstream_errors = Counter(f"{p}upstream_errors_total",
                                       "Failed upstream calls by kind.", ("kind",))
        self.audit_dropped = Counter(f"{p}audit_dropped_total",
                                     "Audit records not written, by reason (queue_full, "
                                     "rejected, shutdown).", ("reason",))
        self.audit_written = Counter(f"{p}audit_written_total",
                                     "Decision records written to the audit log.")
        self.audit_reconnects = Counter(f"{p}audit_reconnects_total",
                                        "Reconnections to the audit database after it was "
                                        "unreachable.")
        self.request_seconds = Histogram(f"{p}request_duration_seconds",
                                         "Time to answer an HTTP request.", ("endpoint",))
        self.upstream_seconds = Histogram(f"{p}upstream_duration_seconds",
                                          "Time waiting for the upstream model.", ("stream",))
        self.guard_seconds = Histogram(f"{p}added_latency_seconds",
                                       "Time the proxy adds to a chat completion (total minus "
                                       "upstream).", ("stream",))

    def render(self) -> str:
        """Every metric, in the Prometheus text exposition format (ends with a newline)."""
        metrics = (self.requests, self.decisions, self.upstream_errors, self.audit_dropped,
                   self.audit_written, self.audit_reconnects, self.request_seconds,
                   self.upstream_seconds, self.guard_seconds)
        return "\n".join(m.render() for m in metrics) + "\n"


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
