"""The online C_R controller on replayed decisions: it converges to the offline C_R* and one
flooding key cannot push it past what its capped share allows (a share below the budget:
issue 36), nor faster than its per-minute bound."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError
from guard.refusal_budget import (
    BudgetConfig,
    LocalLedger,
    RefusalBudget,
    default_key_share,
    key_weights,
    shares,
    window_rate,
)
from policies import answered_at, solve_budget


class Ticks:
    """A clock advancing ``dt`` seconds each time it is read (steps are ``dt`` apart)."""

    def __init__(self, dt: float = 60.0) -> None:
        self.now, self.dt = 1_000_000.0, dt

    def __call__(self) -> float:
        self.now += self.dt
        return self.now


def controller(config: BudgetConfig, c_r: float, dt: float = 60.0, **kw: object
               ) -> RefusalBudget:
    """A controller whose steps are ``dt`` seconds apart (60: only --budget-max-step binds)."""
    return RefusalBudget(config, c_r, clock=Ticks(dt), **kw)  # type: ignore[arg-type]


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


def _record(alpha: float, answered: bool, c_r: float, *, decision: str | None = None,
            mode: str = "enforce") -> DecisionRecord:
    return DecisionRecord(request_id="r", cost=2.0, cost_source="model", p=0.5,
                          p_source="calibrated", threshold=0.5, c_r=c_r,
                          expected_utility_answer=None, expected_utility_refuse=-1.0,
                          decision=decision or ("answer" if answered else "refuse"),
                          mode=mode, latency_ms=0.0, alpha=alpha)  # type: ignore[arg-type]


def _decide(ctl: RefusalBudget, t: Traffic, i: int, key: str) -> None:
    answered = bool(answered_at(t.p[i:i + 1], t.cost[i:i + 1], ctl.c_r,
                                alpha=t.alpha[i:i + 1])[0])
    ctl.observe(_record(float(t.alpha[i]), answered, ctl.c_r), key)


def _offline(t: Traffic, rate: float) -> float:
    return solve_budget(t.p, t.cost, rate * t.alpha.sum(), alpha=t.alpha, weight=t.alpha).c_r


def _order(t: Traffic, passes: int, seed: int = 0) -> Iterator[int]:
    rng = np.random.default_rng(seed)
    for _ in range(passes):
        yield from rng.permutation(t.p.size).tolist()


@pytest.mark.parametrize("rate", [0.2, 0.35])
def test_the_controller_converges_to_the_budget(traffic: Traffic, rate: float) -> None:
    ctl = controller(BudgetConfig(rate=rate, window=100, c_r_max=64.0, key_share=0.05),
                     c_r=2.0)  # 20 keys at 0.05: the shares are whole, nobody capped
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
    cfg = BudgetConfig(rate=0.05, window=40, c_r_min=1.0, c_r_max=6.0, max_step=0.25,
                       key_share=0.04)
    ctl = controller(cfg, c_r=100.0)  # a start outside the bounds is clipped
    assert ctl.c_r == 6.0
    last = ctl.c_r
    for k, i in enumerate(_order(traffic, 1)):
        _decide(ctl, traffic, i, f"k{k % 40}")  # enough keys for a 0.04 share to be whole
        assert 1.0 <= ctl.c_r <= 6.0
        assert abs(ctl.c_r - last) <= 0.25 + 1e-12
        last = ctl.c_r
    assert ctl.c_r == 6.0  # 5% is out of reach here: held at the operator's bound


def test_too_few_keys_cannot_raise_the_price() -> None:
    """With fewer keys than 1 / share, the weight no key holds counts as refusing nothing:
    one key refused every time moves the estimate to its share, below the budget."""
    ctl = controller(BudgetConfig(rate=0.05, window=40), c_r=3.0)
    for _ in range(400):
        ctl.observe(_record(1.0, False, ctl.c_r), "only")
    assert ctl.estimate == pytest.approx(ctl.config.share) and ctl.c_r == 0.0


def _flooded(t: Traffic, share: float) -> tuple[list[float], list[float]]:
    """Ten honest keys replaying the traffic, one key sending three times as many requests
    as all of them together, every one refused at any price (the model's own refusals of
    questions that look answerable). Returns the prices and the honest keys' own rates."""
    rate = 0.3
    ctl = controller(BudgetConfig(rate=rate, window=200, key_share=share), c_r=2.0)
    prices, honest = [], []
    for k, i in enumerate(_order(t, 2, seed=1)):
        _decide(ctl, t, i, f"honest{k % 10}")
        for _ in range(3):
            ctl.observe(_record(0.9, False, ctl.c_r), "flood")
        if k % 10 == 0:
            prices.append(ctl.c_r)
            seen = [s for s in ctl.ledger.window(200) if s.key != "flood"]
            honest.append(sum(s.alpha for s in seen if s.refused) / sum(s.alpha for s in seen))
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


