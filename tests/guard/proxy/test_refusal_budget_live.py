"""``serve --refusal-budget`` on replayed traffic: real servers on 127.0.0.1 (the SmolLM2
replies replayed by :mod:`benchmarks.replay`, the proxy with the shipped smollm2 policy), the
official ``openai`` client, a real SQLite audit log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.bench.data import shipped_responses
from benchmarks.replay import replay_app
from cost_models.datasets import load_seed
from guard.proxy.app import create_app
from policies import solve_budget
from tests.guard.proxy.conftest import Served, openai_client, proxy_settings

KEYS = [f"sk-honest-{i}" for i in range(10)]
FLOOD_KEY = "sk-flood"


@pytest.fixture(scope="module")
def replayed() -> Iterator[tuple[Served, list[str], list[str]]]:
    """The replay upstream, the questions it knows in a fixed random order, and the
    answerable ones the model itself refused (refused at any price: a flood's material)."""
    items = {it.id: it for it in load_seed()}
    records = [json.loads(x) for x in shipped_responses().read_text().splitlines() if x]
    known = {items[r["id"]].question: r for r in records if r["id"] in items}
    rng = np.random.default_rng(0)
    questions = list(known)
    order = [questions[i] for i in rng.permutation(len(questions))]
    refused = [items[r["id"]].question for r in records
               if r["id"] in items and not r["answered"] and items[r["id"]].answerable]
    served = Served(replay_app(known))
    yield served, order, refused
    served.stop()


def _proxy(upstream: Served, audit: Path, **extra: Any) -> Served:
    # a replayed minute of traffic takes seconds here: the per-minute bound is lifted so that
    # the per-step bound is the one that binds (the per-minute bound has its own test)
    values: dict[str, Any] = {"budget_window": 40, "budget_max_step": 1.0,
                              "budget_max_rate": 6000.0, **extra}
    settings = proxy_settings(upstream.url, policy="smollm2", refusal_budget=0.3,
                              audit_path=audit, api_keys=",".join([*KEYS, FLOOD_KEY]),
                              read_timeout=10.0, **values)
    return Served(create_app(settings))


def _ask(client: Any, question: str) -> tuple[str, float]:
    raw = client.chat.completions.with_raw_response.create(
        model="replay", messages=[{"role": "user", "content": question}])
    return raw.headers["x-utilityguard-request-id"], float(raw.headers["x-utilityguard-c-r"])


def _rows(audit: Path) -> dict[str, tuple[float, float, str]]:
    with sqlite3.connect(audit) as db:
        return {rid: (alpha, c_r, dec) for rid, alpha, c_r, dec in
                db.execute("SELECT request_id, alpha, c_r, decision FROM decisions")}


def _solver_inputs(audit: Path, ids: set[str]) -> tuple[np.ndarray, ...]:
    """``p`` (NaN for the model's own refusal), cost and alpha of the decisions ``ids``."""
    with sqlite3.connect(audit) as db:
        got = [(np.nan if d == "passthrough_refusal" or p is None else p, c, a)
               for rid, p, c, a, d in db.execute(
                   "SELECT request_id, p, cost, alpha, decision FROM decisions") if rid in ids]
    return tuple(np.array(col, dtype=np.float64) for col in zip(*got, strict=True))


def test_the_proxy_holds_the_budget(replayed: tuple[Served, list[str], list[str]],
                                    tmp_path: Path) -> None:
    upstream, questions, _ = replayed
    # ten keys: a share cap above 1/10 leaves honest keys uncapped (docs/budget.md)
    proxy = _proxy(upstream, tmp_path / "audit.db", budget_key_share=0.2)
    clients = [openai_client(proxy, api_key=k) for k in KEYS]
    try:
        sent = [(_ask(clients[k % len(KEYS)], q)) for k, q in enumerate(questions[:720])]
        metrics = clients[0]._client.get(proxy.url + "/metrics").text
    finally:
        for c in clients:
            c.close()
        proxy.stop()  # flushes the audit log
    rows = _rows(tmp_path / "audit.db")
    assert all(rows[rid][1] == pytest.approx(c_r, rel=1e-5) for rid, c_r in sent)  # header = log
    prices = [c for _, c in sent]
    assert prices[0] == 2.0 and len(set(prices)) > 5  # it moved from the policy's C_R
    late = [rows[rid] for rid, _ in sent[360:]]
    # what the budget counts is the refusals delivered (the guard's; the model's own reply
    # is delivered whole)
    rate = sum(a for a, _, d in late if d == "refuse") / sum(a for a, _, _ in late)
    assert rate == pytest.approx(0.3, rel=0.10)  # the estimated rate tracks the budget
    assert "utilityguard_refusal_budget_c_r " in metrics
    assert "utilityguard_refusal_budget_target 0.3" in metrics


def test_a_flooding_key_stays_within_bounds(replayed: tuple[Served, list[str], list[str]],
                                            tmp_path: Path) -> None:
    upstream, questions, refused = replayed
    share, rate, top = 0.1, 0.3, 24.0
    proxy = _proxy(upstream, tmp_path / "audit.db", c_r_max=top, budget_key_share=share,
                   budget_window=100)
    honest = [openai_client(proxy, api_key=k) for k in KEYS]
    flood = openai_client(proxy, api_key=FLOOD_KEY)
    try:  # the flood sends as much as all honest keys together, refused at any price
        prices, honest_ids = [], []
        for k, q in enumerate(questions[:240]):
            rid, c_r = _ask(honest[k % len(KEYS)], q)
            honest_ids.append(rid)
            prices.append(c_r)
            prices.append(_ask(flood, refused[k % len(refused)])[1])
    finally:
        for c in [*honest, flood]:
            c.close()
        proxy.stop()
    assert top >= max(prices) and min(prices) >= 0.0
    # the estimate is at most (1 - share) r_honest + share: the flood can push the honest
    # traffic's rate down to (rate - share) / (1 - share), not further
    allowed = (rate - share) / (1 - share)
    rows = _rows(tmp_path / "audit.db")
    late = [rows[rid] for rid in honest_ids[120:]]
    honest_rate = sum(a for a, _, d in late if d == "refuse") / sum(a for a, _, _ in late)
    assert honest_rate >= 0.9 * allowed
    # in prices: the one at which the honest traffic alone meets that smaller budget (the
    # offline solver on the honest decisions); the time average sits above the price at the
    # average rate (the rate falls ever more slowly as C_R grows), hence the 25%
    p, cost, alpha = _solver_inputs(tmp_path / "audit.db", set(honest_ids))
    bound = solve_budget(p, cost, allowed * alpha.sum(), alpha=alpha, weight=alpha).c_r
    assert bound < top
    assert np.mean(prices[len(prices) // 2:]) <= bound * 1.25
