"""Fault/soak benchmark of the guard proxy: a long mixed load, then SIGTERM mid-flight.

Real processes on 127.0.0.1: the fast fake upstream (:mod:`benchmarks.perf.fake_upstream`)
and ``utilityguard serve --workers 2 --audit-path ...`` in front of it. ``concurrency`` asyncio
clients send, for ``seconds``, a mix of normal (60%), streaming (30%) and failing (10%: the
upstream answers 503, the proxy must answer 502) chat requests. Then the proxy receives
SIGTERM while requests are still in flight; every response the clients received with a
decision header must be in the audit log once the proxy has exited.

Reported: requests, error rate (responses other than the expected status, and transport
errors before SIGTERM, over all requests; requests whose connection the shutdown closed are
counted apart: a keep-alive connection the server closes as idle while the client is sending
on it fails before the request reaches the proxy, so it has no decision and no audit row),
latency p50/p99 of the successful requests, the RSS of the proxy
(parent and workers) at the start and the end of the load, the CPU time of each worker (its
share of the load), and audit rows against decisions. ``python -m benchmarks.perf soak`` runs
``SOAK_SECONDS`` (environment, default 60) at concurrency 64; the test suite runs a few
seconds of it.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.servers import free_ports, wait_until_serving

#: The mix of requests: (kind, weight).
MIX = (("normal", 0.6), ("stream", 0.3), ("fail", 0.1))
#: The status each kind must get: the proxy turns the upstream's 503 into 502.
EXPECTED = {"normal": 200, "stream": 200, "fail": 502}


@dataclass
class SoakReport:
    """What one soak run measured."""

    seconds: float
    concurrency: int
    requests: int = 0
    unexpected: int = 0
    shutdown_errors: int = 0
    latencies: list[float] = field(default_factory=list)
    decisions: int = 0
    audit_rows: int = 0
    rss_start_kb: int = 0
    rss_end_kb: int = 0
    worker_cpu_s: list[float] = field(default_factory=list)
    worker_connections: list[int] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    sigterm_at: float = math.inf

    @property
    def error_rate(self) -> float:
        """Unexpected answers and transport errors under load (before SIGTERM), per request."""
        return self.unexpected / self.requests if self.requests else 1.0

    def pct(self, q: float) -> float:
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")

    @property
    def worker_shares(self) -> list[float]:
        total = sum(self.worker_cpu_s)
        return [c / total for c in self.worker_cpu_s] if total else []

    def summary(self) -> str:
        shares = ", ".join(f"{s:.0%}" for s in self.worker_shares)
        return (f"{self.requests} requests in {self.seconds:g} s at concurrency "
                f"{self.concurrency}: error rate {self.error_rate:.3%}, p50 "
                f"{self.pct(0.5) * 1000:.1f} ms, p99 {self.pct(0.99) * 1000:.1f} ms, RSS "
                f"{self.rss_start_kb / 1024:.0f} -> {self.rss_end_kb / 1024:.0f} MiB, worker "
                f"CPU shares [{shares}] holding {self.worker_connections} client connections, "
                f"audit rows {self.audit_rows} / decisions "
                f"{self.decisions}; connections closed by the shutdown {self.shutdown_errors}; "
                f"failures {dict(self.failures) or 'none'}")


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """The proxy's processes: the parent, its workers (uvicorn's multiprocess children)."""
    kids = [k for c in _children(pid) for k in [c, *_children(c)]]
    return [pid, *kids]


def _workers(pid: int) -> list[int]:
    """The worker processes (uvicorn spawns them with ``multiprocessing``; the resource
    tracker it may also start is not one)."""
    return [p for p in _tree(pid)[1:]
            if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]


def _connections(pids: list[int], port: int) -> list[int]:
    """Established TCP connections to ``port`` held by each process (from /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "01" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(cols[9])
    counts = []
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        links = []
        for fd in fds.iterdir():
            try:
                links.append(os.readlink(fd))
            except OSError:
                continue
        counts.append(sum(1 for x in links if x.startswith("socket:[") and x[8:-1] in inodes))
    return counts


def decided(response: httpx.Response) -> bool:
    """Whether the proxy decided on a request: the decision header, or (a stream relayed as
    it arrived, ``x-utilityguard-stream: early``) the decision object in its last event."""
    if "x-utilityguard-decision" in response.headers:
        return True
    if response.headers.get("x-utilityguard-stream") != "early":
        return False
    events = [line for line in response.text.splitlines() if line.startswith("data: {")]
    return bool(events) and bool(json.loads(events[-1][6:]).get("utilityguard"))


async def _load(proxy: str, seconds: float, concurrency: int, report: SoakReport,
                rng: random.Random) -> None:
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    stop = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=proxy, timeout=60.0, limits=limits) as client:
        async def worker() -> None:
            while time.monotonic() < stop:
                kind = rng.choices(kinds, weights)[0]
                body = {"model": "perf-model", "stream": kind == "stream", "messages": [
                    {"role": "user", "content": "perf-fail" if kind == "fail" else
                     "What is the capital of France?"}]}
                t0 = time.perf_counter()
                report.requests += 1
                try:
                    r = await client.post("/chat/completions", json=body)
                except httpx.HTTPError as exc:
                    if time.perf_counter() >= report.sigterm_at:  # the shutdown closed it
                        report.shutdown_errors += 1
                        report.failures[f"{type(exc).__name__} after SIGTERM"] += 1
                    else:
                        report.unexpected += 1
                        report.failures[f"{type(exc).__name__} under load"] += 1
                    continue
                if decided(r):
                    report.decisions += 1
                if r.status_code != EXPECTED[kind]:
                    report.unexpected += 1
                    report.failures[f"{kind}: HTTP {r.status_code}"] += 1
                elif r.status_code == 200:
                    report.latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def soak(seconds: float, concurrency: int, *, workers: int = 2, seed: int = 0) -> SoakReport:
    """Run the soak (see the module docstring) and return what it measured."""
    report = SoakReport(seconds=seconds, concurrency=concurrency)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    up_port, px_port = free_ports(2)
    with tempfile.TemporaryDirectory(prefix="utilityguard-soak-") as tmp:
        audit = Path(tmp) / "audit.db"
        upstream = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "benchmarks.perf.fake_upstream:app", "--host",
             "127.0.0.1", "--port", str(up_port), "--log-level", "warning", "--no-access-log"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proxy = subprocess.Popen(
            [str(Path(sys.executable).parent / "utilityguard"), "serve", "--upstream",
             f"http://127.0.0.1:{up_port}/v1", "--port", str(px_port), "--confidence",
             "logprobs", "--log-level", "warning", "--workers", str(workers),
             "--audit-path", str(audit)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_serving(f"http://127.0.0.1:{up_port}/v1/models", upstream)
            wait_until_serving(f"http://127.0.0.1:{px_port}/healthz", proxy)
            report.rss_start_kb = sum(_rss_kb(p) for p in _tree(proxy.pid))
            cpu0 = {p: _cpu_s(p) for p in _workers(proxy.pid)}
            load = _load(f"http://127.0.0.1:{px_port}/v1", seconds, concurrency, report,
                         random.Random(seed))

            async def load_then_sigterm() -> None:
                task = asyncio.ensure_future(load)
                await asyncio.sleep(seconds)  # the clients are still sending: mid-flight
                report.rss_end_kb = sum(_rss_kb(p) for p in _tree(proxy.pid))
                report.worker_cpu_s = [_cpu_s(p) - c for p, c in cpu0.items()]
                report.worker_connections = _connections(list(cpu0), px_port)
                report.sigterm_at = time.perf_counter()
                proxy.send_signal(signal.SIGTERM)
                await task

            asyncio.run(load_then_sigterm())
            proxy.wait(timeout=60)
        finally:
            for p in (proxy, upstream):
                if p.poll() is None:
                    p.terminate()
                    try:
                        p.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        p.kill()
        if audit.exists():
            with sqlite3.connect(audit) as conn:
                report.audit_rows = conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
    return report


def run() -> list[PerfResult]:
    seconds = float(os.environ.get("SOAK_SECONDS", "60"))
    r = soak(seconds, 64)
    print(r.summary())
    shares = r.worker_shares
    return [
        PerfResult("soak: error rate (unexpected / requests)", r.error_rate, "", 0.001,
                   r.error_rate / 0.001, "<= 0.1% (reference: the target)",
                   r.error_rate <= 0.001),
        PerfResult("soak: p99 / p50 latency (successful)", r.pct(0.99), "s", r.pct(0.5),
                   r.pct(0.99) / r.pct(0.5), "reported (reference: p50)", True),
        PerfResult("soak: RSS end / start (proxy + workers)", r.rss_end_kb, "k",
                   r.rss_start_kb, r.rss_end_kb / r.rss_start_kb, "ratio <= 1.5",
                   r.rss_end_kb <= 1.5 * r.rss_start_kb),
        PerfResult("soak: audit rows / decisions after SIGTERM", r.audit_rows, "",
                   r.decisions, r.audit_rows / max(r.decisions, 1), "ratio == 1",
                   r.audit_rows == r.decisions),
        PerfResult("soak: busiest worker's CPU share", max(shares, default=1.0), "",
                   1 / len(shares) if shares else 1.0,
                   max(shares, default=1.0) * len(shares or [1]),
                   "reported (reference: an even share)", True),
    ]
