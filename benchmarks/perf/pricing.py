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
    out = [_repeated_context(guard, questions)]
    for shape, requests in shapes.items():
        before = _p50(lambda m: guard.cost_model.predict([query_text(m)]), requests)
        after = _p50(lambda m: guard.price(m), requests)
        out.append(PerfResult(
            f"pricing every segment, {shape}: p50 (added {1e3 * (after - before):.2f} ms)",
            after, "s", before, after / before,
            f"added p50 <= {1e3 * MAX_ADDED_S:.0f} ms (reference: the last user message only)",
            after - before <= MAX_ADDED_S))
    return out


#: The repeated context of :func:`_repeated_context`: a system prompt of about 3,000 characters.
LONG_SYSTEM = " ".join(
    f"Rule {k}: answer in plain English, cite the help-centre article when one applies, keep "
    "replies under 150 words, never ask for a card number, and hand over to a human agent "
    "when the customer asks for one." for k in range(1, 17))
#: The repeated-context target: its p50 at most this many times the bare question's.
MAX_REPEAT_RATIO = 2.0


def _repeated_context(guard: Guard, questions: list[str]) -> PerfResult:
    """A 3,000-character system prompt and ten earlier turns repeated from one request to the
    next (a conversation), priced with the client's memo, against the bare question; side by
    side in one run (issue 34: within 2x)."""
    from guard.asking import Memo

    memo = Memo()
    turns = []
    for q in questions[:5]:
        turns += [{"role": "user", "content": q},
                  {"role": "assistant", "content": "Here is what I found about that."}]
    chats = [[{"role": "system", "content": LONG_SYSTEM}, *turns, {"role": "user", "content": q}]
             for q in questions[5:N + 1]]
    guard.price(chats[0], memo=memo)  # the first request of the conversation fills the memo
    bare = _p50(lambda q: guard.price(q), questions[5:N + 1])
    wrapped = _p50(lambda m: guard.price(m, memo=memo), chats)
    return PerfResult(
        f"pricing a {len(LONG_SYSTEM)}-char system prompt + 10 turns, repeated (memo): p50",
        wrapped, "s", bare, wrapped / bare,
        f"<= {MAX_REPEAT_RATIO:g}x the bare question's p50", wrapped <= MAX_REPEAT_RATIO * bare)
