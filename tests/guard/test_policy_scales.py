"""A policy's scales: the cost scale (a strictly increasing map of the guard's price to
E[L | price]) and the answerability scale (alpha Platt-scaled for unseen kinds), each fitted
out of fold, kept by a saved policy and applied by the Guard on every pricing path."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from guard import Guard
from guard.cost_scale import CostScale, fit_cost_scale
from guard.exceptions import ConfigError
from guard.policy import POLICY_FILE, TrainingSet, fit_policy, load_policy, save_policy


class WordCost:
    """Price 9 for a text mentioning 'dose', 1.5 otherwise (one segment at a time)."""

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.array([9.0 if "dose" in t else 1.5 for t in texts])


HALF = CostScale((0.0, math.log(10.0)), (math.log(0.5), math.log(5.0)))  # c -> c / 2


def test_the_map_halves_between_its_knots_and_keeps_slope_one_beyond() -> None:
    assert HALF(4.0) == pytest.approx(2.0)
    assert HALF(0.1) == pytest.approx(0.05)  # below the first knot: scaled like it
    assert HALF(1000.0) == pytest.approx(500.0)  # above the last: never capped


def test_the_map_is_strictly_increasing_on_every_price() -> None:
    rng = np.random.default_rng(1)
    scale = fit_cost_scale(np.exp(rng.normal(1, 1, 300)), np.exp(rng.normal(0.5, 1, 300)))
    prices = np.sort(np.exp(rng.uniform(-8, 8, 2000)))
    assert (np.diff(scale.apply(prices)) > 0).all()


def test_fitting_on_prices_twice_too_high_recovers_the_costs() -> None:
    rng = np.random.default_rng(0)
    cost = np.exp(rng.normal(0.7, 0.8, 600))
    scale = fit_cost_scale(2.0 * cost, cost)
    mid = np.quantile(cost, [0.25, 0.5, 0.75])
    assert scale.apply(2.0 * mid) == pytest.approx(mid, rel=0.15)


@pytest.mark.parametrize("data", [
    {"kind": "monotone log-log", "log_price": [0.0, 1.0], "log_cost": [1.0, 0.5]},
    {"kind": "monotone log-log", "log_price": [0.0, 0.0], "log_cost": [0.0, 1.0]},
    {"kind": "monotone log-log", "log_price": ["x"], "log_cost": [0.0]},
    {"kind": "monotone log-log", "log_price": [0.0], "log_cost": [float("nan")]},
    {"kind": "code", "log_price": [0.0], "log_cost": [0.0]},
    [0.0, 1.0],
])
def test_a_hostile_or_broken_scale_is_refused(data: object) -> None:
    with pytest.raises(ConfigError):
        CostScale.from_data(data)


def test_too_few_prices_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least"):
        fit_cost_scale([1.0, 2.0], [1.0, 2.0])


def test_the_guard_scales_one_text_and_a_request_alike_and_keeps_the_costliest_segment(
) -> None:
    g = Guard(WordCost(), policy=None, cost_scale=HALF)
    assert g.price("What is the dose?").cost == pytest.approx(4.5)
    # a request carrying the question is priced at least as high as the question alone
    request = ["Be brief.", "Thanks for the help. What is the dose?"]
    carried = g.price(request)
    assert carried.cost == pytest.approx(4.5)
    bare = Guard(WordCost(), policy=None)
    assert "dose" in str(carried.question) and carried.question == bare.price(request).question
    assert g.decide("What is the dose?", "5 mg", confidence=0.6).cost == pytest.approx(4.5)
    assert bare.price("What is the dose?").cost == 9.0



@pytest.mark.parametrize("first", ["cost_model", "query_features", "nothing"])
def test_the_shipped_cost_scale_holds_whatever_is_read_first(first: str) -> None:
    # the default guard prices with the shipped default policy's cost scale, also when a
    # caller reads its cost model (or a text's features) before its first price; reading the
    # lazily loaded cost model first used to drop the scale for good (1.0 instead of 0.62)
    q = "How tall is the Statue of Liberty in feet?"
    expected = Guard.from_policy("default").price(q).cost
    g = Guard()
    if first == "cost_model":
        raw = float(g.cost_model.predict([q])[0])
        assert raw != pytest.approx(expected)  # the scale matters for this question
    elif first == "query_features":
        g.query_features(q)
    assert g.price(q).cost == pytest.approx(expected)
    assert g.cost_scale is not None

def _training(n: int = 200) -> TrainingSet:
    rng = np.random.default_rng(0)
    answerable = np.arange(n) % 2 == 0
    questions = [f"What is the dose of drug {i}?" if a else f"What will stock {i} do?"
                 for i, a in enumerate(answerable)]
    signal = rng.normal(-0.5, 0.3, n).clip(max=0.0)
    correct = answerable & (rng.random(n) < np.exp(signal))
    cost = np.where(answerable, 6.0, 1.5) * np.exp(rng.normal(0, 0.3, n))
    return TrainingSet(questions, answerable, cost, np.ones(n, dtype=bool), correct, signal,
                       [f"g{i % 5}" for i in range(n)])


def test_a_policy_fitted_with_a_scale_saves_loads_and_decides_with_it(tmp_path: Path) -> None:
    from cost_models.regressor import CostRegressor

    train = _training()
    like = CostRegressor(kind="affix-ridge")
    policy = fit_policy(train, signal="logprob_mean", c_r=2.0, name="scaled",
                        refit_cost=like, cost_scale=True)
    assert policy.cost_scale is not None and policy.cost_scale.n == train.n
    save_policy(policy, tmp_path / "p")
    meta = json.loads((tmp_path / "p" / POLICY_FILE).read_text())
    assert meta["cost_scale"]["kind"] == "monotone log-log"
    assert "cost scale" in (tmp_path / "p" / "README.md").read_text()
    loaded = load_policy(tmp_path / "p")
    assert loaded.cost_scale == policy.cost_scale
    q = "What is the dose of drug 3?"
    raw = float(loaded.cost_model.predict([q])[0])  # type: ignore[union-attr]
    assert Guard.from_policy(loaded).price(q).cost == pytest.approx(policy.cost_scale(raw))


# --- the answerability scale (guard.alpha_scale) ---

from guard.alpha_scale import AlphaScale, fit_alpha_scale  # noqa: E402


def test_an_overconfident_alpha_is_pulled_towards_the_middle_and_order_is_kept() -> None:
    rng = np.random.default_rng(3)
    y = rng.random(3000) < 0.5
    # z = +-0.8 + N(0, 1) has logit P(answerable | z) = 1.6 z; reported as sigmoid(4 z)
    # it is 2.5 times too confident: the fitted slope is about 1.6 / 4 = 0.4
    z = np.where(y, 0.8, -0.8) + rng.normal(0, 1.0, y.size)
    scale = fit_alpha_scale(1 / (1 + np.exp(-4 * z)), y)
    assert 0.33 < scale.slope < 0.47
    assert scale(0.99) < 0.9 and scale(0.01) > 0.1
    grid = np.linspace(0.001, 0.999, 500)
    assert (np.diff(scale.apply(grid)) > 0).all()


@pytest.mark.parametrize("data", [
    {"kind": "platt", "slope": -1.0, "intercept": 0.0},  # would reverse the classifier
    {"kind": "platt", "slope": float("inf"), "intercept": 0.0},
    {"kind": "platt", "slope": "x", "intercept": 0.0},
    {"kind": "other", "slope": 1.0, "intercept": 0.0},
])
def test_a_hostile_answerability_scale_is_refused(data: object) -> None:
    with pytest.raises(ConfigError):
        AlphaScale.from_data(data)


class FixedAlpha:
    def predict_alpha(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.full(len(texts), 0.9)


def test_the_guard_scales_the_models_alpha_but_not_a_given_one() -> None:
    half = AlphaScale(slope=0.5, intercept=0.0)
    g = Guard(WordCost(), policy=None, answerability=FixedAlpha(), alpha_scale=half)
    want = 1 / (1 + math.exp(-0.5 * math.log(9.0)))  # 0.75
    assert g.price("What is the dose?").alpha == pytest.approx(want)
    assert g.price(["Hi.", "What is the dose?"]).alpha == pytest.approx(want)
    assert g.price("What is the dose?", alpha=0.9).alpha == 0.9


def test_a_policy_fitted_with_an_answerability_scale_keeps_it(tmp_path: Path) -> None:
    policy = fit_policy(_training(), signal="logprob_mean", c_r=2.0, name="a",
                        alpha_scale=True)
    assert policy.alpha_scale is not None and policy.alpha_scale.n == 200
    save_policy(policy, tmp_path / "p")
    loaded = load_policy(tmp_path / "p")
    assert loaded.alpha_scale == policy.alpha_scale
    q = "What is the dose of drug 3?"
    raw = float(loaded.answerability.predict_alpha([q])[0])  # type: ignore[union-attr]
    assert Guard.from_policy(loaded).price(q).alpha == pytest.approx(policy.alpha_scale(raw))
    assert "recalibrated for unseen kinds" in (tmp_path / "p" / "README.md").read_text()
