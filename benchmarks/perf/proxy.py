"""The guard proxy beside a bare relay and the LiteLLM proxy, one worker each, in one run.

The servers (:mod:`benchmarks.perf.stack`): the fast fake upstream, the bare relay on the
guard's stack (the floor), the LiteLLM proxy 1.80.0 (skipped with a note when not
installed), ``serve --confidence logprobs`` and ``serve --confidence logprobs --policy
smollm2`` (the headline: what users are told to run). All in front of the same upstream.

* Latency, one request in flight: in each round one chat completion goes to every server in
  turn (the order rotated each round, so that the machine's slow phases hit all alike); a
  server's *added* latency is its median minus the upstream's own median. Non-streaming and
  streaming.
* Throughput at concurrency 32 (requests/s, a raw-socket keep-alive client: an httpx client
  costs more CPU per request than the proxy on a 2-core box): each server in turn, three
  runs; the median of the three.

Every figure is a ratio to the relay's and to LiteLLM's, measured in the same run. Targets
(issue 26): with ``--policy smollm2`` the added p50 <= 0.25x LiteLLM's and <= 2x the relay's;
throughput >= 3x LiteLLM's.
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
from typing import Any

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.servers import free_ports, wait_until_serving
from benchmarks.perf.stack import CONFIGS, running

ROUNDS_C1 = 300
THROUGHPUT_RUNS = 3
REQUESTS_C32 = 1600
CONCURRENCY = 32
BODY = {"model": "perf-model", "messages": [{"role": "user",
                                             "content": "What is the capital of France?"}]}
#: a long conversation (40 turns of seed-set questions, about 13 kB): what pricing every
#: segment of a request and encoding a large body cost
LONG_TURNS = 40
#: the proxies compared (the upstream is the reference of every added latency)
PROXIES = ("relay", "litellm", "guard", "policy")
LABELS = {"relay": "bare relay", "litellm": "LiteLLM 1.80.0",
          "guard": "serve --confidence logprobs (default policy)",
          "policy": "serve --confidence logprobs --policy smollm2"}


@contextmanager
def servers(workers: int = 2, env: Mapping[str, str] | None = None
            ) -> Iterator[tuple[str, str]]:
    """``(upstream_base, proxy_base)``: the fake upstream and ``utilityguard serve`` with
    ``workers`` processes in front of it (the soak, scale and TTFT benchmarks); ``env`` adds
    ``UTILITYGUARD_*`` settings. Both stopped on exit."""
    up_port, px_port = free_ports(2)
    base = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    upstream = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "benchmarks.perf.fake_upstream:app", "--host",
         "127.0.0.1", "--port", str(up_port), "--log-level", "warning", "--no-access-log"],
        env=base, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = subprocess.Popen(
        [sys.executable, "-m", "guard.cli", "serve", "--upstream",
         f"http://127.0.0.1:{up_port}/v1", "--port", str(px_port), "--confidence",
         "logprobs", "--log-level", "warning", "--workers", str(workers)],
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


def long_body() -> dict[str, Any]:
    """:data:`BODY` with :data:`LONG_TURNS` earlier turns before its question."""
    from cost_models.datasets import load_seed

    questions = [it.question for it in load_seed()[:LONG_TURNS]]
    turns = [{"role": "user" if k % 2 == 0 else "assistant", "content": q}
             for k, q in enumerate(questions)]
    return {**BODY, "messages": [*turns, *BODY["messages"]]}


async def _one(client: httpx.AsyncClient, url: str, stream: bool,
               ask: Mapping[str, Any] = BODY) -> float:
    body = {**ask, "stream": True} if stream else ask
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


async def latencies(urls: Mapping[str, str], stream: bool, rounds: int = ROUNDS_C1,
                    ask: Mapping[str, Any] = BODY) -> dict[str, list[float]]:
    """Seconds per request of each server, one request in flight, in rotated rounds."""
    names = list(urls)
    out: dict[str, list[float]] = {n: [] for n in names}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for name in names:  # warm up connections, models and caches
            for _ in range(20):
                await _one(client, urls[name], stream, ask)
        for k in range(rounds):
            for name in names[k % len(names):] + names[:k % len(names)]:
                out[name].append(await _one(client, urls[name], stream, ask))
    return out


async def _raw_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       request: bytes) -> None:
    """One keep-alive HTTP/1.1 exchange; raises on a non-200 status or a chunked reply."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length is None:
        raise RuntimeError("the reply has no content-length (the raw client reads no chunks)")
    body = await reader.readexactly(length)
    if not head.startswith(b"HTTP/1.1 200"):  # what the server said, for the run's error
        status = head.split(b"\r\n", 1)[0]
        raise RuntimeError(f"unexpected response: {status!r}, body {body[:400]!r}")


