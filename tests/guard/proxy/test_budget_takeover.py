"""The refusal-budget takeover of issue 36 (item 1), on a real proxy on 127.0.0.1.

``serve --refusal-budget 0.05`` with nine honest keys (refused less than the budget at any
price: the controller settles low) and a key that floods requests the guard refuses until
``C_R`` is huge. The fake upstream prices a question with "dose" at L = 20 and answers
"unsure" with p = 0.135, refused while ``(20 - C_R) / 21 > 0.135``, i.e. until C_R = 17.2. On
the old code the flood drove ``C_R`` up a step at a time (its key held a tenth of the window,
more than the budget) until every honest client's costly "unsure" question was answered;
here the flood cannot lift the price, the honest probe stays refused 20 times out of 20.
The flags are the ones both versions have, so the first test runs unchanged on the old code.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.guard.proxy.conftest import Served

HONEST = [f"sk-honest-{i}" for i in range(9)]
FLOOD = [f"sk-flood-{i}" for i in range(5)]
PROBE = "What is the maximum daily dose of acetaminophen? unsure"


def _ask(c: httpx.Client, key: str, question: str) -> httpx.Response:
    r = c.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
               json={"model": "m", "messages": [{"role": "user", "content": question}]})
    assert r.status_code == 200, r.text
    return r


def _takeover(served: Served, flood_keys: list[str], rounds: int = 220) -> list[float]:
    """Three flood requests for each honest one; the prices the headers showed."""
    prices = []
    with httpx.Client(base_url=served.url, timeout=10) as c:
        for k in range(rounds):
            prices.append(float(_ask(c, HONEST[k % len(HONEST)], f"What is {k} + 2? sure")
                                .headers["x-utilityguard-c-r"]))
            for j in range(3):
                key = flood_keys[(3 * k + j) % len(flood_keys)]
                prices.append(float(_ask(c, key, f"What dose of drug {k}-{j}? unsure")
                                    .headers["x-utilityguard-c-r"]))
    return prices


def _probe(served: Served) -> list[str]:
    with httpx.Client(base_url=served.url, timeout=10) as c:
        return [_ask(c, HONEST[i % len(HONEST)], PROBE).headers["x-utilityguard-decision"]
                for i in range(20)]


@pytest.fixture
def budgeted(start_proxy: Callable[..., Served], tmp_path: Path) -> Callable[..., Served]:
    def start(**extra: Any) -> Served:
        return start_proxy(refusal_budget=0.05, budget_window=40, audit_path=tmp_path / "a.db",
                           api_keys=[*HONEST, *FLOOD], **extra)
    return start


def test_one_flooding_key_cannot_take_the_budget_over(budgeted: Callable[..., Served]) -> None:
    served = budgeted()
    prices = _takeover(served, FLOOD[:1])
    assert max(prices) <= prices[0] == 2.0  # the price never rose above where it started
    assert _probe(served) == ["refuse"] * 20


def test_it_is_the_share_not_the_speed_limit_that_holds(
        budgeted: Callable[..., Served], tmp_path: Path) -> None:
    """With the per-minute bound lifted the flood still cannot lift the price: its key weighs
    at most a tenth of the budget. Five flood keys together weigh half of it."""
    served = budgeted(budget_max_rate=6000.0)
    prices = _takeover(served, FLOOD)
    with sqlite3.connect(tmp_path / "a.db") as db:  # the steps of the takeover
        steps = db.execute("SELECT count(*), max(estimate) FROM budget_steps").fetchone()
    assert max(prices) <= 2.0 and _probe(served) == ["refuse"] * 20
    assert steps[0] > 20  # the controller did step (downwards: the estimate is low)
    assert steps[1] <= 5 * 0.005 + 1e-9  # five flood keys at their cap, the honest never


def test_a_reply_opening_like_a_refusal_is_not_counted_as_one(
        budgeted: Callable[..., Served], tmp_path: Path) -> None:
    """The flood's replies open like a refusal and are delivered whole (the guard would have
    answered): they are answers, not refusals, for the budget."""
    served = budgeted()
    with httpx.Client(base_url=served.url, timeout=10) as c:
        decisions = {_ask(c, FLOOD[0], f"What is {k} + 1? self-refuse sure")
                     .headers["x-utilityguard-decision"] for k in range(60)}
    assert decisions == {"passthrough_refusal"}
    served.stop()
    with sqlite3.connect(tmp_path / "a.db") as db:
        estimates = [e for (e,) in db.execute("SELECT estimate FROM budget_steps")]
    assert estimates and max(estimates) == 0.0
