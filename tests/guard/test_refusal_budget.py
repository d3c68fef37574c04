"""The online C_R controller on replayed decisions: it converges to the offline C_R* and one
flooding key cannot push it past what its capped share allows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError
from guard.refusal_budget import BudgetConfig, RefusalBudget, capped_weights, key_id
from policies import answered_at, solve_budget


@dataclass
class Traffic:
    p: np.ndarray
    cost: np.ndarray
    alpha: np.ndarray


@pytest.fixture(scope="module")
def traffic() -> Traffic:
    """Synthetic decisions shaped like a weak model's: most answers unlikely to be right,
    costs log-normal around 2, answerability uncertain; 5% model refusals."""
    rng = np.random.default_rng(3)
    n = 3000
    p = rng.beta(2.0, 3.0, n)
    p[rng.random(n) < 0.05] = np.nan
    return Traffic(p, np.exp(rng.normal(np.log(2.0), 1.0, n)), rng.uniform(0.2, 1.0, n))


def _record(alpha: float, answered: bool, c_r: float) -> DecisionRecord:
    return DecisionRecord(request_id="r", cost=2.0, cost_source="model", p=0.5,
                          p_source="calibrated", threshold=0.5, c_r=c_r,
                          expected_utility_answer=None, expected_utility_refuse=-1.0,
                          decision="answer" if answered else "refuse", mode="enforce",
                          latency_ms=0.0, alpha=alpha)


def _decide(ctl: RefusalBudget, t: Traffic, i: int, key: str) -> None:
    answered = bool(answered_at(ctl.c_r, t.p[i:i + 1], t.cost[i:i + 1], t.alpha[i:i + 1])[0])
    ctl.observe(_record(float(t.alpha[i]), answered, ctl.c_r), key)


def _offline(t: Traffic, rate: float) -> float:
    return solve_budget(rate * t.alpha.sum(), t.p, t.cost, t.alpha, t.alpha).c_r


def _order(t: Traffic, passes: int, seed: int = 0) -> Iterator[int]:
    rng = np.random.default_rng(seed)
    for _ in range(passes):
        yield from rng.permutation(t.p.size).tolist()


@pytest.mark.parametrize("rate", [0.2, 0.35])
def test_the_controller_converges_to_the_budget(traffic: Traffic, rate: float) -> None:
    ctl = RefusalBudget(BudgetConfig(rate=rate, window=100, c_r_max=64.0), c_r=2.0)
    estimates, prices = [], []
    for k, i in enumerate(_order(traffic, 2)):
        _decide(ctl, traffic, i, f"key{k % 20}")
        if ctl.estimate is not None and k % 25 == 0:
            estimates.append(ctl.estimate)
            prices.append(ctl.c_r)
    late = slice(len(estimates) // 2, None)
    assert np.mean(estimates[late]) == pytest.approx(rate, rel=0.10)
    assert np.mean(prices[late]) == pytest.approx(_offline(traffic, rate), rel=0.25)


def test_prices_stay_in_bounds_and_steps_are_bounded(traffic: Traffic) -> None:
    cfg = BudgetConfig(rate=0.05, window=40, c_r_min=1.0, c_r_max=6.0, max_step=0.25)
    ctl = RefusalBudget(cfg, c_r=100.0)  # a start outside the bounds is clipped
    assert ctl.c_r == 6.0
    last = ctl.c_r
    for i in _order(traffic, 1):
        _decide(ctl, traffic, i, "k")
        assert 1.0 <= ctl.c_r <= 6.0
        assert abs(ctl.c_r - last) <= 0.25 + 1e-12
        last = ctl.c_r
    assert ctl.c_r == 6.0  # 5% is out of reach here: held at the operator's bound


def _flooded(t: Traffic, share: float) -> tuple[list[float], list[float]]:
    """Ten honest keys replaying the traffic, one key sending three times as many requests
    as all of them together, every one refused at any price (the model's own refusals of
    questions that look answerable). Returns the prices and the honest keys' own rates."""
    rate = 0.3
    ctl = RefusalBudget(BudgetConfig(rate=rate, window=200, key_share=share), c_r=2.0)
    prices, honest = [], []
    for k, i in enumerate(_order(t, 2, seed=1)):
        _decide(ctl, t, i, f"honest{k % 10}")
        for _ in range(3):
            ctl.observe(_record(0.9, False, ctl.c_r), "flood")
        if k % 10 == 0:
            prices.append(ctl.c_r)
            seen = [(a, r) for key, a, r in ctl._seen if key != "flood"]
            honest.append(sum(a for a, r in seen if r) / sum(a for a, _ in seen))
    return prices, honest


def test_one_key_moves_the_price_no_further_than_its_share_allows(traffic: Traffic) -> None:
    share, rate = 0.1, 0.3
    prices, honest = _flooded(traffic, share)
    allowed = (rate - share) / (1 - share)  # the estimate is (1 - s) r_honest + s at most
    late = slice(len(prices) // 2, None)
    # the honest traffic is still refused at the smaller budget its share leaves, not less
    assert np.mean(honest[late]) >= allowed * 0.9
    # and the price is the one the offline solver gives the honest traffic at that budget
    bound = _offline(traffic, allowed)
    assert _offline(traffic, rate) < bound
    assert np.mean(prices[late]) <= bound * 1.15
    assert max(prices) < 64.0


def test_without_the_cap_a_flood_drives_the_price_to_its_bound(traffic: Traffic) -> None:
    prices, _ = _flooded(traffic, 1.0)
    assert prices[-1] == 64.0


def test_capped_weights_bound_every_share() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        counts = {f"k{i}": float(c) for i, c in enumerate(rng.integers(1, 500, 25))}
        counts["flood"] = 10_000.0
        w = capped_weights(counts, 0.1)
        total = sum(w.values())
        assert max(w.values()) <= 0.1 * total + 1e-6
        assert all(0 < w[k] <= counts[k] for k in counts)


def test_keys_are_never_kept() -> None:
    assert "sk-secret" not in key_id(b"sk-secret")
    assert key_id(b"a") != key_id(b"b") and key_id(None) == "anonymous"


@pytest.mark.parametrize(("kwargs", "match"), [
    pytest.param({"rate": 0.0}, "--refusal-budget must be a rate", id="rate"),
    pytest.param({"rate": 0.1, "c_r_min": 5.0, "c_r_max": 1.0}, "--c-r-min", id="bounds"),
    pytest.param({"rate": 0.1, "window": 2}, "--budget-window", id="window"),
    pytest.param({"rate": 0.1, "key_share": 0.0}, "--budget-key-share", id="share"),
    pytest.param({"rate": 0.1, "max_step": 0.0}, "--budget-max-step", id="step"),
])
def test_bad_config_is_named(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        BudgetConfig(**kwargs)  # type: ignore[arg-type]


def test_a_route_of_the_config_file_holds_its_own_budget() -> None:
    from guard.core import Guard
    from guard.proxy.build import refusal_budget
    from guard.proxy.routes import RouteConfig, route_settings
    from guard.settings import Settings

    base = Settings(_env_file=None, upstream="http://127.0.0.1:9/v1")  # type: ignore[call-arg]
    route = RouteConfig(model="small-*", upstream="http://127.0.0.1:9/v1",
                        refusal_budget=0.2, c_r_max=10.0)
    ctl = refusal_budget(route_settings(base, route), Guard(c_r=3.0))
    assert ctl is not None
    assert (ctl.config.rate, ctl.config.c_r_max, ctl.c_r) == (0.2, 10.0, 3.0)
    assert refusal_budget(base, Guard()) is None  # off unless the operator sets it