def test_a_share_at_the_budget_is_refused_and_why() -> None:
    """A key weighing ``s >= budget`` keeps the estimate at ``s`` or above on its own: the
    takeover of issue 36 (share 0.1, budget 0.05: C_R 2 -> 60.5)."""
    with pytest.raises(ConfigError, match="must be in \\(0, --refusal-budget\\)"):
        BudgetConfig(rate=0.05, key_share=0.1)
    # the arithmetic behind it: ten keys at share 0.1, nine never refused, one always
    from guard.refusal_budget import Seen

    seen = [Seen(i, f"k{i % 10}", 1.0, i % 10 == 0) for i in range(200)]
    assert window_rate(seen, 0.1)[0] == pytest.approx(0.1)  # > 0.05 whatever C_R does
    assert window_rate(seen, default_key_share(0.05))[0] == pytest.approx(0.005)


@pytest.mark.parametrize("honest_keys", [9, 40])
def test_the_takeover_of_issue_36_does_not_move_the_price(honest_keys: int) -> None:
    """Honest keys refused less than the budget at any price (the controller settles at its
    lower bound); one key floods requests refused until C_R is huge. With the default share
    the price stays where the honest traffic puts it."""
    ctl = controller(BudgetConfig(rate=0.05, window=200, c_r_max=64.0), c_r=2.0)
    rng = np.random.default_rng(5)
    for k in range(6000):
        if k % 4 == 0:  # a quarter of the traffic is honest: refused 1% of the time
            ctl.observe(_record(0.9, rng.random() > 0.01, ctl.c_r), f"h{k % honest_keys}")
        else:
            ctl.observe(_record(0.9, ctl.c_r >= 17.2, ctl.c_r), "flood")
    assert ctl.c_r <= 2.0 and max(shares(ctl.ledger.window(200), ctl.config.share).values()
                                  ) <= ctl.config.share + 1e-9


def test_what_is_counted_is_what_was_delivered() -> None:
    """A reply that opens like a refusal is delivered whole (passthrough_refusal): counted as
    answered; shadow-mode decisions are not counted at all."""
    ctl = controller(BudgetConfig(rate=0.1, window=8, key_share=0.05), c_r=2.0)
    for k in range(8):
        ctl.observe(_record(1.0, False, 2.0, decision="passthrough_refusal"), f"k{k}")
        ctl.observe(_record(1.0, False, 2.0, mode="shadow"), f"k{k}")
    seen = ctl.ledger.window(100)
    assert len(seen) == 8 and not any(s.refused for s in seen)


def test_the_price_moves_at_most_max_rate_per_minute() -> None:
    """One decision every 10 ms, every one refused: C_R rises, but by no more than
    --budget-max-rate per minute of clock time (here 6 per minute over 60 s of traffic)."""
    ticks = Ticks(dt=0.0)
    ctl = RefusalBudget(BudgetConfig(rate=0.05, window=40, key_share=0.01, max_step=5.0),
                        c_r=2.0, clock=ticks)
    for k in range(6000):  # 6,000 decisions in 60 s
        ticks.now += 0.01
        ctl.observe(_record(1.0, False, ctl.c_r), f"k{k % 200}")
    assert ctl.updates > 100  # it stepped, every time as far as allowed
    assert ctl.c_r - 2.0 == pytest.approx(6.0, abs=0.05)


