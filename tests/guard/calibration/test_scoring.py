"""ECE (equal-width bins) and Brier score."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import brier, ece


def naive_ece(prob: list[float], correct: list[bool], n_bins: int) -> float:
    """Loop over bins [b/B, (b+1)/B), the last one closed at 1."""
    n = len(prob)
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [
            i for i, p in enumerate(prob)
            if lo <= p < hi or (b == n_bins - 1 and p == 1.0)
        ]
        if members:
            acc = sum(correct[i] for i in members) / len(members)
            conf = sum(prob[i] for i in members) / len(members)
            total += len(members) / n * abs(acc - conf)
    return total


@pytest.mark.parametrize(
    ("prob", "correct", "n_bins", "expected"),
    [
        pytest.param([0.9, 0.9, 0.2, 0.2], [True, False, False, False], 10, 0.3,
                     id="two-bins"),
        pytest.param([1.0, 0.0], [True, False], 10, 0.0, id="sharp-and-right"),
        pytest.param([1.0, 0.0], [False, True], 10, 1.0, id="sharp-and-wrong"),
        pytest.param([0.5, 0.5], [True, False], 10, 0.0, id="calibrated-coin"),
        pytest.param([0.9, 0.2], [True, False], 10, 0.15, id="separate-bins"),
        pytest.param([0.9, 0.2], [True, False], 1, 0.05, id="one-bin-pools"),
        # 0.1 belongs to bin [0.1, 0.2), together with 0.19: |0.5 - 0.145|
        pytest.param([0.1, 0.19], [True, False], 10, 0.355, id="left-edge-closed"),
        # 1.0 belongs to the last bin with 0.95: |0.5 - 0.975|
        pytest.param([0.95, 1.0], [True, False], 10, 0.475, id="p-1-in-last-bin"),
        pytest.param([0.3], [True], 10, 0.7, id="n1"),
        # 0.57 * 100 = 56.99999999999999 in floats; the decimal 0.57 still opens bin 57
        pytest.param([0.57, 0.575], [True, False], 100, 0.0725, id="decimal-on-edge"),
        pytest.param([0.3, 0.35], [True, False], 10, 0.175, id="decimal-0.3-on-edge"),
    ],
)
def test_ece_hand_computed(
    prob: list[float], correct: list[bool], n_bins: int, expected: float
) -> None:
    assert ece(prob, correct, n_bins=n_bins) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n_bins", [1, 2, 10, 15, 100])
def test_ece_agrees_with_a_loop_over_bins(n_bins: int) -> None:
    rng = np.random.default_rng(n_bins)
    prob = np.round(rng.random(500), 2).tolist()  # many values on bin edges
    correct = (rng.random(500) < np.asarray(prob)).tolist()
    assert ece(prob, correct, n_bins) == pytest.approx(naive_ece(prob, correct, n_bins),
                                                       abs=1e-12)


def test_ece_one_bin_is_calibration_in_the_large() -> None:
    rng = np.random.default_rng(0)
    prob = rng.random(200)
    correct = rng.random(200) < 0.3
    assert ece(prob, correct, n_bins=1) == pytest.approx(abs(correct.mean() - prob.mean()))


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=50),
    n_bins=st.integers(1, 30),
)
def test_ranges_and_order_invariance(pairs: list[tuple[float, bool]], n_bins: int) -> None:
    prob = [p for p, _ in pairs]
    correct = [c for _, c in pairs]
    value = ece(prob, correct, n_bins)
    assert 0.0 <= value <= 1.0
    assert ece(prob[::-1], correct[::-1], n_bins) == pytest.approx(value, abs=1e-12)
    assert 0.0 <= brier(prob, correct) <= 1.0


@pytest.mark.parametrize(
    ("prob", "correct", "expected"),
    [
        pytest.param([0.9, 0.2], [True, False], 0.025, id="two"),
        pytest.param([0.5, 0.5], [True, False], 0.25, id="coin"),
        pytest.param([1.0, 0.0], [True, False], 0.0, id="perfect"),
        pytest.param([1.0, 0.0], [False, True], 1.0, id="worst"),
        pytest.param([0.7], [True], 0.09, id="n1"),
    ],
)
def test_brier_hand_computed(prob: list[float], correct: list[bool], expected: float) -> None:
    assert brier(prob, correct) == pytest.approx(expected, abs=1e-15)


def test_brier_matches_the_definition() -> None:
    rng = np.random.default_rng(1)
    prob, correct = rng.random(1000), rng.random(1000) < 0.5
    assert brier(prob, correct) == pytest.approx(
        sum((p - c) ** 2 for p, c in zip(prob.tolist(), correct.tolist(), strict=True)) / 1000
    )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        pytest.param(lambda: ece([1.2], [True]), r"prob must be a probability in \[0, 1\]",
                     id="ece-prob-above-1"),
        pytest.param(lambda: ece([-0.1], [True]), r"prob must be a probability",
                     id="ece-prob-negative"),
        pytest.param(lambda: ece([float("nan")], [True]), r"prob\[0\] is nan",
                     id="ece-prob-nan"),
        pytest.param(lambda: ece([0.5], [0.5]), r"correct must be booleans",
                     id="ece-correct-half"),
        pytest.param(lambda: ece([0.5, 0.5], [True]),
                     r"one length; got prob\(2,\), correct\(1,\)", id="ece-length"),
        pytest.param(lambda: ece([], []), r"at least one sample", id="ece-empty"),
        pytest.param(lambda: ece([0.5], [True], n_bins=0), r"n_bins must be an integer >= 1",
                     id="ece-bins-0"),
        pytest.param(lambda: ece([0.5], [True], n_bins=-3), r"n_bins must be an integer >= 1",
                     id="ece-bins-negative"),
        pytest.param(lambda: ece([0.5], [True], n_bins=2.5), r"n_bins must be an integer",  # type: ignore[arg-type]
                     id="ece-bins-float"),
        pytest.param(lambda: ece([0.5], [True], n_bins=True), r"n_bins must be an integer",
                     id="ece-bins-bool"),
        pytest.param(lambda: ece([0.5], [True], n_bins="10"), r"n_bins must be an integer",  # type: ignore[arg-type]
                     id="ece-bins-text"),
        pytest.param(lambda: brier([2.0], [True]), r"prob must be a probability",
                     id="brier-prob"),
        pytest.param(lambda: brier([0.5], [None]), r"correct must be booleans",
                     id="brier-correct-none"),
        pytest.param(lambda: brier([0.5, 0.1], [True, False, True]), r"correct\(3,\)",
                     id="brier-length"),
    ],
)
def test_bad_input_names_the_argument(call: Callable[[], float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_numpy_integer_bins_are_accepted() -> None:
    assert ece([0.9, 0.2], [True, False], n_bins=np.int64(10)) == pytest.approx(0.15)
