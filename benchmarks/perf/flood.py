"""A huge request does not stall the proxy (issue 34): a 1 MB body of short sentences is
answered or rejected within 1 s while ``/healthz`` keeps answering within 100 ms.

A real ``serve`` (one worker, the shipped policy, cost model and request detector) in front of
the fast fake upstream. One client sends the body (about 110,000 four-word sentences, under
the default 1 MiB body limit); meanwhile another polls ``/healthz`` every 10 ms. Reported: the
body's response time and status, and the slowest ``/healthz`` answer while it was in flight,
against the time ``/healthz`` takes on an idle proxy (measured just before, side by side).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from contextlib import ExitStack

import httpx

from benchmarks.perf._common import PerfResult
from benchmarks.perf.stack import base_env, start_guard, start_upstream

#: The body's size target and the limits checked.
BODY_BYTES = 1_000_000
MAX_BODY_S = 1.0
MAX_HEALTH_S = 0.100


def flood_body() -> bytes:
    """A chat request whose one user message is short sentences, up to :data:`BODY_BYTES`."""
    sentences = []
    size = 0
    k = 0
    while size < BODY_BYTES - 200:
        s = f"Note {k} is here. "
        sentences.append(s)
        size += len(s)
        k += 1
    body = {"model": "m", "messages": [{"role": "user", "content": "".join(sentences)}]}
    return json.dumps(body).encode()


def _poll(base: str, stop: threading.Event, out: list[float]) -> None:
    with httpx.Client(timeout=5.0) as c:
        while not stop.is_set():
            t0 = time.perf_counter()
            c.get(base + "/healthz")
            out.append(time.perf_counter() - t0)
            time.sleep(0.01)


def run() -> list[PerfResult]:
    with ExitStack() as stack:
        env = base_env()
        upstream, _ = start_upstream(stack, env)
        url, _ = start_guard(stack, upstream, [], env)
        base = url.removesuffix("/v1")
        with httpx.Client(timeout=5.0) as c:
            idle = []
            for _ in range(50):
                t0 = time.perf_counter()
                c.get(base + "/healthz")
                idle.append(time.perf_counter() - t0)
        body = flood_body()
        stop = threading.Event()
        polls: list[float] = []
        poller = threading.Thread(target=_poll, args=(base, stop, polls))
        poller.start()
        time.sleep(0.1)
        t0 = time.perf_counter()
        with httpx.Client(timeout=30.0) as c:
            r = c.post(url + "/chat/completions", content=body,
                       headers={"content-type": "application/json"})
        took = time.perf_counter() - t0
        time.sleep(0.1)
        stop.set()
        poller.join()
    worst = max(polls) if polls else float("inf")
    return [
        PerfResult(f"1 MB body of short sentences: answered ({r.status_code}) in", took, "s",
                   MAX_BODY_S, took / MAX_BODY_S, f"<= {MAX_BODY_S:g} s", took <= MAX_BODY_S),
        PerfResult(f"/healthz meanwhile: slowest of {len(polls)}", worst, "s",
                   statistics.median(idle), worst / statistics.median(idle),
                   f"<= {1e3 * MAX_HEALTH_S:.0f} ms", worst <= MAX_HEALTH_S),
    ]
