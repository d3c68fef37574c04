"""A buffered request is priced while the upstream answers it (:func:`guard.proxy.pipeline.
forwarded_while_priced`), and the decision is the one the stages make in order.

The order is checked as a fact, not a timing: the cost model below, asked about a question
holding :data:`MARK`, waits (at most :data:`WAIT_S`) until the fake upstream, which runs in its
own thread, has received that request. Had the proxy priced before sending, the upstream
would not have the request while the cost model waits, and the cost model would note it.
Run on both upstream transports (``.ci/run`` runs this directory on httpx's own transport too).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from tests.guard.proxy.conftest import FakeUpstream, KeywordCost

MARK = "overlapprobe"
WAIT_S = 5.0


class WaitingCost(KeywordCost):
    """:class:`KeywordCost`, waiting for the upstream to hold a request for a question with
    :data:`MARK` before pricing it; ``fail`` raises instead (after the wait)."""

    def __init__(self, fake: FakeUpstream, fail: bool = False, wait_s: float = WAIT_S) -> None:
        self.fake, self.fail, self.wait_s = fake, fail, wait_s
        self.seen: list[bool] = []  # per marked question: the upstream had it while pricing

    def _arrived(self) -> bool:  # a request of the running test only
        return any(MARK in str(r["body"].get("messages"))
                   for r in self.fake.requests[self.fake.test_start:])

    def predict(self, texts: Sequence[str]) -> Any:
        if any(MARK in t for t in texts):
            deadline = time.monotonic() + self.wait_s
            while not self._arrived() and time.monotonic() < deadline:
                time.sleep(0.002)
            self.seen.append(self._arrived())
            if self.fail:
                raise RuntimeError("the cost model failed")
        return np.array([self.cost(t) for t in texts])


def _ask(url: str, question: str, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": question}], **extra}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=20.0)


def _content(sse: str) -> str:
    """The text of a chat completion stream's deltas."""
    out = []
    for line in sse.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                out.append((choice.get("delta") or {}).get("content") or "")
    return "".join(out)


def _started(start_proxy: Any, cost: WaitingCost, **settings: Any) -> Any:
    """A proxy pricing with ``cost``, its pooled upstream connection open (one request
    answered): the overlap is for a connection in the pool, a new one is opened first."""
    served = start_proxy(cost_model=cost, **settings)
    assert _ask(served.url, "What is 6 x 7?").status_code == 200
    return served


def test_the_upstream_has_the_request_while_the_guard_prices(start_proxy: Any,
                                                               fake: FakeUpstream) -> None:
    cost = WaitingCost(fake)
    served = _started(start_proxy, cost)
    t0 = time.monotonic()
    r = _ask(served.url, f"What is the {MARK} dose?")
    assert r.status_code == 200, r.text
    assert cost.seen == [True]
    assert time.monotonic() - t0 < WAIT_S  # the cost model never waited out its bound
    # the decision is the rule's on the price the cost model gave: L = 20 ("dose"),
    # C_R = 2, threshold (20 - 2) / 21 = 0.857; the fake's tokens have p = exp(-0.1) = 0.905
    assert r.headers["x-utilityguard-cost"] == "20"
    assert abs(float(r.headers["x-utilityguard-threshold"]) - 18 / 21) < 1e-6
    assert r.headers["x-utilityguard-decision"] == "answer"
    assert r.json()["choices"][0]["message"]["content"] == "The answer is 42."


def test_a_buffered_stream_is_priced_while_forwarded(start_proxy: Any,
                                                      fake: FakeUpstream) -> None:
    cost = WaitingCost(fake)
    served = _started(start_proxy, cost, buffer_streams=True)
    r = _ask(served.url, f"What is the unsure {MARK} dose?", stream=True)
    assert r.status_code == 200, r.text
    assert cost.seen == [True]
    assert r.headers["x-utilityguard-decision"] == "refuse"  # p = exp(-2) < 0.857
    assert _content(r.text) and "42" not in _content(r.text)


def test_a_stream_is_priced_before_it_is_sent(start_proxy: Any, fake: FakeUpstream) -> None:
    """Whether a stream is relayed early, and what it sends, depend on the price: the upstream
    has nothing while the guard prices it (the cost model waits out its bound, then
    notes so)."""
    cost = WaitingCost(fake, wait_s=1.0)
    served = _started(start_proxy, cost)
    r = _ask(served.url, f"a cheap question {MARK}", stream=True)
    assert r.status_code == 200, r.text
    assert cost.seen == [False]
    # L = 0.5 <= C_R: every p answers
    assert r.headers.get("x-utilityguard-stream") == "early", dict(r.headers)
    assert "logprobs" not in fake.last_sent()["body"]  # sent as the client sent it


def test_a_pricing_failure_ends_the_request_and_the_proxy_serves_on(
        start_proxy: Any, fake: FakeUpstream) -> None:
    cost = WaitingCost(fake, fail=True)
    served = _started(start_proxy, cost)
    r = _ask(served.url, f"What is 6 x 7 {MARK}?")
    assert cost.seen == [True]
    assert r.status_code == 500
    assert r.json()["error"]["code"] == "internal_error"
    assert "42" not in r.text  # nothing of the upstream's reply reaches the client
    again = _ask(served.url, "What is 6 x 7?")
    assert again.status_code == 200
    assert again.headers["x-utilityguard-decision"] == "answer"


def test_an_upstream_failure_while_pricing_is_answered_as_before(
        start_proxy: Any, fake: FakeUpstream) -> None:
    cost = WaitingCost(fake)
    served = _started(start_proxy, cost)
    r = _ask(served.url, f"What is 6 x 7 {MARK} status-503?")
    assert cost.seen == [True]
    assert r.status_code == 502, r.text
    assert r.json()["error"]["code"] == "upstream_error"
