"""Time to first token through the proxy: streamed early, buffered, and the upstream's own.

Two real servers on 127.0.0.1: the fake upstream (:mod:`benchmarks.perf.fake_upstream`),
whose ``perf-drip`` streams send the first token at once and each further chunk
:data:`~benchmarks.perf.fake_upstream.DRIP_SECONDS` apart, as a model generates; and
``utilityguard serve`` in front of it (logprob confidence, the shipped cost model, enforce
mode; client overrides granted so that one proxy serves both kinds of request). In rounds,
one request of each kind is timed until its first non-empty content delta arrives:

* the upstream called directly (its own TTFT, the reference);
* through the proxy with ``x-utilityguard-cost: 0.5`` (threshold < 0 at C_R = 2: every p
  answers, so the proxy relays the stream as it arrives);
* through the proxy with ``x-utilityguard-cost: 20`` (threshold 0.86: the decision needs the
  whole reply, which is buffered; the fake's logprobs give p = 0.95, so it answers).

Target (issue 26): the early stream's median TTFT <= 1.5x the upstream's own. The buffered median
is reported beside it (it waits for the whole stream: about 7 x DRIP_SECONDS).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.proxy import servers

ROUNDS = 150
BODY = {"model": "perf-model", "stream": True,
        "messages": [{"role": "user", "content": "perf-drip: what is the capital of France?"}]}
#: header sets of the three kinds, timed in this order each round
KINDS = {"upstream": None, "early": {"x-utilityguard-cost": "0.5"},
         "buffered": {"x-utilityguard-cost": "20"}}
MAX_RATIO = 1.5


async def _ttft(client: httpx.AsyncClient, url: str, kind: str) -> float:
    """Seconds until the first ``data:`` event with non-empty content arrives (the rest of
    the stream is read); a proxied stream must say it went the way ``kind`` says."""
    t0 = time.perf_counter()
    first = None
    async with client.stream("POST", url, json=BODY, headers=KINDS[kind]) as r:
        r.raise_for_status()
        early = r.headers.get("x-utilityguard-stream") == "early"
        if kind != "upstream" and early != (kind == "early"):
            raise RuntimeError(f"the proxy did not stream a {kind} request as one")
        async for line in r.aiter_lines():
            if first is None and line.startswith("data: {"):
                choices = json.loads(line[6:]).get("choices") or []
                if choices and choices[0].get("delta", {}).get("content"):
                    first = time.perf_counter() - t0
            if line == "data: [DONE]":
                break
    if first is None:
        raise RuntimeError(f"no content arrived from {url}")
    return first


async def _measure(direct: str, proxied: str) -> dict[str, list[float]]:
    urls = {"upstream": direct, "early": proxied, "buffered": proxied}
    out: dict[str, list[float]] = {k: [] for k in KINDS}
    async with httpx.AsyncClient(timeout=30.0) as client:
        for kind in KINDS:  # warm up connections and the cost model
            for _ in range(5):
                await _ttft(client, urls[kind], kind)
        for _ in range(ROUNDS):
            for kind in KINDS:
                out[kind].append(await _ttft(client, urls[kind], kind))
    return out


def run() -> list[PerfResult]:
    env = {"UTILITYGUARD_ALLOW_CLIENT_OVERRIDES": "true"}
    with servers(workers=1, env=env) as (up, px):
        times = asyncio.run(_measure(f"{up}/chat/completions", f"{px}/chat/completions"))
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = med["upstream"]
    return [
        PerfResult("TTFT, early stream (every p answers): p50", med["early"], "s", ref,
                   med["early"] / ref, f"ratio <= {MAX_RATIO:g} (reference: the upstream's "
                   "own TTFT, p50)", med["early"] / ref <= MAX_RATIO),
        PerfResult("TTFT, buffered stream (p decides): p50", med["buffered"], "s", ref,
                   med["buffered"] / ref, "reported (reference: the upstream's own TTFT, "
                   "p50)", True),
        PerfResult("TTFT, buffered / early stream: p50", med["buffered"], "s", med["early"],
                   med["buffered"] / med["early"], "reported (reference: the early stream)",
                   True),
    ]
