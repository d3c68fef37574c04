"""Time to first token through the proxy: streamed early, buffered, and the floors.

Real servers on 127.0.0.1, one worker each (:mod:`benchmarks.perf.stack`): the fake upstream
(:mod:`benchmarks.perf.fake_upstream`), whose ``perf-drip`` streams send the first token at
once and each further chunk :data:`~benchmarks.perf.fake_upstream.DRIP_SECONDS` apart, as a
model generates; the bare relay (the floor: the same stack without the guard); the LiteLLM
proxy when installed; and ``utilityguard serve --confidence logprobs --policy smollm2`` (what
users run; client overrides granted so that one proxy serves both kinds of request). In
rounds, the kinds in an order rotated each round, one request of each kind is timed until
its first non-empty content delta arrives:

* the upstream called directly (its own TTFT, the reference), the relay and LiteLLM;
* through the guard with ``x-utilityguard-cost: 0.5`` (threshold < 0 at C_R = 2: every p
  answers, so the proxy relays the stream as it arrives);
* through the guard with ``x-utilityguard-cost: 20`` (threshold 0.86: the decision needs the
  whole reply, which is buffered; the fake's logprobs give p = 0.95, so it answers).

Target (issue 26): the early stream's median TTFT <= 1.5x the upstream's own; its ratios to
the relay's and LiteLLM's are reported beside it, as is the buffered stream (it waits for
the whole stream: about 7 x DRIP_SECONDS).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.stack import running

ROUNDS = 150
BODY = {"model": "perf-model", "stream": True,
        "messages": [{"role": "user", "content": "perf-drip: what is the capital of France?"}]}
#: what each kind is: the server it goes to, and the headers it sends
KINDS: dict[str, tuple[str, dict[str, str] | None]] = {
    "upstream": ("upstream", None), "relay": ("relay", None), "litellm": ("litellm", None),
    "early": ("policy", {"x-utilityguard-cost": "0.5"}),
    "buffered": ("policy", {"x-utilityguard-cost": "20"})}
MAX_RATIO = 1.5


async def _ttft(client: httpx.AsyncClient, url: str, kind: str) -> float:
    """Seconds until the first ``data:`` event with non-empty content arrives (the rest of
    the stream is read); a guarded stream must say it went the way ``kind`` says."""
    t0 = time.perf_counter()
    first = None
    async with client.stream("POST", url, json=BODY, headers=KINDS[kind][1]) as r:
        r.raise_for_status()
        early = r.headers.get("x-utilityguard-stream") == "early"
        if kind in ("early", "buffered") and early != (kind == "early"):
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


async def _measure(urls: dict[str, str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in urls}
    kinds = list(urls)
    async with httpx.AsyncClient(timeout=30.0) as client:
        for kind in kinds:  # warm up connections and the models
            for _ in range(5):
                await _ttft(client, urls[kind], kind)
        for r in range(ROUNDS):
            for kind in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                out[kind].append(await _ttft(client, urls[kind], kind))
    return out


def run() -> list[PerfResult]:
    env = {"UTILITYGUARD_ALLOW_CLIENT_OVERRIDES": "true"}
    with running(("relay", "litellm", "policy"), guard_env=env) as stack:
        urls = {k: f"{stack.urls[server]}/chat/completions"
                for k, (server, _) in KINDS.items() if server in stack.urls}
        times = asyncio.run(_measure(urls))
        skipped = dict(stack.skipped)
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = med["upstream"]
    out = [
        PerfResult("TTFT, early stream (every p answers): p50", med["early"], "s", ref,
                   med["early"] / ref, f"ratio <= {MAX_RATIO:g} (reference: the upstream's "
                   "own TTFT, p50)", med["early"] / ref <= MAX_RATIO),
        PerfResult("TTFT, bare relay: p50", med["relay"], "s", ref, med["relay"] / ref,
                   "reported: the floor (reference: the upstream's own TTFT, p50)", True),
        PerfResult("TTFT, early stream / bare relay: p50", med["early"], "s", med["relay"],
                   med["early"] / med["relay"], "reported (reference: the bare relay)", True),
    ]
    if "litellm" in med:
        out.append(PerfResult("TTFT, early stream / LiteLLM: p50", med["early"], "s",
                              med["litellm"], med["early"] / med["litellm"],
                              "reported (reference: LiteLLM 1.80.0)", True))
    for name, why in skipped.items():
        print(f"ttft: {name} skipped: {why}", file=sys.stderr)
    out += [
        PerfResult("TTFT, buffered stream (p decides): p50", med["buffered"], "s", ref,
                   med["buffered"] / ref, "reported (reference: the upstream's own TTFT, "
                   "p50)", True),
        PerfResult("TTFT, buffered / early stream: p50", med["buffered"], "s", med["early"],
                   med["buffered"] / med["early"], "reported (reference: the early stream)",
                   True),
    ]
    return out
