"""What pricing every question segment of a request costs (docs/security.md).

Side by side in one run, with the shipped cost model, on seed-set questions:

* **before**: the old rule, one ``predict`` of the final user message (what the guard priced
  until issue 20);
* **after**: :meth:`guard.Guard.price` of every text of the request
  (what it asks, :mod:`guard.asking`): every segment in one batch call.

Two request shapes: the question alone (one user turn), and a chat of four messages (a
system prompt, an earlier turn, the model's reply, the question). Reported: the p50 of
each and the added p50 (after - before); the target bounds what the rule may add per
request.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.perf._common import PerfResult
from cost_models.datasets import load_seed
from guard import Guard
from guard.messages import query_text

N = 300
#: The most the segment rule may add to the p50 of pricing one request, in seconds.
MAX_ADDED_S = 0.010
SYSTEM = "You are a helpful assistant. Answer briefly and say when you are unsure."


def _p50(fn: Callable[[Any], object], items: list[Any]) -> float:
    times = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _chat(q: str, earlier: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": earlier},
            {"role": "assistant", "content": "Here is what I know about that."},
            {"role": "user", "content": q}]


def run() -> list[PerfResult]:
    questions = [it.question for it in load_seed()][:N + 1]
    guard = Guard()
    guard.price("warm-up")
    shapes = {"one user turn": [[{"role": "user", "content": q}] for q in questions[1:]],
              "four-message chat": [_chat(q, e) for q, e in zip(questions[1:], questions[:-1],
                                                                  strict=True)]}
    out = []
    for shape, requests in shapes.items():
        before = _p50(lambda m: guard.cost_model.predict([query_text(m)]), requests)
        after = _p50(lambda m: guard.price(m), requests)
        out.append(PerfResult(
            f"pricing every segment, {shape}: p50 (added {1e3 * (after - before):.2f} ms)",
            after, "s", before, after / before,
            f"added p50 <= {1e3 * MAX_ADDED_S:.0f} ms (reference: the last user message only)",
            after - before <= MAX_ADDED_S))
    return out
