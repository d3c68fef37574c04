"""Response utility, refusal utility and gain (UtilityBench eqs. 1, 11, 33)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from policies import refusal_utility, response_gain, response_utility

costs = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
refusal_costs = st.floats(min_value=0.0, max_value=1e3, allow_nan=False)


@pytest.mark.parametrize(
    ("answerable", "answered", "correct", "expected"),
    [
        pytest.param(True, True, True, 1.0, id="answer-correct"),
        pytest.param(True, True, False, -5.0, id="answer-wrong"),
        pytest.param(True, False, False, -2.0, id="unnecessary-refusal"),
        pytest.param(True, False, True, -2.0, id="unnecessary-refusal-correct-ignored"),
        pytest.param(False, False, False, 1.0, id="necessary-refusal"),
        pytest.param(False, False, True, 1.0, id="necessary-refusal-correct-ignored"),
        pytest.param(False, True, False, -5.0, id="answer-refusal-required"),
        pytest.param(False, True, True, -5.0, id="answer-refusal-required-graded-correct"),
    ],
)
def test_response_utility_table(
    answerable: bool, answered: bool, correct: bool, expected: float
) -> None:
    assert response_utility(answerable, answered, correct, cost=5.0, c_r=2.0) == expected


@pytest.mark.parametrize(
    ("answerable", "c_r", "expected"),
    [
        pytest.param(True, 2.0, -2.0, id="answerable"),
        pytest.param(True, 0.0, 0.0, id="answerable-free-refusal"),
        pytest.param(False, 2.0, 1.0, id="refusal-required"),
        pytest.param(False, 64.0, 1.0, id="refusal-required-any-c_r"),
    ],
)
def test_refusal_utility(answerable: bool, c_r: float, expected: float) -> None:
    assert refusal_utility(answerable, c_r=c_r) == expected


@given(cost=costs, c_r=refusal_costs)
def test_gain_matches_eq_33(cost: float, c_r: float) -> None:
    """g = 1 + C_R (correct), C_R - L (wrong), -1 - L (refusal-required), 0 (a refusal)."""
    a = [True, True, False, True, False]
    d = [True, True, True, False, False]
    c = [True, False, True, False, False]
    g = response_gain(a, d, c, cost=[cost] * 5, c_r=c_r)
    expected = [1.0 + c_r, c_r - cost, -1.0 - cost, 0.0, 0.0]
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


@given(cost=costs, c_r=refusal_costs)
def test_gain_is_utility_minus_refusal_utility(cost: float, c_r: float) -> None:
    rng = np.random.default_rng(0)
    a, d, c = (rng.random(20) < 0.5 for _ in range(3))
    v = response_utility(a, d, c, cost=cost, c_r=c_r)
    b = refusal_utility(a, c_r=c_r)
    np.testing.assert_array_equal(response_gain(a, d, c, cost=cost, c_r=c_r), v - b)


def test_scalars_in_python_scalars_out() -> None:
    assert type(response_utility(True, True, True, cost=1.0)) is float
    assert type(refusal_utility(False)) is float
    assert type(response_gain(True, False, False, cost=3.0)) is float


def test_arrays_in_arrays_out() -> None:
    v = response_utility([True, False], [True, False], [False, False], cost=[3.0, 4.0])
    assert isinstance(v, np.ndarray)
    assert v.tolist() == [-3.0, 1.0]


def test_accepts_zero_one_for_booleans() -> None:
    assert response_utility(1, 1, 0, cost=2.0) == response_utility(True, True, False, cost=2.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"cost": 0.0}, r"cost must be a finite cost > 0", id="cost-zero"),
        pytest.param({"cost": -1.0}, r"cost must be a finite cost > 0", id="cost-negative"),
        pytest.param({"cost": float("inf")}, r"cost must be a finite cost > 0", id="cost-inf"),
        pytest.param({"cost": float("nan")}, r"cost must not be NaN", id="cost-nan"),
        pytest.param({"cost": "high"}, r"cost must be a real number", id="cost-text"),
        pytest.param({"c_r": -0.5}, r"c_r must be a finite refusal cost >= 0", id="c_r-negative"),
        pytest.param({"c_r": float("nan")}, r"c_r must not be NaN", id="c_r-nan"),
        pytest.param({"answerable": 2}, r"answerable must be booleans", id="answerable-2"),
        pytest.param({"answered": "yes"}, r"answered must be booleans", id="answered-text"),
        pytest.param({"correct": 0.5}, r"correct must be booleans", id="correct-half"),
        pytest.param(
            {"answerable": [True, False, True], "cost": [1.0, 2.0]},
            r"shapes do not match: answerable\(3,\).*cost\(2,\)",
            id="shape-mismatch",
        ),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {
        "answerable": True, "answered": True, "correct": False, "cost": 1.0, "c_r": 2.0,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        response_utility(**args)


def test_refusal_utility_bad_input() -> None:
    with pytest.raises(ValueError, match=r"c_r must be a finite refusal cost >= 0"):
        refusal_utility(True, c_r=-1.0)
    with pytest.raises(ValueError, match=r"answerable must be booleans"):
        refusal_utility(0.3)
