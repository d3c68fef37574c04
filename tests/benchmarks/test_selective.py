"""AURC, eAURC, CW-AURC and AUARC (UtilityBench Appendix C.2.4-C.2.6, RiskEval)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import auarc, aurc, cw_aurc, eaurc, utility_area


def naive_risk_curve_area(loss: Sequence[float], perm: Sequence[int]) -> float:
    """Eq. 48 / 74 literally: (1/n) sum_k (1/k) sum_{j<=k} loss_{pi_j}."""
    n = len(loss)
    return sum(sum(loss[i] for i in perm[:k]) / k for k in range(1, n + 1)) / n


def naive_tie_average(loss: Sequence[float], score: Sequence[float]) -> float:
    """Average of the curve area over every ordering of each tie group (brute force)."""
    levels = sorted(set(score), reverse=True)
    groups = [[i for i, s in enumerate(score) if s == lv] for lv in levels]
    areas = [
        naive_risk_curve_area(loss, [i for part in parts for i in part])
        for parts in itertools.product(*(itertools.permutations(g) for g in groups))
    ]
    return sum(areas) / len(areas)


# --------------------------------------------------------------------------- hand-computed


@pytest.mark.parametrize(
    ("correct", "score", "expected"),
    [
        pytest.param([True, False], [0.9, 0.1], 0.25, id="error-last"),
        pytest.param([True, False], [0.1, 0.9], 0.75, id="error-first"),
        pytest.param([True, False], [0.5, 0.5], 0.5, id="tied"),
        # n = 3: alpha = (11/18, 5/18, 2/18)
        pytest.param([True, True, False], [3.0, 2.0, 1.0], 2 / 18, id="n3-error-last"),
        pytest.param([False, True, True], [3.0, 2.0, 1.0], 11 / 18, id="n3-error-first"),
        pytest.param([True, False, False], [3.0, 2.0, 1.0], 7 / 18, id="n3-two-errors"),
        pytest.param([True, False, True], [2.0, 2.0, 1.0], 8 / 18, id="n3-tie-at-top"),
        pytest.param([True, True, True], [1.0, 2.0, 3.0], 0.0, id="no-errors"),
        pytest.param([False, False], [1.0, 2.0], 1.0, id="all-errors"),
        pytest.param([False], [0.3], 1.0, id="n1-error"),
        pytest.param([True], [0.3], 0.0, id="n1-correct"),
    ],
)
def test_aurc_hand_computed(correct: list[bool], score: list[float], expected: float) -> None:
    assert aurc(correct, score) == pytest.approx(expected, abs=1e-15)
    assert auarc(correct, score) == pytest.approx(1.0 - expected, abs=1e-15)


def test_lemma2_weights_are_decreasing_positive_and_sum_to_one() -> None:
    n = 7
    alpha = []
    for j in range(n):  # one error at rank j + 1
        correct = [True] * n
        correct[j] = False
        alpha.append(aurc(correct, list(range(n, 0, -1))))
    exact = [Fraction(1, n) * sum(Fraction(1, k) for k in range(j, n + 1)) for j in range(1, n + 1)]
    np.testing.assert_allclose(alpha, [float(x) for x in exact], rtol=1e-14)
    assert all(x > y > 0 for x, y in itertools.pairwise(alpha))
    assert sum(alpha) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(10))
def test_aurc_agrees_with_the_risk_coverage_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    correct = (rng.random(n) < 0.6).tolist()
    cost = rng.lognormal(0.0, 1.0, n).tolist()
    score = rng.integers(0, 3, n).astype(float).tolist()  # ties
    errors = [0.0 if c else 1.0 for c in correct]
    weighted = [e * li for e, li in zip(errors, cost, strict=True)]
    accuracy = [1.0 - e for e in errors]
    assert aurc(correct, score) == pytest.approx(naive_tie_average(errors, score), abs=1e-12)
    assert cw_aurc(correct, cost, score) == pytest.approx(
        naive_tie_average(weighted, score), abs=1e-12
    )
    assert auarc(correct, score) == pytest.approx(naive_tie_average(accuracy, score), abs=1e-12)
    oracle = naive_risk_curve_area(errors, sorted(range(n), key=lambda i: errors[i]))
    assert eaurc(correct, score) == pytest.approx(
        naive_tie_average(errors, score) - oracle, abs=1e-12
    )


# --------------------------------------------------------------------------- eAURC, CW-AURC


def test_eaurc_is_zero_for_the_oracle_order_and_positive_otherwise() -> None:
    correct = [True, False, True, False, True]
    oracle_score = [1.0 if c else 0.0 for c in correct]
    assert eaurc(correct, oracle_score) == 0.0
    assert eaurc(correct, [5.0, 4.0, 3.0, 2.0, 1.0]) > 0.0
    assert eaurc(correct, [0.0] * 5) > 0.0  # tied: average of orderings, most not oracle


@settings(max_examples=100, deadline=None)
@given(
    correct=st.lists(st.booleans(), min_size=1, max_size=30),
    data=st.data(),
)
def test_ranges(correct: list[bool], data: st.DataObject) -> None:
    n = len(correct)
    score = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    value = aurc(correct, score)
    assert 0.0 <= value <= 1.0 + 1e-12
    assert eaurc(correct, score) >= 0.0
    assert auarc(correct, score) == pytest.approx(1.0 - value, abs=1e-12)
    assert cw_aurc(correct, [1.0] * n, score) == pytest.approx(value, abs=1e-12)


def test_cw_aurc_hand_computed_and_cost_sensitive() -> None:
    # alpha = (0.75, 0.25): an error of cost 4 at rank 2 -> 1.0, at rank 1 -> 3.0
    assert cw_aurc([True, False], [1.0, 4.0], [0.9, 0.1]) == pytest.approx(1.0)
    assert cw_aurc([True, False], [1.0, 4.0], [0.1, 0.9]) == pytest.approx(3.0)
    # the cost of a correct answer does not count
    assert cw_aurc([True, False], [100.0, 4.0], [0.9, 0.1]) == pytest.approx(1.0)


def test_proposition3_same_error_sequence_same_aurc_different_area() -> None:
    """AURC and eAURC see only the error sequence; the utility area sees which error."""
    correct = [True, False, True, False]
    cost = [1.0, 2.0, 1.0, 9.0]
    score_s = [4.0, 3.0, 2.0, 1.0]  # cheap error first, costly last
    score_t = [4.0, 1.0, 2.0, 3.0]  # swapped
    assert aurc(correct, score_s) == aurc(correct, score_t)
    assert eaurc(correct, score_s) == eaurc(correct, score_t)
    assert cw_aurc(correct, cost, score_s) != cw_aurc(correct, cost, score_t)
    everyone = [True] * 4
    area_s = utility_area(everyone, everyone, correct, cost, score_s).area
    area_t = utility_area(everyone, everyone, correct, cost, score_t).area
    assert area_s - area_t == pytest.approx((3 - 1) / 16 * (9.0 - 2.0))


# --------------------------------------------------------------------------- ties


@pytest.mark.parametrize(
    "metric",
    [
        pytest.param(lambda c, L, s: aurc(c, s), id="aurc"),
        pytest.param(lambda c, L, s: eaurc(c, s), id="eaurc"),
        pytest.param(lambda c, L, s: auarc(c, s), id="auarc"),
        pytest.param(cw_aurc, id="cw_aurc"),
    ],
)
def test_input_order_does_not_matter_under_ties(
    metric: Callable[[object, object, object], float],
) -> None:
    rng = np.random.default_rng(5)
    n = 500
    c, cost, s = rng.random(n) < 0.6, rng.lognormal(0.0, 1.0, n), rng.integers(0, 6, n) / 5
    ref = metric(c, cost, s)
    for _ in range(5):
        p = rng.permutation(n)
        assert metric(c[p], cost[p], s[p]) == pytest.approx(ref, abs=1e-12)


def test_all_tied_aurc_is_the_error_rate() -> None:
    correct = [True, False, False, True, True]
    assert aurc(correct, [0.7] * 5) == pytest.approx(2 / 5)
    assert cw_aurc(correct, [1.0, 2.0, 3.0, 4.0, 5.0], [0.7] * 5) == pytest.approx(5 / 5)


def test_accepts_numpy_arrays_and_zero_one() -> None:
    assert aurc(np.array([1, 0]), np.array([0.9, 0.1])) == pytest.approx(0.25)
    assert aurc([1, 0], [1, 0]) == pytest.approx(0.25)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        pytest.param(lambda: aurc([True, False], [0.1]),
                     r"one length; got correct\(2,\), score\(1,\)", id="length"),
        pytest.param(lambda: aurc([True], [float("nan")]), r"score must not be NaN",
                     id="score-nan"),
        pytest.param(lambda: aurc([True], ["high"]), r"score must be a real number",
                     id="score-text"),
        pytest.param(lambda: aurc([None, True], [0.1, 0.2]), r"correct must be booleans",
                     id="correct-none"),
        pytest.param(lambda: aurc([2, 1], [0.1, 0.2]), r"correct must be booleans",
                     id="correct-2"),
        pytest.param(lambda: aurc([], []), r"at least one sample", id="empty"),
        pytest.param(lambda: aurc(True, 0.5), r"1-D arrays.*correct\(\)", id="scalar"),
        pytest.param(lambda: aurc([[True]], [[0.5]]), r"1-D arrays", id="2-d"),
        pytest.param(lambda: eaurc([True, False], [0.1, 0.2, 0.3]), r"score\(3,\)",
                     id="eaurc-length"),
        pytest.param(lambda: auarc(["yes"], [0.1]), r"correct must be booleans",
                     id="auarc-text"),
        pytest.param(lambda: cw_aurc([True], [0.0], [0.1]), r"cost must be a finite cost > 0",
                     id="cw-cost-zero"),
        pytest.param(lambda: cw_aurc([True], [float("nan")], [0.1]), r"cost must not be NaN",
                     id="cw-cost-nan"),
        pytest.param(lambda: cw_aurc([True, False], [1.0], [0.1, 0.2]), r"cost\(1,\)",
                     id="cw-cost-length"),
    ],
)
def test_bad_input_names_the_argument(call: Callable[[], float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()
