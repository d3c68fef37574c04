"""UtilityAUC against the paper's Appendix B / C.2 statements and an independent naive version.

The naive version below shares no code with ``benchmarks``: it builds every response utility
from the four-outcome table, the curve ``U_k`` step by step, the trapezoid area, averages over
every ordering of each tie group by enumerating permutations, and finds ``A+`` / ``A-`` by
trying every ordering of the best / worst outcomes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from benchmarks import (
    aurc,
    eaurc,
    table1,
    utility_area,
    utility_auc,
    utility_auc_sweep,
    utility_curve,
)
from policies import expected_utility

PAPER_C_R = (0.0, 0.5, 2.0, 8.0, 64.0)
Data = tuple[list[bool], list[bool], list[bool], list[float], list[float]]


# --------------------------------------------------------------------------- naive reference


def naive_utilities(
    a: Sequence[bool], d: Sequence[bool], c: Sequence[bool], cost: Sequence[float], c_r: float
) -> tuple[list[float], list[float]]:
    """``(v, b)`` from the four-outcome table (eq. 1) and the safe refusal (eq. 11)."""
    v, b = [], []
    for ai, di, ci, li in zip(a, d, c, cost, strict=True):
        if di:
            v.append(1.0 if (ai and ci) else -li)
        else:
            v.append(-c_r if ai else 1.0)
        b.append(-c_r if ai else 1.0)
    return v, b


def trapezoid_area(v: Sequence[float], b: Sequence[float], perm: Sequence[int]) -> float:
    """Eqs. 34-35: U_0 = B, U_k = U_{k-1} + (v - b)_{pi_k} / n, area = sum of trapezoids."""
    n = len(v)
    u = [sum(b) / n]
    for i in perm:
        u.append(u[-1] + (v[i] - b[i]) / n)
    return sum((u[k - 1] + u[k]) / (2 * n) for k in range(1, n + 1))


def tie_orderings(score: Sequence[float]) -> Iterator[list[int]]:
    """Every ordering by decreasing score, all permutations within each tie group."""
    levels = sorted(set(score), reverse=True)
    groups = [[i for i, s in enumerate(score) if s == level] for level in levels]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for part in parts for i in part]


def naive_area(data: Data, c_r: float) -> tuple[float, float, float]:
    a, d, c, cost, score = data
    n = len(a)
    v, b = naive_utilities(a, d, c, cost, c_r)
    areas = [trapezoid_area(v, b, p) for p in tie_orderings(score)]
    v_plus = [1.0] * n
    v_minus = [-max(li, c_r) if ai else -li for ai, li in zip(a, cost, strict=True)]
    perms = list(itertools.permutations(range(n)))
    a_plus = max(trapezoid_area(v_plus, b, p) for p in perms)
    a_minus = min(trapezoid_area(v_minus, b, p) for p in perms)
    return sum(areas) / len(areas), a_plus, a_minus


def naive_utility_auc(data: Data, c_r: float) -> float:
    area, a_plus, a_minus = naive_area(data, c_r)
    return (area - a_minus) / (a_plus - a_minus)


# --------------------------------------------------------------------------- data


def random_data(rng: np.random.Generator, n: int, *, n_levels: int = 3) -> Data:
    """Random outcomes; costs partly from a small set (ties with the C_R grid), scores tie."""
    a = (rng.random(n) < 0.6).tolist()
    d = (rng.random(n) < 0.7).tolist()
    c = (rng.random(n) < 0.5).tolist()
    pool = np.array([0.5, 1.0, 2.0, 8.0])
    cost = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.lognormal(0.5, 1.0, n))
    score = rng.integers(0, n_levels, n).astype(float)
    return a, d, c, cost.tolist(), score.tolist()


@st.composite
def datasets(draw: st.DrawFn, max_n: int = 40) -> Data:
    n = draw(st.integers(1, max_n))
    bools = st.lists(st.booleans(), min_size=n, max_size=n)
    cost = draw(
        st.lists(
            st.one_of(
                st.sampled_from([0.5, 1.0, 2.0, 8.0]),
                st.floats(1e-3, 1e3, allow_nan=False, allow_infinity=False),
            ),
            min_size=n,
            max_size=n,
        )
    )
    score = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n, max_size=n))
    return draw(bools), draw(bools), draw(bools), cost, score


# --------------------------------------------------------------------------- Lemma 1


@pytest.mark.parametrize("c_r", PAPER_C_R)
@pytest.mark.parametrize("seed", range(5))
def test_lemma1_rank_weighted_area_is_the_trapezoid_over_explicit_curve(
    seed: int, c_r: float
) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50))
    a, d, c, cost, _ = random_data(rng, n)
    score = rng.permutation(n).astype(float).tolist()  # distinct: one ordering
    v, b = naive_utilities(a, d, c, cost, c_r)
    perm = sorted(range(n), key=lambda i: -score[i])
    expected = trapezoid_area(v, b, perm)
    assert utility_area(a, d, c, cost, score, c_r=c_r).area == pytest.approx(expected, abs=1e-12)
    x, u = utility_curve(a, d, c, cost, score, c_r=c_r)
    u_explicit = [sum(b) / n]
    for i in perm:
        u_explicit.append(u_explicit[-1] + (v[i] - b[i]) / n)
    np.testing.assert_allclose(x, np.arange(n + 1) / n, atol=0)
    np.testing.assert_allclose(u, u_explicit, atol=1e-12)


@pytest.mark.parametrize("c_r", PAPER_C_R)
@pytest.mark.parametrize("seed", range(5))
def test_lemma1_with_ties_area_is_the_trapezoid_under_utility_curve(seed: int, c_r: float) -> None:
    rng = np.random.default_rng(100 + seed)
    data = random_data(rng, int(rng.integers(1, 60)), n_levels=4)
    x, u = utility_curve(*data, c_r=c_r)
    trapezoid = float(np.sum((u[1:] + u[:-1]) / 2.0 * np.diff(x)))
    assert utility_area(*data, c_r=c_r).area == pytest.approx(trapezoid, abs=1e-12)
    v, _ = naive_utilities(*data[:4], c_r)
    assert u[-1] == pytest.approx(sum(v) / len(v), abs=1e-12)  # full coverage: mean utility


# --------------------------------------------------------------------------- Proposition 2


def _brute_force_extremes(
    a: NDArray[np.bool_], cost: NDArray[np.float64], c_r: float
) -> tuple[float, float]:
    """Max and min of the trapezoid area over EVERY feasible v and EVERY ordering."""
    n = a.shape[0]
    feasible = [
        (1.0, -li, -c_r) if ai else (1.0, -li) for ai, li in zip(a, cost, strict=True)
    ]
    vs = np.array(list(itertools.product(*feasible)))  # (m, n)
    b = np.where(a, -c_r, 1.0)
    base = b.mean()
    hi, lo = -math.inf, math.inf
    for perm in itertools.permutations(range(n)):
        g = (vs - b)[:, list(perm)]
        u = np.concatenate((np.full((vs.shape[0], 1), base), base + np.cumsum(g, 1) / n), 1)
        area = (u[:, :-1] + u[:, 1:]).sum(1) / (2 * n)
        hi, lo = max(hi, float(area.max())), min(lo, float(area.min()))
    return hi, lo


@pytest.mark.parametrize("c_r", [0.0, 1.0, 2.0, 8.0])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_proposition2_references_are_the_extremes_over_outcomes_and_orderings(
    n: int, c_r: float
) -> None:
    rng = np.random.default_rng(1000 * n + int(c_r))
    for _ in range(6):
        a = rng.random(n) < 0.6
        # some costs equal C_R (refusal and error tie as the worst outcome)
        cost = np.where(rng.random(n) < 0.3, max(c_r, 0.5), rng.lognormal(0.5, 1.0, n))
        hi, lo = _brute_force_extremes(a, cost, c_r)
        # the references do not depend on the observed responses or scores
        d, c, score = rng.random(n) < 0.5, rng.random(n) < 0.5, rng.random(n)
        r = utility_area(a, d, c, cost, score, c_r=c_r)
        assert r.area_max == pytest.approx(hi, abs=1e-12)
        assert r.area_min == pytest.approx(lo, abs=1e-12)
        assert r.area_min - 1e-12 <= r.area <= r.area_max + 1e-12
        assert r.area_min < r.area_max


# --------------------------------------------------------------------------- Theorem 1 (i)


@pytest.mark.parametrize("c_r", PAPER_C_R)
def test_theorem1_same_accuracy_and_aurc_different_utility_auc(c_r: float) -> None:
    """Two systems deliver the same responses; only the two errors swap ranks."""
    a = d = [True] * 5
    correct = [True, False, True, False, True]
    cost = [1.0, 1.0, 1.0, 9.0, 1.0]  # error a: L = 1 (sample 1), error b: L = 9 (sample 3)
    score_s = [5.0, 4.0, 3.0, 2.0, 1.0]  # a at rank 2, costlier b at rank 4
    score_t = [5.0, 2.0, 3.0, 4.0, 1.0]  # swapped
    row_s = table1(a, d, correct, cost, score_s, c_r=c_r)
    row_t = table1(a, d, correct, cost, score_t, c_r=c_r)
    assert row_s.ans_acc == row_t.ans_acc == 0.6
    assert aurc(correct, score_s) == aurc(correct, score_t)
    assert eaurc(correct, score_s) == eaurc(correct, score_t)
    assert row_s.utility_auc > row_t.utility_auc
    diff = (
        utility_area(a, d, correct, cost, score_s, c_r=c_r).area
        - utility_area(a, d, correct, cost, score_t, c_r=c_r).area
    )
    assert diff == pytest.approx((4 - 2) / 25 * (9.0 - 1.0), abs=1e-12)


# --------------------------------------------------------------------------- Corollary 1


@pytest.mark.parametrize("seed", range(12))
def test_corollary1_delaying_the_costlier_error_adds_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    a = rng.random(n) < 0.8
    d = rng.random(n) < 0.8
    c = rng.random(n) < 0.4
    cost = rng.lognormal(0.5, 1.0, n)
    errors = np.flatnonzero(a & d & ~c)
    if errors.shape[0] < 2:
        a[:2], d[:2], c[:2] = True, True, False
        errors = np.flatnonzero(a & d & ~c)
    i, j = rng.choice(errors, 2, replace=False)
    cheap, costly = (i, j) if cost[i] < cost[j] else (j, i)
    score_s = rng.permutation(n).astype(float)
    # S: the cheaper error at the better rank r, the costlier one later at s
    hi, lo = max(score_s[cheap], score_s[costly]), min(score_s[cheap], score_s[costly])
    score_s[cheap], score_s[costly] = hi, lo
    score_t = score_s.copy()
    score_t[cheap], score_t[costly] = lo, hi
    r = int(np.sum(score_s > hi)) + 1
    s = int(np.sum(score_s > lo)) + 1
    expected = (s - r) / n**2 * (cost[costly] - cost[cheap])
    for c_r in PAPER_C_R:  # Corollary 4: the difference does not depend on C_R
        area_s = utility_area(a, d, c, cost, score_s, c_r=c_r)
        area_t = utility_area(a, d, c, cost, score_t, c_r=c_r)
        assert area_s.area - area_t.area == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert area_s.utility_auc > area_t.utility_auc
    assert aurc(a & c, score_s) == pytest.approx(aurc(a & c, score_t), abs=1e-15)


# --------------------------------------------------------------------------- Proposition 8


def test_proposition8_cw_aurc_and_utility_auc_order_differently() -> None:
    """(p, L) = (0.1, 0.1), (0.9, 1): CW-AURC puts sample 1 first, UtilityAUC sample 2."""
    from benchmarks import cw_aurc

    p = np.array([0.1, 0.9])
    cost = np.array([0.1, 1.0])
    ell = (1.0 - p) * cost
    q = np.asarray(expected_utility(p, cost))
    np.testing.assert_allclose(ell, [0.09, 0.10])
    np.testing.assert_allclose(q, [0.01, 0.80])
    cw_order = np.argsort(ell, kind="stable")  # increasing expected error cost
    ua_order = np.argsort(-q, kind="stable")  # decreasing expected utility
    assert cw_order.tolist() == [0, 1]
    assert ua_order.tolist() == [1, 0]

    # The same through the metrics: expectations over the four outcome combinations.
    def expectations(score: list[float], c_r: float) -> tuple[float, float]:
        e_cw = e_area = 0.0
        for outcome in itertools.product([True, False], repeat=2):
            prob = math.prod(pi if ci else 1 - pi for pi, ci in zip(p, outcome, strict=True))
            e_cw += prob * cw_aurc(list(outcome), cost, score)
            e_area += prob * utility_area([True, True], [True, True], list(outcome), cost,
                                          score, c_r=c_r).area
        return e_cw, e_area

    first_1, first_2 = [1.0, 0.0], [0.0, 1.0]
    for c_r in PAPER_C_R:
        cw_1, area_1 = expectations(first_1, c_r)
        cw_2, area_2 = expectations(first_2, c_r)
        assert cw_1 < cw_2  # CW-AURC (lower is better) prefers sample 1 first
        assert area_2 > area_1  # the expected utility area prefers sample 2 first
        # Lemma 3: E[area] = B + sum_j w_j (C_R + q_{pi_j}), w = (3/8, 1/8)
        assert area_2 == pytest.approx(-c_r + 0.375 * (c_r + 0.8) + 0.125 * (c_r + 0.01))


# --------------------------------------------------------------------------- range, n = 1


@settings(max_examples=200, deadline=None)
@given(data=datasets(), c_r=st.floats(0.0, 100.0, allow_nan=False))
def test_utility_auc_is_in_unit_interval(data: Data, c_r: float) -> None:
    value = utility_auc(*data, c_r=c_r)
    assert 0.0 <= value <= 1.0
    sweep = utility_auc_sweep(*data, [0.0, c_r, 64.0])
    assert ((sweep >= 0.0) & (sweep <= 1.0)).all()


@pytest.mark.parametrize(
    ("answerable", "answered", "correct", "cost", "c_r", "expected"),
    [
        pytest.param(True, True, True, 5.0, 2.0, 1.0, id="correct-answer"),
        pytest.param(True, True, False, 5.0, 2.0, 0.0, id="costly-error-is-the-worst"),
        pytest.param(True, True, False, 1.0, 2.0, 1.0 / 3.0, id="cheap-error-beats-refusing"),
        pytest.param(True, False, None, 5.0, 2.0, 0.5, id="refusal-better-than-error"),
        pytest.param(True, False, None, 1.0, 2.0, 0.0, id="refusal-is-the-worst"),
        pytest.param(False, False, None, 5.0, 2.0, 1.0, id="necessary-refusal"),
        pytest.param(False, True, None, 5.0, 2.0, 0.0, id="answering-refusal-required"),
        pytest.param(True, True, True, 5.0, 0.0, 1.0, id="c_r-0-correct"),
    ],
)
def test_single_sample(
    answerable: bool, answered: bool, correct: bool | None, cost: float, c_r: float,
    expected: float,
) -> None:
    got = utility_auc([answerable], [answered], [correct], [cost], [0.3], c_r=c_r)
    assert got == pytest.approx(expected, abs=1e-12)
    data: Data = ([answerable], [answered], [bool(correct)], [cost], [0.3])
    assert got == pytest.approx(naive_utility_auc(data, c_r), abs=1e-12)
    assert utility_auc_sweep(*data, [c_r])[0] == pytest.approx(expected, abs=1e-12)


# --------------------------------------------------------------------------- ties


@pytest.mark.parametrize("seed", range(4))
def test_input_order_does_not_matter_under_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, d, c, cost, score = (np.asarray(x) for x in random_data(rng, 300, n_levels=5))
    ref = utility_area(a, d, c, cost, score)
    ref_curve = utility_curve(a, d, c, cost, score)[1]
    for _ in range(10):
        p = rng.permutation(a.shape[0])
        got = utility_area(a[p], d[p], c[p], cost[p], score[p])
        assert got.area == pytest.approx(ref.area, abs=1e-12)
        assert got.area_max == pytest.approx(ref.area_max, abs=1e-12)
        assert got.area_min == pytest.approx(ref.area_min, abs=1e-12)
        np.testing.assert_allclose(utility_curve(a[p], d[p], c[p], cost[p], score[p])[1],
                                   ref_curve, atol=1e-12)


def test_all_tied_is_the_mean_over_every_ordering() -> None:
    rng = np.random.default_rng(3)
    data = random_data(rng, 6, n_levels=1)
    for c_r in PAPER_C_R:
        area, _, _ = naive_area(data, c_r)  # averages all 720 orderings
        assert utility_area(*data, c_r=c_r).area == pytest.approx(area, abs=1e-12)


# --------------------------------------------------------------------------- naive agreement


@pytest.mark.parametrize("c_r", PAPER_C_R)
def test_agrees_with_naive_implementation(c_r: float) -> None:
    rng = np.random.default_rng(int(c_r * 10) + 7)
    for _ in range(40):
        data = random_data(rng, int(rng.integers(1, 7)), n_levels=int(rng.integers(1, 4)))
        area, a_plus, a_minus = naive_area(data, c_r)
        got = utility_area(*data, c_r=c_r)
        assert got.area == pytest.approx(area, abs=1e-9)
        assert got.area_max == pytest.approx(a_plus, abs=1e-9)
        assert got.area_min == pytest.approx(a_minus, abs=1e-9)
        expected = (area - a_minus) / (a_plus - a_minus)
        assert utility_auc(*data, c_r=c_r) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(data=datasets(max_n=5), c_r=st.sampled_from(PAPER_C_R))
def test_agrees_with_naive_implementation_hypothesis(data: Data, c_r: float) -> None:
    assert utility_auc(*data, c_r=c_r) == pytest.approx(naive_utility_auc(data, c_r), abs=1e-9)


# --------------------------------------------------------------------------- sweep


SWEEP_GRID = np.unique(np.concatenate(([0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
                                       np.geomspace(0.01, 100.0, 56))))


def _sweep_cases() -> Iterator[object]:
    rng = np.random.default_rng(11)
    yield pytest.param(random_data(rng, 200, n_levels=7), id="mixed-ties")
    _, d, c, cost, score = random_data(rng, 150)
    yield pytest.param(([True] * 150, d, c, cost, score), id="all-answerable")
    yield pytest.param(([False] * 150, d, c, cost, score), id="none-answerable")
    yield pytest.param(([True], [True], [False], [2.0], [0.1]), id="n=1")
    yield pytest.param(random_data(rng, 100, n_levels=1), id="all-tied")
    costs = rng.choice([0.5, 1.0, 2.0, 4.0, 8.0], 120).tolist()  # costs equal to grid values
    yield pytest.param((*random_data(rng, 120)[:3], costs, rng.random(120).tolist()),
                       id="costs-on-the-grid")


@pytest.mark.parametrize("data", list(_sweep_cases()))
def test_sweep_equals_one_call_per_c_r(data: Data) -> None:
    assert SWEEP_GRID.shape == (65,)
    sweep = utility_auc_sweep(*data, SWEEP_GRID)
    single = np.array([utility_auc(*data, c_r=float(c_r)) for c_r in SWEEP_GRID])
    np.testing.assert_allclose(sweep, single, atol=1e-9, rtol=0)


@settings(max_examples=100, deadline=None)
@given(data=datasets(), grid=st.lists(st.floats(0.0, 100.0, allow_nan=False), min_size=1,
                                      max_size=8))
def test_sweep_equals_one_call_per_c_r_hypothesis(data: Data, grid: list[float]) -> None:
    grid = [*grid, 0.5, 1.0, 2.0, 8.0]  # values that coincide with costs of the strategy
    sweep = utility_auc_sweep(*data, grid)
    single = [utility_auc(*data, c_r=c_r) for c_r in grid]
    np.testing.assert_allclose(sweep, single, atol=1e-9, rtol=0)


# --------------------------------------------------------------------------- bad input

GOOD = {
    "answerable": [True, False],
    "answered": [True, True],
    "correct": [True, None],
    "cost": [1.0, 2.0],
    "score": [0.9, 0.1],
}


@pytest.mark.parametrize(
    ("change", "match"),
    [
        pytest.param({"answered": [True, True, False]},
                     r"1-D arrays of one length; got answerable\(2,\), answered\(3,\)",
                     id="answered-length"),
        pytest.param({"cost": [1.0]}, r"cost\(1,\)", id="cost-length"),
        pytest.param({"cost": [1.0, 0.0]}, r"cost must be a finite cost > 0", id="cost-zero"),
        pytest.param({"cost": [1.0, float("nan")]}, r"cost must not be NaN", id="cost-nan"),
        pytest.param({"correct": [None, None]}, r"correct is missing at index 0",
                     id="correct-missing"),
        pytest.param({"correct": [True, "x"]}, r"correct must be booleans", id="correct-text"),
        pytest.param({"answerable": [2, 0]}, r"answerable must be booleans", id="answerable-2"),
        pytest.param({"score": [0.5, float("nan")]}, r"score must not be NaN", id="score-nan"),
        pytest.param({"score": [0.5]}, r"score must have shape \(2,\)", id="score-length"),
        pytest.param({"c_r": -1.0}, r"c_r must be a finite refusal cost >= 0", id="c_r-negative"),
        pytest.param({"c_r": [1.0, 2.0]}, r"c_r must be a single number", id="c_r-array"),
        pytest.param({"answerable": [], "answered": [], "correct": [], "cost": [],
                      "score": []}, r"at least one sample", id="empty"),
    ],
)
def test_bad_input_names_the_argument(change: dict[str, object], match: str) -> None:
    kwargs: dict[str, object] = {**GOOD, **change}
    with pytest.raises(ValueError, match=match):
        utility_auc(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        pytest.param([1.0, -1.0], r"c_r_values must be a finite refusal cost >= 0",
                     id="negative"),
        pytest.param([[1.0, 2.0]], r"c_r_values must be a 1-D list", id="2-d"),
        pytest.param([float("nan")], r"c_r_values must not be NaN", id="nan"),
    ],
)
def test_sweep_bad_grid(grid: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        utility_auc_sweep(GOOD["answerable"], GOOD["answered"], GOOD["correct"], GOOD["cost"],
                          GOOD["score"], grid)
