"""RiskEval's policy consistency and normalized regret under UtilityBench's threshold."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import normalized_regret, policy_consistency
from policies import answer_threshold, should_answer


@pytest.mark.parametrize(
    ("confidence", "answered", "cost", "c_r", "consistency", "regret"),
    [
        # L = 8, C_R = 2: tau = 6/9
        pytest.param([0.9], [True], [8.0], 2.0, 1.0, 0.0, id="answer-above"),
        pytest.param([0.3], [False], [8.0], 2.0, 1.0, 0.0, id="refuse-below"),
        pytest.param([0.5], [True], [8.0], 2.0, 0.0, 1 / 6, id="answer-below"),
        pytest.param([0.9], [False], [8.0], 2.0, 0.0, 0.9 - 6 / 9, id="refuse-above"),
        pytest.param([0.9, 0.3, 0.5], [True, False, True], [8.0] * 3, 2.0, 2 / 3, 1 / 18,
                     id="three-items"),
        # L = 3, C_R = 1: tau = 0.5 exactly; both actions are optimal there
        pytest.param([0.5], [True], [3.0], 1.0, 1.0, 0.0, id="equality-answer"),
        pytest.param([0.5], [False], [3.0], 1.0, 1.0, 0.0, id="equality-refuse"),
        # L = 1 < C_R = 2: tau_raw = -0.5, clipped to 0; answering is always optimal
        pytest.param([0.4], [False], [1.0], 2.0, 0.0, 0.4, id="cheap-error-refused"),
        pytest.param([0.0], [True], [1.0], 2.0, 1.0, 0.0, id="cheap-error-answered-at-0"),
        pytest.param([0.0], [False], [1.0], 2.0, 0.0, 0.0, id="refused-at-0-clipped-tau"),
        # C_R = 0 is RiskEval's tau = lambda / (1 + lambda): lambda = 9 -> 0.9
        pytest.param([0.85], [True], [9.0], 0.0, 0.0, 0.05, id="riskeval-lambda-9"),
        pytest.param([1.0], [True], [100.0], 0.0, 1.0, 0.0, id="riskeval-certain"),
    ],
)
def test_hand_computed(
    confidence: list[float], answered: list[bool], cost: list[float], c_r: float,
    consistency: float, regret: float,
) -> None:
    assert policy_consistency(confidence, answered, cost, c_r) == pytest.approx(consistency)
    assert normalized_regret(confidence, answered, cost, c_r) == pytest.approx(regret,
                                                                               abs=1e-12)


def test_c_r_zero_threshold_is_riskevals() -> None:
    lam = np.array([0.1, 1.0, 5.0, 10.0, 100.0])
    np.testing.assert_allclose(answer_threshold(lam, 0.0), lam / (1.0 + lam), rtol=1e-15)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.floats(0.0, 1.0), st.booleans(), st.floats(1e-3, 1e3)),
        min_size=1, max_size=40,
    ),
    c_r=st.floats(0.0, 100.0),
)
def test_properties(rows: list[tuple[float, bool, float]], c_r: float) -> None:
    conf = [r[0] for r in rows]
    answered = [r[1] for r in rows]
    cost = [r[2] for r in rows]
    consistency = policy_consistency(conf, answered, cost, c_r)
    regret = normalized_regret(conf, answered, cost, c_r)
    assert 0.0 <= consistency <= 1.0
    assert 0.0 <= regret <= 1.0
    if consistency == 1.0:
        assert regret == 0.0
    # the optimal policy itself is perfectly consistent, with no regret
    optimal = should_answer(conf, cost, c_r).tolist()
    assert policy_consistency(conf, optimal, cost, c_r) == 1.0
    assert normalized_regret(conf, optimal, cost, c_r) == 0.0


def test_consistency_counts_decisions_that_match_the_rule() -> None:
    rng = np.random.default_rng(0)
    conf = np.round(rng.random(1000), 3)
    cost = rng.lognormal(0.5, 1.0, 1000)
    answered = rng.random(1000) < 0.8
    optimal = should_answer(conf, cost, 2.0)
    tau_raw = answer_threshold(cost, 2.0)
    off_equality = conf != tau_raw
    assert off_equality.all()  # no exact ties in this sample: the rule decides every item
    assert policy_consistency(conf, answered, cost) == pytest.approx(np.mean(answered == optimal))
    tau = np.clip(tau_raw, 0.0, 1.0)
    expected = np.mean(np.where(answered != optimal, np.abs(conf - tau), 0.0))
    assert normalized_regret(conf, answered, cost) == pytest.approx(expected)


def test_c_r_per_item() -> None:
    # same item, L = 8: at C_R = 2 tau = 2/3 (answering at 0.5 is wrong); at C_R = 8 tau < 0
    conf, answered, cost = [0.5, 0.5], [True, True], [8.0, 8.0]
    assert policy_consistency(conf, answered, cost, c_r=[2.0, 8.0]) == 0.5
    assert normalized_regret(conf, answered, cost, c_r=[2.0, 8.0]) == pytest.approx(1 / 12)


def test_input_order_does_not_matter() -> None:
    rng = np.random.default_rng(1)
    conf, answered, cost = rng.random(300), rng.random(300) < 0.5, rng.lognormal(0, 1, 300)
    p = rng.permutation(300)
    assert policy_consistency(conf[p], answered[p], cost[p]) == pytest.approx(
        policy_consistency(conf, answered, cost)
    )
    assert normalized_regret(conf[p], answered[p], cost[p]) == pytest.approx(
        normalized_regret(conf, answered, cost)
    )


@pytest.mark.parametrize("metric", [policy_consistency, normalized_regret])
@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        pytest.param(([1.5], [True], [1.0]), {}, r"confidence must be a probability in \[0, 1\]",
                     id="confidence-above-1"),
        pytest.param(([float("nan")], [True], [1.0]), {}, r"confidence must not be NaN",
                     id="confidence-nan"),
        pytest.param(([0.5], ["maybe"], [1.0]), {}, r"answered must be booleans",
                     id="answered-text"),
        pytest.param(([0.5], [True], [0.0]), {}, r"cost must be a finite cost > 0",
                     id="cost-zero"),
        pytest.param(([0.5], [True], [-1.0]), {}, r"cost must be a finite cost > 0",
                     id="cost-negative"),
        pytest.param(([0.5], [True], [float("nan")]), {}, r"cost must not be NaN",
                     id="cost-nan"),
        pytest.param(([0.5], [True], [1.0]), {"c_r": -1.0},
                     r"c_r must be a finite refusal cost >= 0", id="c_r-negative"),
        pytest.param(([0.5, 0.6], [True, False], [1.0, 1.0]), {"c_r": [1.0, 2.0, 3.0]},
                     r"c_r must be a single number or have shape \(2,\)", id="c_r-shape"),
        pytest.param(([0.5, 0.6], [True], [1.0, 1.0]), {},
                     r"one length; got confidence\(2,\), answered\(1,\), cost\(2,\)",
                     id="length"),
        pytest.param(([], [], []), {}, r"at least one sample", id="empty"),
    ],
)
def test_bad_input_names_the_argument(
    metric: Callable[..., float], args: tuple[object, ...], kwargs: dict[str, object],
    match: str,
) -> None:
    with pytest.raises(ValueError, match=match):
        metric(*args, **kwargs)
