"""``utilityguard budget`` on the shipped responses and on a real SQLite audit log."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import guard.cli
from benchmarks.bench.data import shipped_responses
from benchmarks.budget import BudgetItems, Target, default_policy, items_from_responses, solve
from cost_models.datasets import load_seed
from guard.decision_records import DecisionRecord
from guard.proxy.audit.schema import DECISIONS, FEEDBACK, decision_row
from guard.proxy.audit.sqlite import SQLiteStore
from tests.helpers import one_line_error, run_cli


@pytest.fixture(autouse=True)
def budget_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``budget`` entry point even when the installed metadata predates it."""
    real = getattr(guard.cli, "entry_points")  # noqa: B009 (not re-exported)

    def eps(group: str) -> list[EntryPoint]:
        out = list(real(group=group))
        if not any(e.name == "budget" for e in out):
            out.append(EntryPoint(name="budget", value="benchmarks.cli_budget:register",
                                  group=group))
        return out

    monkeypatch.setattr(guard.cli, "entry_points", eps)


@pytest.fixture(scope="module")
def shipped() -> Iterator[BudgetItems]:
    yield items_from_responses(load_seed(), shipped_responses(), default_policy())


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.2, 0.3, 0.45])
def test_the_realised_rate_meets_the_budget_within_one_item(shipped: BudgetItems,
                                                            rate: float) -> None:
    assert shipped.labelled.all()  # the seed set has answerability labels
    answerable = int(shipped.weight.sum())
    s = solve(shipped, Target(rate=rate), c_r_max=1000.0)
    refused = int(((~s.answer) & (shipped.weight > 0)).sum())  # counted by hand
    assert refused == s.refused
    assert rate * answerable - 1 < refused <= rate * answerable
    assert s.binding and s.feasible


def test_the_price_falls_as_the_budget_grows(shipped: BudgetItems) -> None:
    prices = [solve(shipped, Target(rate=r), c_r_max=1000.0).c_r
              for r in (0.05, 0.1, 0.2, 0.3, 0.45)]
    assert prices == sorted(prices, reverse=True)
    assert prices[0] > 2 * prices[-1]


def test_the_command_prints_c_r_and_its_intervals(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "budget", "--rate", "0.1", "--bootstrap", "4", "--json",
                             "--frontier")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["counting"].startswith("counted with the answerability labels")
    assert doc["unnecessary_refusal_rate"] <= 0.1
    lo, hi = doc["ci95"]["c_r"]
    assert lo <= hi and doc["c_r"] > 0
    rows = doc["frontier"]["rows"]
    assert [r["c_r"] for r in rows] == sorted((r["c_r"] for r in rows), reverse=True)
    assert [p["c_r"] for p in doc["frontier"]["paper"]][:3] == [0.5, 1.0, 2.0]


def _audit(path: Path, rows: list[tuple[DecisionRecord, dict[str, Any] | None]]) -> None:
    store = SQLiteStore(path)
    store.connect()
    store.insert(DECISIONS, [decision_row(r, ts=1.0, model="m", stream=False, query=None)
                             for r, _ in rows])
    store.insert(FEEDBACK, [FEEDBACK.row({"request_id": r.request_id, "ts": 2.0, **lab})
                            for r, lab in rows if lab is not None])
    store.close()


def _record(i: int, p: float, cost: float, alpha: float) -> DecisionRecord:
    thr = (cost + 1 - alpha * 3) / (1 + cost)
    return DecisionRecord(request_id=f"r{i}", cost=cost, cost_source="model", p=p,
                          p_source="calibrated", threshold=thr, c_r=2.0,
                          expected_utility_answer=p - (1 - p) * cost,
                          expected_utility_refuse=-2 * alpha + 1 - alpha,
                          decision="answer" if p >= thr else "refuse", mode="enforce",
                          latency_ms=1.0, alpha=alpha)


def test_an_audit_log_uses_labels_where_it_has_them(capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows: list[tuple[DecisionRecord, dict[str, Any] | None]] = []
    for i in range(60):
        rec = _record(i, float(rng.uniform()), float(rng.uniform(0.5, 10)),
                      float(rng.uniform(0.4, 1)))
        label = {"answerable": 1, "correct": int(rng.random() < 0.5), "cost": None} \
            if i % 2 == 0 else None
        rows.append((rec, label))
    _audit(tmp_path / "audit.db", rows)
    code, out, err = run_cli(capsys, "budget", "--audit", tmp_path / "audit.db",
                             "--count", "10", "--per", "60", "--bootstrap", "0", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "labels on 30 items, estimated as sum(alpha)" in doc["counting"]
    # by hand: labelled items weigh 1 when refused, the others their alpha
    weights = np.array([1.0 if lab else r.alpha for r, lab in rows])
    p = np.array([r.p for r, _ in rows])
    cost = np.array([r.cost for r, _ in rows])
    alpha = np.array([r.alpha for r, _ in rows])
    refused = p < (cost + 1 - alpha * (1 + doc["c_r"])) / (1 + cost) - 1e-9
    assert doc["unnecessary_refusals"] == pytest.approx(weights[refused].sum())
    assert doc["unnecessary_refusals"] <= 10 + 1e-9


@pytest.mark.parametrize(("argv", "match"), [
    pytest.param(["--rate", "0.1", "--count", "3"], "not both", id="both"),
    # issue 38: no arguments said "... not both"
    pytest.param([], r"^utilityguard: error: give the budget: --rate R \(at most R of the "
                 r"answerable requests refused, e\.g\. --rate 0\.05\) or --count K --per N "
                 r"\(at most K unnecessary refusals per N requests\)$", id="none"),
    pytest.param(["--rate", "1.5"], r"--rate must be a fraction in \[0, 1\]", id="rate"),
    pytest.param(["--count", "3"], "--count needs --per", id="per"),
    pytest.param(["--count", "30", "--per", "10"], r"--count must be in \[0, --per\]",
                 id="count"),
    pytest.param(["--rate", "0.1", "--audit", "/nonexistent/a.db"], "no such audit database",
                 id="audit"),
    pytest.param(["--rate", "0.1", "--policy", "nosuch"], "nosuch", id="policy"),
])
def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                               match: str) -> None:
    code, _, err = run_cli(capsys, "budget", *argv)
    assert code == 2
    assert re.search(match, one_line_error(err))
