"""Latency and throughput of the guard proxy, side by side with the upstream called directly.

Two real servers on 127.0.0.1: the fast fake upstream (:mod:`benchmarks.perf.fake_upstream`,
one process) and ``utilityguard serve --workers 2`` in front of it (logprob confidence, the
shipped cost model, enforce mode, no audit log). One asyncio ``httpx`` client
sends the same chat-completion request to both, alternating in rounds so that the machine's
slow phases hit both alike. Reported, non-streaming and streaming: the added latency
(proxy minus direct) at p50 and p99 with one request in flight, and at 32 in flight; and the
throughput through the proxy at concurrency 32 next to the upstream's own.

Targets (issue): added p50 <= 2 ms and p99 <= 10 ms at concurrency 1; >= 800 requests/s
through the proxy at concurrency 32. On 2 cores the client, the proxy and the upstream share
the machine, so the throughput figure is a floor; the reference column shows what the same
client gets from the upstream alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.servers import free_port, wait_until_serving

ROUNDS_C1 = 400
WORKERS = 2  # one proxy process per core of the 2-core target machine
REQUESTS_C32 = 1600
BODY = {"model": "perf-model", "messages": [{"role": "user",
                                             "content": "What is the capital of France?"}]}




@contextmanager
def servers(workers: int = WORKERS, env: Mapping[str, str] | None = None
            ) -> Iterator[tuple[str, str]]:
    """``(upstream_base, proxy_base)`` with ``workers`` proxy processes, both stopped on exit;
    ``env`` adds ``UTILITYGUARD_*`` settings for the proxy (e.g. an audit log)."""
    up_port, px_port = free_port(), free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    upstream = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "benchmarks.perf.fake_upstream:app", "--host",
         "127.0.0.1", "--port", str(up_port), "--log-level", "warning", "--no-access-log"],
        env=base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    exe = Path(sys.executable).parent / "utilityguard"
    proxy = subprocess.Popen(
        [str(exe), "serve", "--upstream", f"http://127.0.0.1:{up_port}/v1", "--port",
         str(px_port), "--confidence", "logprobs", "--log-level", "warning",
         "--workers", str(workers)],
        env={**base, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(f"http://127.0.0.1:{up_port}/v1/models", upstream)
        wait_until_serving(f"http://127.0.0.1:{px_port}/healthz", proxy)
        yield f"http://127.0.0.1:{up_port}/v1", f"http://127.0.0.1:{px_port}/v1"
    finally:
        for p in (proxy, upstream):
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


async def _one(client: httpx.AsyncClient, url: str, stream: bool) -> float:
    body = {**BODY, "stream": True} if stream else BODY
    t0 = time.perf_counter()
    if stream:
        async with client.stream("POST", url, json=body) as r:
            async for _ in r.aiter_bytes():
                pass
            r.raise_for_status()
    else:
        r = await client.post(url, json=body)
        r.raise_for_status()
    return time.perf_counter() - t0


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[int(q) - 1]


async def _latency(direct: str, proxied: str, stream: bool, conc: int
                   ) -> tuple[list[float], list[float]]:
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client:
        for url in (direct, proxied):  # warm up connections and the cost model
            await asyncio.gather(*[_one(client, url, stream) for _ in range(conc * 2)])
        d: list[float] = []
        p: list[float] = []
        rounds = ROUNDS_C1 if conc == 1 else max(10, REQUESTS_C32 // conc // 2)
        for _ in range(rounds):
            d += await asyncio.gather(*[_one(client, direct, stream) for _ in range(conc)])
            p += await asyncio.gather(*[_one(client, proxied, stream) for _ in range(conc)])
        return d, p


async def _raw_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       request: bytes) -> None:
    """One keep-alive HTTP/1.1 exchange; raises on a non-200 status."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"unexpected response: {head[:60]!r}")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)


async def _throughput(url: str, conc: int, total: int) -> float:
    """Requests/s at ``conc`` keep-alive connections, with a minimal raw-socket client (an
    httpx client costs more CPU per request than the proxy itself on this 2-core box)."""
    parsed = httpx.URL(url)
    body = json.dumps(BODY).encode()
    request = (f"POST {parsed.raw_path.decode()} HTTP/1.1\r\nHost: {parsed.host}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
               ).encode() + body
    conns = [await asyncio.open_connection(parsed.host, parsed.port) for _ in range(conc)]
    try:
        for r, w in conns:  # warm up
            await _raw_request(r, w, request)
        per = total // conc

        async def worker(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            for _ in range(per):
                await _raw_request(r, w, request)

        t0 = time.perf_counter()
        await asyncio.gather(*[worker(r, w) for r, w in conns])
        return per * conc / (time.perf_counter() - t0)
    finally:
        for _, w in conns:
            w.close()


def run() -> list[PerfResult]:
    out: list[PerfResult] = []
    with servers() as (up, px):
        direct, proxied = f"{up}/chat/completions", f"{px}/chat/completions"
        for stream in (False, True):
            kind = "streaming" if stream else "non-streaming"
            for conc in (1, 32):
                d, p = asyncio.run(_latency(direct, proxied, stream, conc))
                for q, limit in ((50, 2e-3), (99, 10e-3)):
                    added = _pct(p, q) - _pct(d, q)
                    target = (f"added <= {limit * 1e3:g} ms" if conc == 1
                              else "reported (no target at concurrency 32)")
                    out.append(PerfResult(
                        f"proxy {kind}, concurrency {conc}: added latency p{q}", added, "s",
                        _pct(d, q), _pct(p, q) / _pct(d, q),
                        f"{target} (reference: upstream called directly, p{q})",
                        added <= limit if conc == 1 else True))
        rps = asyncio.run(_throughput(proxied, 32, REQUESTS_C32))
        ref = asyncio.run(_throughput(direct, 32, REQUESTS_C32))
        out.append(PerfResult(f"proxy throughput, concurrency 32, {WORKERS} workers (requests/s)",
                              rps, "r/s", ref,
                              rps / ref, ">= 800 r/s (reference: the upstream alone)",
                              rps >= 800))
    return out
