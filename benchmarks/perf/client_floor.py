"""What the bare relay's hop costs, piece by piece: ``python -m benchmarks.perf client_floor``.

The TTFT goal (issue 26: the early stream <= 1.5x the upstream's own) is measured against a
floor, the bare relay (:mod:`benchmarks.perf.relay`: FastAPI on uvicorn with the guard
proxy's httpx client and transport), which alone measured 1.8-1.9x on httpx's own transport.
This benchmark tells where that hop's time goes: beside the upstream and the relay it runs
the relay on httpx's own transport (httpcore: the floor before
:mod:`guard.proxy.aio_transport`) and the relays of :mod:`benchmarks.perf.relay_clients`,
each one piece different (raw ASGI with httpx's own transport; raw ASGI with aiohttp; raw
ASGI with a minimal asyncio client), all on the same uvicorn (uvloop, httptools), one worker
each, in front of the same upstream.

* TTFT p50 (the :mod:`benchmarks.perf.ttft` client and dripped stream, the order rotated
  each round), as a ratio to the upstream's own;
* throughput at 32 connections (the :mod:`benchmarks.perf.proxy` raw-socket client, three
  rotated runs, the median), as a ratio to the relay's.

Everything is reported, nothing is a target: the figures say which stack a faster guard
would need (the guard and its floor must share it).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from contextlib import ExitStack
from importlib.util import find_spec

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.proxy import THROUGHPUT_RUNS, throughput
from benchmarks.perf.relay import TRANSPORT_ENV, UPSTREAM_ENV
from benchmarks.perf.servers import free_port
from benchmarks.perf.stack import UVICORN_QUIET, base_env, start_server, start_upstream
from benchmarks.perf.ttft import ROUNDS, _ttft

#: the relays measured: name -> (uvicorn app, whether it is a factory, extra environment)
RELAYS: dict[str, tuple[str, bool, dict[str, str]]] = {
    "relay": ("benchmarks.perf.relay:app_from_environment", True, {}),
    "relay-httpcore": ("benchmarks.perf.relay:app_from_environment", True,
                       {TRANSPORT_ENV: "httpcore"}),
    "asgi-httpcore": ("benchmarks.perf.relay_clients:asgi_httpcore", False, {}),
    "asgi-aiohttp": ("benchmarks.perf.relay_clients:asgi_aiohttp", False, {}),
    "asgi-asyncio": ("benchmarks.perf.relay_clients:asgi_asyncio", False, {})}
LABELS = {"relay": "bare relay (FastAPI, the proxy's client)",
          "relay-httpcore": "bare relay on httpx's own transport",
          "asgi-httpcore": "raw ASGI, httpx's own transport",
          "asgi-aiohttp": "raw ASGI, aiohttp", "asgi-asyncio": "raw ASGI, asyncio client"}


def _servers(stack: ExitStack) -> dict[str, str]:
    py, base = sys.executable, base_env()
    upstream, _ = start_upstream(stack, base)
    urls = {"upstream": upstream}
    for name, (app, factory, env) in RELAYS.items():
        if name == "asgi-aiohttp" and find_spec("aiohttp") is None:
            print("client_floor: asgi-aiohttp skipped: aiohttp is not installed "
                  "(the fast-upstream extra)", file=sys.stderr)
            continue
        port = free_port()
        start_server(stack, [py, "-m", "uvicorn", *(["--factory"] if factory else []), app,
                             "--port", str(port), *UVICORN_QUIET],
                     {**base, UPSTREAM_ENV: upstream, **env}, f"http://127.0.0.1:{port}/v1/models")
        urls[name] = f"http://127.0.0.1:{port}/v1"
    return {k: f"{u}/chat/completions" for k, u in urls.items()}


async def _ttfts(urls: dict[str, str]) -> dict[str, float]:
    names = list(urls)
    out: dict[str, list[float]] = {n: [] for n in names}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for name in names:
            for _ in range(5):
                await _ttft(client, urls[name], "relay")  # no guard header, no early check
        for r in range(ROUNDS):
            for name in names[r % len(names):] + names[:r % len(names)]:
                out[name].append(await _ttft(client, urls[name], "relay"))
    return {n: statistics.median(v) for n, v in out.items()}


def run() -> list[PerfResult]:
    with ExitStack() as stack:
        urls = _servers(stack)
        ttft = asyncio.run(_ttfts(urls))
        names = [n for n in urls if n != "upstream"]
        runs: dict[str, list[float]] = {n: [] for n in names}
        for k in range(THROUGHPUT_RUNS):
            for name in names[k % len(names):] + names[:k % len(names)]:
                runs[name].append(asyncio.run(throughput(urls[name])))
    rps = {n: statistics.median(v) for n, v in runs.items()}
    out = []
    for name in names:
        out.append(PerfResult(f"client floor: TTFT p50, {LABELS[name]}", ttft[name], "s",
                              ttft["upstream"], ttft[name] / ttft["upstream"],
                              "reported (reference: the upstream's own TTFT, p50)", True))
    for name in names:
        out.append(PerfResult(f"client floor: throughput c32 (median of {THROUGHPUT_RUNS}), "
                              f"{LABELS[name]}", rps[name], "r/s", rps["relay"],
                              rps[name] / rps["relay"],
                              "reported (reference: the bare relay)", True))
    return out