async def throughput(url: str, conc: int = CONCURRENCY, total: int = REQUESTS_C32) -> float:
    """Requests/s at ``conc`` keep-alive connections (a minimal raw-socket client)."""
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
        try:
            await asyncio.gather(*[worker(r, w) for r, w in conns])
        except RuntimeError as exc:
            raise RuntimeError(f"throughput run against {url}: {exc}") from None
        return per * conc / (time.perf_counter() - t0)
    finally:
        for _, w in conns:
            w.close()


def added_p50(times: Mapping[str, list[float]]) -> dict[str, float]:
    """Each server's median seconds minus the upstream's own median (its added p50)."""
    up = statistics.median(times["upstream"])
    return {n: statistics.median(v) - up for n, v in times.items() if n != "upstream"}


def _added_rows(times: Mapping[str, list[float]], kind: str) -> list[PerfResult]:
    """Added p50 of each guard configuration as a ratio to the relay's and LiteLLM's."""
    added = added_p50(times)
    out: list[PerfResult] = []
    for name in ("policy", "guard"):
        if name not in added:
            continue
        for ref, limit in (("relay", 2.0), ("litellm", 0.25)):
            if ref not in added:
                continue
            target = limit if name == "policy" and kind == "non-streaming" else None
            ratio = added[name] / added[ref]
            out.append(PerfResult(
                f"{kind} added p50, {LABELS[name]} / {LABELS[ref]}", added[name], "s",
                added[ref], ratio,
                f"ratio <= {target:g}" if target is not None else "reported",
                ratio <= target if target is not None else True))
    for name in PROXIES:
        if name in times:
            p99 = _pct(times[name], 99) - _pct(times["upstream"], 99)
            out.append(PerfResult(f"{kind} added p99, {LABELS[name]}", p99, "s",
                                  _pct(times["upstream"], 99),
                                  _pct(times[name], 99) / _pct(times["upstream"], 99),
                                  "reported (reference: the upstream's own p99)", True))
    return out


def _throughput_rows(urls: Mapping[str, str]) -> list[PerfResult]:
    names = [n for n in PROXIES if n in urls]
    runs: dict[str, list[float]] = {n: [] for n in names}
    for k in range(THROUGHPUT_RUNS):
        for name in names[k % len(names):] + names[:k % len(names)]:
            runs[name].append(asyncio.run(throughput(urls[name])))
    rps = {n: statistics.median(v) for n, v in runs.items()}
    out: list[PerfResult] = []
    for name in ("policy", "guard"):
        for ref, floor in (("litellm", 3.0), ("relay", None)):
            if name not in rps or ref not in rps:
                continue
            target = floor if name == "policy" else None
            ratio = rps[name] / rps[ref]
            out.append(PerfResult(
                f"throughput c{CONCURRENCY} (r/s, median of {THROUGHPUT_RUNS}), "
                f"{LABELS[name]} / {LABELS[ref]}", rps[name], "r/s", rps[ref], ratio,
                f"ratio >= {target:g}" if target is not None else "reported",
                ratio >= target if target is not None else True))
    for name in names:
        out.append(PerfResult(f"throughput c{CONCURRENCY}, {LABELS[name]}: the three runs",
                              rps[name], "r/s", min(runs[name]),
                              max(runs[name]) / min(runs[name]),
                              "reported (reference: the slowest run; ratio: fastest/slowest)",
                              True))
    return out


def run() -> list[PerfResult]:
    out: list[PerfResult] = []
    with running(CONFIGS) as stack:
        for name, why in stack.skipped.items():
            print(f"proxy: {name} skipped: {why}", file=sys.stderr)
        urls = {n: f"{u}/chat/completions" for n, u in stack.urls.items()}
        for stream in (False, True):
            times = asyncio.run(latencies(urls, stream))
            out += _added_rows(times, "streaming" if stream else "non-streaming")
        long = long_body()
        size = len(json.dumps(long)) // 1000
        times = asyncio.run(latencies(urls, False, ROUNDS_C1 // 3, long))
        out += _added_rows(times, f"long conversation ({LONG_TURNS} turns, {size} kB)")
        out += _throughput_rows(urls)
    return out
