"""Scale: throughput and added latency of ``serve --workers N`` (N = 1, 2, 4) with the
PostgreSQL audit log in the loop, measured side by side in one run.

One scratch PostgreSQL server (:class:`benchmarks.perf.pg_server.PostgresServer`), the fast
fake upstream, and three proxies running at once — ``utilityguard serve --workers 1``, ``2`` and
``4`` — each with ``UTILITYGUARD_AUDIT_URL`` pointing at its own database. The measurements
alternate between the three in rounds, so a busy phase of the machine hits all of them alike:
throughput at 32 keep-alive connections (the raw-socket client of :mod:`benchmarks.perf.proxy`;
the median over rounds), and the added latency with one request in flight (proxy minus the
upstream called directly, alternating; p50 and p99). Each row's reference is the one-worker
value of the same run, so the ratio says how the proxy scales. Finally the decisions counted by
one scrape of each proxy's ``/metrics`` (summed over its workers) must all be rows in its
database once the proxy has stopped: the audit log kept up, or the run says it did not.

On the 2-core machine the load generator, the upstream, PostgreSQL and the workers share two
cores, and the load average at the start and the end of the run is reported with the results:
these are the figures of this box, not of a server.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import time
from contextlib import ExitStack

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.pg_server import PostgresServer, unavailable_reason
from benchmarks.perf.proxy import _one, _pct, servers, throughput

WORKERS = (1, 2, 4)
ROUNDS = 5
REQUESTS_PER_ROUND = 640  # at 32 connections
LATENCY_ROUNDS = 300
#: The throughput ratio to one worker each N must reach (2: the second core is used; 4: more
#: workers than cores must not collapse).
MIN_RATIO = {1: 0.0, 2: 1.1, 4: 0.9}


def _decisions(metrics: str) -> int:
    return int(sum(float(v) for v in re.findall(
        r"^utilityguard_decisions_total\{[^}]*\} (\S+)$", metrics, re.M)))


def _rows(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM decisions").fetchone()
    return int(row[0]) if row else 0


async def _latencies(direct: str, proxied: dict[int, str]) -> dict[int, list[float]]:
    """Added latency samples (proxy minus the direct call just before it), per N."""
    added: dict[int, list[float]] = {n: [] for n in proxied}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for url in (direct, *proxied.values()):  # warm up connections and the workers
            for _ in range(20):
                await _one(client, url, False)
        for _ in range(LATENCY_ROUNDS):
            for n, url in proxied.items():
                d = await _one(client, direct, False)
                added[n].append(await _one(client, url, False) - d)
    return added


def run() -> list[PerfResult]:
    reason = unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"the scale benchmark needs PostgreSQL: {reason} (make services)")
    load_start = os.getloadavg()[0]
    rps: dict[int, list[float]] = {n: [] for n in WORKERS}
    with PostgresServer() as pg, ExitStack() as stack:
        urls = {n: pg.create_database(f"perf_w{n}") for n in WORKERS}
        bases = {n: stack.enter_context(servers(n, env={"UTILITYGUARD_AUDIT_URL": urls[n]}))
                 for n in WORKERS}
        direct = f"{bases[1][0]}/chat/completions"
        proxied = {n: f"{px}/chat/completions" for n, (_, px) in bases.items()}
        added = asyncio.run(_latencies(direct, proxied))
        for _ in range(ROUNDS):
            for n in WORKERS:
                rps[n].append(asyncio.run(throughput(proxied[n], 32, REQUESTS_PER_ROUND)))
        decided = {n: _decisions(httpx.get(px.removesuffix("/v1") + "/metrics",
                                           timeout=30).text) for n, (_, px) in bases.items()}
        stack.close()  # stop the proxies: each flushes its audit queue
        time.sleep(0.5)
        rows = {n: _rows(urls[n]) for n in WORKERS}
    load_end = os.getloadavg()[0]
    med = {n: statistics.median(v) for n, v in rps.items()}
    out = []
    for n in WORKERS:
        out.append(PerfResult(
            f"scale: {n} worker(s) + PostgreSQL audit, throughput c32 (r/s)", med[n], "r/s",
            med[1], med[n] / med[1],
            "reported (reference: 1 worker)" if n == 1 else
            f"ratio to 1 worker >= {MIN_RATIO[n]:g}", med[n] / med[1] >= MIN_RATIO[n]))
        for q in (50, 99):
            v, ref = _pct(added[n], q), _pct(added[1], q)
            out.append(PerfResult(
                f"scale: {n} worker(s) + PostgreSQL audit, added latency p{q} c1", v, "s", ref,
                v / ref if ref > 0 else float("nan"), "reported (reference: 1 worker)", True))
        out.append(PerfResult(
            f"scale: {n} worker(s): audit rows / decisions in /metrics", rows[n], "",
            decided[n], rows[n] / max(decided[n], 1),
            "== 1: every decision written to PostgreSQL", rows[n] == decided[n] > 0))
    out.append(PerfResult("scale: load average (1 min), end of run vs start", load_end, "",
                          load_start, load_end / max(load_start, 1e-9),
                          "reported (2 cores; other jobs may share them)", True))
    return out
