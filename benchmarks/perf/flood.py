"""A huge request does not stall the proxy (issue 34): a 1 MB body of short sentences is
answered or rejected within 1 s while ``/healthz`` keeps answering within 100 ms; so are a body
of one 900 KB token and one of a 900 KB sentence without a break (slow to read: they are
refused by ``--max-text-chars`` before they are read).

A real ``serve`` (one worker, the shipped policy, cost model and request detector) in front of
the fast fake upstream. One client sends the body (about 110,000 four-word sentences, under
the default 1 MiB body limit); meanwhile another polls ``/healthz`` every 10 ms. Reported: the
body's response time and status, and the slowest ``/healthz`` answer while it was in flight,
against the time ``/healthz`` takes on an idle proxy (measured just before, side by side).
"""

from __future__ import annotations

import json
import random
import statistics
import string
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


def unbroken_bodies() -> list[tuple[str, bytes]]:
    """Bodies of one unbroken text of about 900 KB: a token (base64-like) and a sentence of
    random letter words with no break."""
    rng = random.Random(0)
    token = "".join(rng.choice(string.ascii_letters + string.digits + "+/")
                    for _ in range(900_000))
    words: list[str] = []
    size = 0
    while size < 900_000:
        w = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
        words.append(w)
        size += len(w) + 1
    return [(label, json.dumps({"model": "m", "messages": [
        {"role": "user", "content": text}]}).encode())
        for label, text in (("one 900 KB token", token),
                            ("one 900 KB sentence", " ".join(words)))]


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
        timed: list[tuple[str, int, float]] = []
        with httpx.Client(timeout=30.0) as c:
            for label, b in [("1 MB body of short sentences", body), *unbroken_bodies()]:
                t0 = time.perf_counter()
                r = c.post(url + "/chat/completions", content=b,
                           headers={"content-type": "application/json"})
                timed.append((label, r.status_code, time.perf_counter() - t0))
        time.sleep(0.1)
        stop.set()
        poller.join()
    worst = max(polls) if polls else float("inf")
    return [
        *(PerfResult(f"{label}: answered ({status}) in", took, "s", MAX_BODY_S,
                     took / MAX_BODY_S, f"<= {MAX_BODY_S:g} s", took <= MAX_BODY_S)
          for label, status, took in timed),
        PerfResult(f"/healthz meanwhile: slowest of {len(polls)}", worst, "s",
                   statistics.median(idle), worst / statistics.median(idle),
                   f"<= {1e3 * MAX_HEALTH_S:.0f} ms", worst <= MAX_HEALTH_S),
    ]
