"""Weighted MaxDiff Bradley-Terry: recovery of known scores, weights, the cost scale."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import spearmanr

from cost_models.annotation.fit import (
    L2_GRID,
    Judgment,
    cost_scale,
    design,
    fit_bradley_terry,
    heldout_nll,
    nll_and_grad,
    select_l2,
)
from cost_models.annotation.tuples import build_tuples

Tuples = dict[str, tuple[str, ...]]


def _judge(eta: NDArray[np.float64], rng: np.random.Generator) -> tuple[int, int]:
    """A MaxDiff judge: best by Gumbel-perturbed eta, then worst among the other three."""
    best = int(np.argmax(eta + rng.gumbel(size=eta.size)))
    rest = [k for k in range(eta.size) if k != best]
    worst = rest[int(np.argmax(-eta[rest] + rng.gumbel(size=len(rest))))]
    return best, worst


@cache
def _simulation(n: int = 1200, seed: int = 0) -> tuple[
        list[str], NDArray[np.float64], Tuples, list[Judgment]]:
    """``n`` items with eta ~ Normal(0, sd 2), coarse groups from a noisy eta, 1.25 n tuples,
    two judges per tuple."""
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.0, 2.0, n)
    ids = [f"q{k:04d}" for k in range(n)]
    noisy = eta + rng.normal(0.0, 1.0, n)
    low, high = np.quantile(noisy, [0.6, 0.85])
    groups = ["low" if v < low else "medium" if v < high else "high" for v in noisy]
    tuples = {t.tuple_id: t.items for t in build_tuples(ids, groups, seed=seed)}
    truth = dict(zip(ids, eta, strict=True))
    judgments = []
    for tid, members in tuples.items():
        e = np.array([truth[i] for i in members])
        for judge in ("judge-a", "judge-b"):
            b, w = _judge(e, rng)
            judgments.append(Judgment(tid, members[b], members[w], judge))
    return ids, eta, tuples, judgments


def _rho(a: Sequence[float], b: Sequence[float]) -> float:
    return float(spearmanr(a, b).statistic)


def test_recovers_known_scores_from_simulated_judges() -> None:
    ids, eta, tuples, judgments = _simulation()
    assert len(tuples) == round(1.25 * len(ids))
    fit = fit_bradley_terry(tuples, judgments, ids)
    assert fit.converged
    assert fit.item_ids == tuple(ids)
    assert fit.n_judgments == 2 * len(tuples)
    assert fit.n_tuples == len(tuples)
    assert _rho(fit.eta, eta) >= 0.9


def test_random_judgments_recover_nothing() -> None:
    """The recovery test can fail: judgments unrelated to eta give no correlation."""
    ids, eta, tuples, judgments = _simulation()
    rng = np.random.default_rng(1)
    shuffled = []
    for j in judgments:
        members = tuples[j.tuple_id]
        b, w = rng.choice(len(members), size=2, replace=False)
        shuffled.append(Judgment(j.tuple_id, members[b], members[w], j.judge))
    fit = fit_bradley_terry(tuples, shuffled, ids)
    assert abs(_rho(fit.eta, eta)) < 0.3


def test_swapped_best_and_worst_reverse_the_scale() -> None:
    ids, eta, tuples, judgments = _simulation()
    swapped = [Judgment(j.tuple_id, j.worst, j.best, j.judge) for j in judgments]
    fit = fit_bradley_terry(tuples, swapped, ids)
    assert _rho(fit.eta, eta) <= -0.9


def test_fitted_eta_is_centred_and_costs_have_median_two() -> None:
    ids, _, tuples, judgments = _simulation()
    fit = fit_bradley_terry(tuples, judgments, ids)
    assert float(fit.eta.mean()) == pytest.approx(0.0, abs=1e-9)
    assert float(np.median(fit.cost)) == pytest.approx(2.0, rel=1e-12)
    assert fit.as_dict() == dict(zip(ids, fit.cost.tolist(), strict=True))


@pytest.mark.parametrize(
    "eta",
    [
        pytest.param([0.3], id="one"),
        pytest.param([0.0, 1.0, -1.0], id="three"),
        pytest.param([5.0, -2.0, 0.1, 0.7, 3.3], id="five"),
        pytest.param(list(np.random.default_rng(0).normal(0, 3, 1001)), id="1001-random"),
    ],
)
def test_cost_scale_median_is_exactly_two_for_odd_n(eta: list[float]) -> None:
    assert float(np.median(cost_scale(eta))) == 2.0


@pytest.mark.parametrize(
    "eta",
    [
        pytest.param([0.0, 1.0], id="two"),
        pytest.param([0.0, 1.0, -1.0, 3.0], id="four"),
        pytest.param([-40.0, -30.0, 30.0, 40.0], id="wide-middle"),
        pytest.param(list(np.random.default_rng(0).normal(0, 3, 1000)), id="1000-random"),
    ],
)
def test_cost_scale_median_is_two_for_even_n(eta: list[float]) -> None:
    assert float(np.median(cost_scale(eta))) == pytest.approx(2.0, rel=1e-12)


def test_cost_scale_is_two_exp_eta_minus_median() -> None:
    eta = np.array([0.0, 1.0, -1.0])
    np.testing.assert_allclose(cost_scale(eta), [2.0, 2 * math.e, 2 / math.e], rtol=1e-15)


def test_cost_scale_ignores_the_origin_of_eta_and_keeps_the_order() -> None:
    eta = np.random.default_rng(3).normal(0, 2, 50)
    np.testing.assert_allclose(cost_scale(eta + 7.5), cost_scale(eta), rtol=1e-12)
    assert (np.argsort(cost_scale(eta)) == np.argsort(eta)).all()


def test_cost_scale_of_nothing_raises() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        cost_scale([])


def _small() -> tuple[Tuples, list[Judgment]]:
    tuples = {"t1": ("a", "b", "c", "d"), "t2": ("a", "c", "e", "f"),
              "t3": ("b", "d", "e", "f"), "t4": ("a", "b", "e", "f")}
    judgments = [Judgment("t1", "a", "d", "x"), Judgment("t1", "b", "d", "y"),
                 Judgment("t2", "a", "f", "x"), Judgment("t3", "b", "f", "x"),
                 Judgment("t4", "a", "f", "x"), Judgment("t4", "a", "e", "y"),
                 Judgment("t4", "b", "f", "z")]
    return tuples, judgments


def test_weights_are_one_over_judgments_per_tuple() -> None:
    tuples, judgments = _small()
    _, _, _, weight = design(tuples, judgments, list("abcdef"))
    np.testing.assert_allclose(weight, [1 / 2, 1 / 2, 1, 1, 1 / 3, 1 / 3, 1 / 3])


def test_duplicating_every_judgment_leaves_the_fit_unchanged() -> None:
    ids, _, tuples, judgments = _simulation()
    once = fit_bradley_terry(tuples, judgments, ids)
    twice = fit_bradley_terry(tuples, judgments + judgments, ids)
    np.testing.assert_allclose(twice.eta, once.eta, atol=1e-6)


def test_a_tuple_judged_twice_weighs_as_much_as_one_judged_once() -> None:
    tuples, judgments = _small()
    ids = list("abcdef")
    base = fit_bradley_terry(tuples, judgments, ids, l2=0.1)
    # t2 judged once; give it a second, identical judgment from another judge
    more = [*judgments, Judgment("t2", "a", "f", "w")]
    np.testing.assert_allclose(fit_bradley_terry(tuples, more, ids, l2=0.1).eta, base.eta,
                               atol=1e-6)
    # unweighted, the extra judgment would count double and move the scores
    m, b, w, _ = design(tuples, more, ids)
    nll_unweighted = nll_and_grad(base.eta, m, b, w, np.ones(len(more)), 0.1)
    assert np.abs(nll_unweighted[1]).max() > 1e-3


def test_nll_of_one_judgment_is_the_sequential_maxdiff_likelihood() -> None:
    eta = np.array([0.5, -1.0, 2.0, 0.0])
    members = np.array([[0, 1, 2, 3]])
    nll, _ = nll_and_grad(eta, members, np.array([2]), np.array([1]), np.ones(1), 0.0)
    p_best = math.exp(2.0) / sum(math.exp(e) for e in eta)
    p_worst = math.exp(1.0) / sum(math.exp(-e) for e in (0.5, -1.0, 0.0))
    assert nll == pytest.approx(-math.log(p_best * p_worst), rel=1e-12)


@pytest.mark.parametrize("l2", [pytest.param(0.0, id="no-prior"), pytest.param(0.3, id="prior")])
def test_gradient_matches_finite_differences(l2: float) -> None:
    tuples, judgments = _small()
    ids = list("abcdef")
    m, b, w, wt = design(tuples, judgments, ids)
    eta = np.random.default_rng(7).normal(0.0, 1.5, len(ids))
    _, grad = nll_and_grad(eta, m, b, w, wt, l2)
    h = 1e-6
    numeric = np.empty_like(eta)
    for k in range(eta.size):
        step = np.zeros_like(eta)
        step[k] = h
        numeric[k] = (nll_and_grad(eta + step, m, b, w, wt, l2)[0]
                      - nll_and_grad(eta - step, m, b, w, wt, l2)[0]) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_gradient_is_stable_for_extreme_scores() -> None:
    tuples, judgments = _small()
    m, b, w, wt = design(tuples, judgments, list("abcdef"))
    eta = np.array([800.0, -800.0, 400.0, 0.0, -400.0, 10.0])
    nll, grad = nll_and_grad(eta, m, b, w, wt, 0.0)
    assert math.isfinite(nll)
    assert np.isfinite(grad).all()


@pytest.mark.parametrize(
    ("judgment", "match"),
    [
        pytest.param(Judgment("t9", "a", "b"), "unknown tuple", id="unknown-tuple"),
        pytest.param(Judgment("t1", "e", "b"), "invalid judgment", id="best-outside"),
        pytest.param(Judgment("t1", "a", "f"), "invalid judgment", id="worst-outside"),
        pytest.param(Judgment("t1", "a", "a"), "invalid judgment", id="best-is-worst"),
    ],
)
def test_invalid_judgments_raise(judgment: Judgment, match: str) -> None:
    tuples, judgments = _small()
    with pytest.raises(ValueError, match=match):
        fit_bradley_terry(tuples, [*judgments, judgment])


def test_no_judgments_raise() -> None:
    tuples, _ = _small()
    with pytest.raises(ValueError, match="no judgments"):
        fit_bradley_terry(tuples, [])


def test_tuples_of_different_sizes_raise() -> None:
    tuples: dict[str, tuple[str, ...]] = {"t1": ("a", "b", "c", "d"), "t2": ("a", "b", "c")}
    judgments = [Judgment("t1", "a", "b"), Judgment("t2", "a", "b")]
    with pytest.raises(ValueError, match="same size"):
        fit_bradley_terry(tuples, judgments)


def test_items_missing_from_item_ids_raise() -> None:
    tuples, judgments = _small()
    with pytest.raises(ValueError, match=r"not among the item ids: e, f"):
        fit_bradley_terry(tuples, judgments, list("abcd"))


def test_negative_l2_raises() -> None:
    tuples, judgments = _small()
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        fit_bradley_terry(tuples, judgments, l2=-0.1)


def test_item_ids_default_to_every_item_of_the_tuples_sorted() -> None:
    tuples, judgments = _small()
    assert fit_bradley_terry(tuples, judgments).item_ids == tuple("abcdef")


def test_judgment_from_dict_defaults_the_judge() -> None:
    assert Judgment.from_dict({"tuple_id": 3, "best": "a", "worst": "b"}) == Judgment(
        "3", "a", "b", "unknown")


def test_select_l2_returns_a_grid_value_with_every_score() -> None:
    _, _, tuples, judgments = _simulation()
    sub = {tid: tuples[tid] for tid in list(tuples)[:150]}
    js = [j for j in judgments if j.tuple_id in sub]
    grid = (0.03, 0.3, 3.0)
    best, scores = select_l2(sub, js, grid=grid, folds=3)
    assert best in grid
    assert set(scores) == set(grid)
    assert scores[best] == min(scores.values())
    assert all(math.isfinite(s) and s > 0 for s in scores.values())


def test_select_l2_default_grid() -> None:
    tuples, judgments = _small()
    best, scores = select_l2(tuples, judgments, folds=2)
    assert best in L2_GRID
    assert list(scores) == list(L2_GRID)


def test_heldout_nll_prefers_the_model_over_a_flat_prior() -> None:
    """Held-out tuples are predicted better than chance (log 4 + log 3 per judgment)."""
    _, _, tuples, judgments = _simulation()
    sub = {tid: tuples[tid] for tid in list(tuples)[:400]}
    js = [j for j in judgments if j.tuple_id in sub]
    ids = sorted({i for members in sub.values() for i in members})
    chance = math.log(4) + math.log(3)
    per_tuple = heldout_nll(sub, js, ids, 0.1, folds=3) / len(sub)
    assert per_tuple < chance