def test_two_processes_on_one_ledger_follow_one_price() -> None:
    """Two controllers (two replicas) reading one ledger: one window, one step sequence, one
    price; a step is taken once, by whichever claims it first."""
    ledger = LocalLedger(40)
    a = controller(BudgetConfig(rate=0.2, window=40, key_share=0.05), c_r=2.0, ledger=ledger)
    b = controller(BudgetConfig(rate=0.2, window=40, key_share=0.05), c_r=2.0, ledger=ledger)
    for k in range(400):
        ledger.add(f"k{k % 25}", 1.0, k % 2 == 0)  # both count into the one ledger
        (a if k % 2 else b).update()
    a.update(), b.update()
    assert a.c_r == b.c_r > 2.0 and a.updates == b.updates
    assert a.estimate == b.estimate == pytest.approx(0.5)


def test_key_weights_bound_every_share() -> None:
    rng = np.random.default_rng(0)
    for keys in (5, 25):
        for _ in range(50):
            counts = {f"k{i}": float(c) for i, c in enumerate(rng.integers(1, 500, keys))}
            counts["flood"] = 10_000.0
            w, total = key_weights(counts, 0.1)
            assert max(w.values()) <= 0.1 * total + 1e-6
            assert all(0 < w[k] <= counts[k] for k in counts)
            if keys * 0.1 >= 1:  # enough keys: the weights are the whole
                assert total == pytest.approx(sum(w.values()))


@pytest.mark.parametrize(("kwargs", "match"), [
    pytest.param({"rate": 0.0}, "--refusal-budget must be a rate", id="rate"),
    pytest.param({"rate": 0.1, "c_r_min": 5.0, "c_r_max": 1.0}, "--c-r-min", id="bounds"),
    pytest.param({"rate": 0.1, "window": 2}, "--budget-window", id="window"),
    pytest.param({"rate": 0.1, "key_share": 0.0}, "--budget-key-share", id="share"),
    pytest.param({"rate": 0.1, "max_step": 0.0}, "--budget-max-step", id="step"),
    pytest.param({"rate": 0.1, "key_share": 0.1}, "--budget-key-share", id="share-at-budget"),
    pytest.param({"rate": 0.1, "max_rate": float("inf")}, "--budget-max-rate", id="max-rate"),
])
def test_bad_config_is_named(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        BudgetConfig(**kwargs)  # type: ignore[arg-type]


def test_a_route_of_the_config_file_holds_its_own_budget() -> None:
    from guard.core import Guard
    from guard.proxy.build import refusal_budget
    from guard.proxy.routes import RouteConfig, route_settings
    from guard.settings import Settings

    base = Settings(_env_file=None, upstream="http://127.0.0.1:9/v1", api_keys="k1,k2",
                    audit_path="audit.db")  # type: ignore[call-arg]
    route = RouteConfig(model="small-*", upstream="http://127.0.0.1:9/v1",
                        refusal_budget=0.2, c_r_max=10.0)
    ctl = refusal_budget(route_settings(base, route), Guard(c_r=3.0))
    assert ctl is not None
    assert (ctl.config.rate, ctl.config.c_r_max, ctl.c_r) == (0.2, 10.0, 3.0)
    assert ctl.config.share == pytest.approx(0.02)  # the default: a tenth of the budget
    assert refusal_budget(base, Guard()) is None  # off unless the operator sets it


@pytest.mark.parametrize(("extra", "match"), [
    pytest.param({"audit_path": "a.db"}, "needs proxy keys", id="no-keys"),
    pytest.param({"api_keys": "k1"}, "needs an audit log", id="no-audit-log"),
    pytest.param({"api_keys": "k1", "audit_path": "a.db", "budget_key_share": 0.05},
                 "must be in", id="share-at-budget"),
])
def test_serve_refuses_a_budget_a_client_could_steer(extra: dict[str, object], match: str
                                                     ) -> None:
    from pydantic import ValidationError

    from guard.settings import Settings

    with pytest.raises(ValidationError, match=match):
        Settings(_env_file=None, upstream="http://127.0.0.1:9/v1", refusal_budget=0.05,
                 **extra)  # type: ignore[arg-type]
