"""The decision rule: answer iff p >= (L - C_R) / (1 + L) (UtilityBench Theorem 1(ii))."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from policies import (
    answer_threshold,
    expected_cost_lognormal,
    expected_utility,
    refusal_expected_utility,
    should_answer,
)

probs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
costs = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
refusal_costs = st.floats(min_value=0.0, max_value=1e3, allow_nan=False)


@pytest.mark.parametrize(
    ("p", "cost", "c_r", "expected"),
    [
        pytest.param(0.9, 1.0, 2.0, True, id="cheap-error-confident"),
        pytest.param(0.0, 1.0, 2.0, True, id="cheap-error-always-answer"),
        pytest.param(0.0, 2.0, 2.0, True, id="L-equals-C_R-threshold-0"),
        pytest.param(0.5, 20.0, 2.0, False, id="costly-error-unsure"),
        pytest.param(0.86, 20.0, 2.0, True, id="costly-error-above-18/21"),
        pytest.param(0.85, 20.0, 2.0, False, id="costly-error-below-18/21"),
        pytest.param(0.99, 1000.0, 0.0, False, id="free-refusal-huge-cost"),
        pytest.param(1.0, 1000.0, 0.0, True, id="certain-always-answer"),
        pytest.param(0.5, 3.0, 1.0, True, id="equality-0.5-answers"),
        pytest.param(0.75, 3.0, 0.0, True, id="equality-0.75-answers"),
        pytest.param(0.5, 1.0, 0.0, True, id="equality-riskeval-lambda-1"),
        pytest.param(np.nextafter(0.5, 0.0), 3.0, 1.0, False, id="just-below-equality"),
    ],
)
def test_decision_table(p: float, cost: float, c_r: float, expected: bool) -> None:
    assert should_answer(p, cost, c_r) is expected


@given(cost=costs, c_r=refusal_costs)
def test_exact_threshold_answers(cost: float, c_r: float) -> None:
    """At p == threshold both actions are optimal; the rule answers."""
    thr = answer_threshold(cost, c_r)
    assume(0.0 <= thr <= 1.0)
    assert should_answer(thr, cost, c_r) is True
    below = np.nextafter(thr, -1.0)
    assume(below >= 0.0)
    assert should_answer(below, cost, c_r) is False


def test_dense_grid_matches_the_paper_formula() -> None:
    p = np.linspace(0.0, 1.0, 401)[:, None, None]
    cost = np.concatenate((np.geomspace(0.01, 100.0, 61), [1.0, 2.0, 3.0, 7.0, 8.0, 64.0]))
    cost = cost[None, :, None]
    c_r = np.array([0.0, 0.5, 1.0, 2.0, 8.0, 64.0])[None, None, :]
    got = should_answer(p, cost, c_r)
    expected = p >= (cost - c_r) / (1.0 + cost)
    assert got.shape == expected.shape == (401, 67, 6)
    np.testing.assert_array_equal(got, expected)


@given(p=probs, cost=costs, c_r=refusal_costs)
def test_rule_is_the_expected_utility_comparison(p: float, cost: float, c_r: float) -> None:
    """q = p - (1 - p) L >= -C_R  iff  answer (away from rounding at equality)."""
    q = expected_utility(p, cost)
    assume(abs(q + c_r) > 1e-9 * (1.0 + cost + c_r))
    assert should_answer(p, cost, c_r) is (q >= -c_r)


@given(p=probs, cost=costs, c_r=refusal_costs)
def test_alpha_one_is_the_papers_rule(p: float, cost: float, c_r: float) -> None:
    assert answer_threshold(cost, c_r, alpha=1.0) == (cost - c_r) / (1.0 + cost)
    assert should_answer(p, cost, c_r, alpha=1.0) is should_answer(p, cost, c_r)
    assert refusal_expected_utility(c_r, alpha=1.0) == -c_r


@given(p=probs, cost=costs, c_r=refusal_costs, alpha=probs)
def test_alpha_rule_compares_expected_utilities(
    p: float, cost: float, c_r: float, alpha: float
) -> None:
    """Refusing is worth alpha (-C_R) + (1 - alpha): answer iff q >= 1 - alpha (1 + C_R)."""
    q = expected_utility(p, cost)
    r = refusal_expected_utility(c_r, alpha=alpha)
    assume(abs(q - r) > 1e-9 * (1.0 + cost + c_r))
    assert should_answer(p, cost, c_r, alpha=alpha) is (q >= r)


def test_alpha_below_one_is_more_willing_to_refuse() -> None:
    # refusing a query that may be refusal-required is worth more, so the bar rises
    assert answer_threshold(3.0, 1.0, alpha=0.5) > answer_threshold(3.0, 1.0)
    assert answer_threshold(3.0, 1.0, alpha=0.0) == 1.0  # surely unanswerable: p = 1 only


def test_expected_utility_values() -> None:
    assert expected_utility(0.9, 1.0) == pytest.approx(0.8)
    assert expected_utility(1.0, 50.0) == 1.0
    assert expected_utility(0.0, 50.0) == -50.0


def test_expected_cost_is_the_lognormal_mean_not_the_median() -> None:
    mu, s2 = 0.3, 0.8
    assert expected_cost_lognormal(mu, s2) == pytest.approx(math.exp(mu + s2 / 2.0), rel=1e-15)
    rng = np.random.default_rng(7)
    sample = np.exp(rng.normal(mu, math.sqrt(s2), 2_000_000))
    assert expected_cost_lognormal(mu, s2) == pytest.approx(sample.mean(), rel=5e-3)
    assert math.exp(mu) < 0.8 * sample.mean()  # the median underestimates the mean cost


def test_expected_cost_changes_the_decision() -> None:
    """With the median cost exp(mu) the guard would answer; with E[L] it refuses."""
    mu, s2, p, c_r = math.log(4.0), 1.0, 0.5, 2.0
    assert should_answer(p, math.exp(mu), c_r) is True  # threshold 2/5
    assert should_answer(p, expected_cost_lognormal(mu, s2), c_r) is False  # E[L] = 6.59


def test_scalars_in_python_scalars_out() -> None:
    assert type(should_answer(0.5, 1.0)) is bool
    assert type(answer_threshold(3.0)) is float
    assert type(expected_utility(0.5, 1.0)) is float
    assert type(refusal_expected_utility(2.0)) is float
    assert type(expected_cost_lognormal(0.0, 1.0)) is float


def test_arrays_in_arrays_out() -> None:
    out = should_answer(np.array([0.2, 0.95]), 10.0, 2.0)
    assert isinstance(out, np.ndarray) and out.dtype == np.bool_
    assert out.tolist() == [False, True]
    thr = answer_threshold([1.0, 8.0], 2.0)
    assert isinstance(thr, np.ndarray) and thr.shape == (2,)
    assert isinstance(expected_utility([0.5], [1.0]), np.ndarray)
    assert isinstance(expected_cost_lognormal([0.0, 1.0], 0.5), np.ndarray)


def _call(fn: Callable[..., Any], **kwargs: Any) -> Any:
    return fn(**kwargs)


@pytest.mark.parametrize(
    ("fn", "kwargs", "match"),
    [
        pytest.param(should_answer, {"p": 0.5, "cost": 0.0}, r"cost must be a finite cost > 0",
                     id="should-cost-zero"),
        pytest.param(should_answer, {"p": 0.5, "cost": -2.0}, r"cost must be a finite cost > 0",
                     id="should-cost-negative"),
        pytest.param(should_answer, {"p": 0.5, "cost": math.inf},
                     r"cost must be a finite cost > 0", id="should-cost-inf"),
        pytest.param(should_answer, {"p": 0.5, "cost": math.nan}, r"cost must not be NaN",
                     id="should-cost-nan"),
        pytest.param(should_answer, {"p": 0.5, "cost": 1.0, "c_r": -0.1},
                     r"c_r must be a finite refusal cost >= 0", id="should-c_r-negative"),
        pytest.param(should_answer, {"p": 0.5, "cost": 1.0, "c_r": math.nan},
                     r"c_r must not be NaN", id="should-c_r-nan"),
        pytest.param(should_answer, {"p": 1.5, "cost": 1.0}, r"p must be a probability in \[0, 1\]",
                     id="should-p-above-1"),
        pytest.param(should_answer, {"p": -0.1, "cost": 1.0},
                     r"p must be a probability in \[0, 1\]", id="should-p-below-0"),
        pytest.param(should_answer, {"p": math.nan, "cost": 1.0}, r"p must not be NaN",
                     id="should-p-nan"),
        pytest.param(should_answer, {"p": "likely", "cost": 1.0}, r"p must be a real number",
                     id="should-p-text"),
        pytest.param(should_answer, {"p": 0.5, "cost": 1.0, "alpha": 1.2},
                     r"alpha must be a probability", id="should-alpha-above-1"),
        pytest.param(should_answer, {"p": [0.1, 0.2, 0.3], "cost": [1.0, 2.0]},
                     r"shapes do not match: p\(3,\), cost\(2,\)", id="should-shape-mismatch"),
        pytest.param(answer_threshold, {"cost": [1.0, 2.0], "c_r": [1.0, 2.0, 3.0]},
                     r"shapes do not match: cost\(2,\), c_r\(3,\)", id="threshold-shapes"),
        pytest.param(answer_threshold, {"cost": 0.0}, r"cost must be a finite cost > 0",
                     id="threshold-cost-zero"),
        pytest.param(answer_threshold, {"cost": 1.0, "c_r": -1.0},
                     r"c_r must be a finite refusal cost >= 0", id="threshold-c_r-negative"),
        pytest.param(expected_utility, {"p": 2.0, "cost": 1.0}, r"p must be a probability",
                     id="eu-p-above-1"),
        pytest.param(expected_utility, {"p": 0.5, "cost": -1.0}, r"cost must be a finite cost",
                     id="eu-cost-negative"),
        pytest.param(expected_utility, {"p": [0.5, 0.6], "cost": [1.0, 2.0, 3.0]},
                     r"shapes do not match: p\(2,\), cost\(3,\)", id="eu-shapes"),
        pytest.param(refusal_expected_utility, {"c_r": -1.0}, r"c_r must be a finite refusal",
                     id="reu-c_r-negative"),
        pytest.param(refusal_expected_utility, {"c_r": 1.0, "alpha": math.nan},
                     r"alpha must not be NaN", id="reu-alpha-nan"),
        pytest.param(expected_cost_lognormal, {"mu": math.nan, "sigma2": 1.0},
                     r"mu must not be NaN", id="lognormal-mu-nan"),
        pytest.param(expected_cost_lognormal, {"mu": math.inf, "sigma2": 1.0},
                     r"mu must be finite", id="lognormal-mu-inf"),
        pytest.param(expected_cost_lognormal, {"mu": "a", "sigma2": 1.0},
                     r"mu must be a real number", id="lognormal-mu-text"),
        pytest.param(expected_cost_lognormal, {"mu": 0.0, "sigma2": -1.0},
                     r"sigma2 must be a finite variance >= 0", id="lognormal-sigma2-negative"),
        pytest.param(expected_cost_lognormal, {"mu": [0.0, 1.0], "sigma2": [1.0, 2.0, 3.0]},
                     r"shapes do not match: mu\(2,\), sigma2\(3,\)", id="lognormal-shapes"),
    ],
)
def test_bad_input_names_the_argument(
    fn: Callable[..., Any], kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        _call(fn, **kwargs)
