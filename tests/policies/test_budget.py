"""The budget solver against a brute-force sweep and the LP, the frontier's slope against
finite differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from policies import (
    budget_range,
    frontier_at,
    price_points,
    refusal_count,
    solve_budget,
)
from utilityguard_base.exceptions import InvalidValueError


def _items(seed: int, n: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.0, 1.0, n)
    p[rng.random(n) < 0.15] = np.nan  # the model refused: never answered
    cost = np.exp(rng.normal(1.0, 1.0, n))
    alpha = rng.uniform(0.3, 1.0, n)
    labels = (rng.random(n) < 0.7).astype(float)
    return p, cost, alpha, labels


def _refused_by_hand(c_r: float | np.ndarray, p: np.ndarray, cost: np.ndarray, alpha: np.ndarray
                     ) -> np.ndarray:
    """The rule written out independently: answer iff q >= 1 - alpha (1 + C_R)."""
    q = p - (1 - p) * cost
    answer = np.nan_to_num(q, nan=-np.inf) >= 1 - alpha * (1 + c_r) - 1e-12
    out: np.ndarray = ~(np.isfinite(p) & answer)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("use_labels", [True, False], ids=["labels", "alpha"])
def test_solver_matches_a_brute_force_sweep(seed: int, use_labels: bool) -> None:
    p, cost, alpha, labels = _items(seed)
    weight = labels if use_labels else alpha
    grid = np.arange(0.0, 80.0, 0.001)
    counts = (_refused_by_hand(grid[:, None], p, cost, alpha) * weight).sum(axis=1)
    for budget in np.linspace(counts.min(), counts.max(), 7):
        s = solve_budget(p, cost, float(budget), alpha=alpha, weight=weight)
        smallest = grid[np.argmax(counts <= budget + 1e-9)]
        assert smallest - 0.001 - 1e-6 <= s.c_r <= smallest + 1e-6
        assert s.refused <= budget + 1e-9
        assert weight[_refused_by_hand(s.c_r, p, cost, alpha)].sum() == pytest.approx(s.refused)
        if s.binding and s.feasible:  # randomizing the boundary meets the budget exactly
            assert s.refused_expected == pytest.approx(budget)


@pytest.mark.parametrize("seed", range(4))
def test_frontier_is_the_lp_value_and_its_dual(seed: int) -> None:
    p, cost, alpha, _ = _items(seed, n=15)
    have = np.isfinite(p)
    q = np.where(have, np.nan_to_num(p) - (1 - np.nan_to_num(p)) * cost, 0.0)
    lo, hi = budget_range(p, cost, alpha=alpha)
    budgets = np.linspace(lo, hi, 9)[1:-1] + 0.013  # off the kinks
    f = frontier_at(p, cost, budgets.tolist(), alpha=alpha)
    for b, welfare, c_r in zip(f.budget, f.welfare, f.c_r, strict=True):
        # max sum x q + (1 - x)(1 - alpha)  s.t.  sum (1 - x) alpha <= b,  x = 0 without p
        # sum (1 - x) alpha <= b  <=>  -sum x alpha <= b - sum alpha
        res = linprog(-(q - (1 - alpha)), A_ub=[-alpha], b_ub=[b - alpha.sum()],
                      bounds=[(0, 1) if h else (0, 0) for h in have], method="highs")
        assert res.status == 0
        lp_value = -res.fun + (1 - alpha).sum()
        assert welfare == pytest.approx(lp_value, abs=1e-7)
        assert c_r == pytest.approx(-res.ineqlin.marginals[0], abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_the_slope_of_the_frontier_is_the_price(seed: int) -> None:
    p, cost, alpha, _ = _items(seed, n=20)
    lo, hi = budget_range(p, cost, alpha=alpha)
    h = 1e-4
    for b in np.linspace(lo, hi, 11)[1:-1] + 0.0037:
        f = frontier_at(p, cost, [b - h, b, b + h], alpha=alpha)
        slope = (f.welfare[2] - f.welfare[0]) / (2 * h)
        assert slope == pytest.approx(f.c_r[1], rel=1e-4, abs=1e-6)


def test_the_price_falls_as_the_budget_grows() -> None:
    p, cost, alpha, labels = _items(7, n=200)
    prices = [solve_budget(p, cost, b, alpha=alpha, weight=labels).c_r
              for b in range(15, 120, 5)]
    assert all(a >= b for a, b in itertools.pairwise(prices))
    assert prices[0] > prices[-1]


def test_a_fixed_price_is_a_point_of_the_frontier() -> None:
    p, cost, alpha, _ = _items(3, n=40)
    for c_r, budget, welfare in price_points(p, cost, [0.5, 2.0, 8.0], alpha=alpha):
        f = frontier_at(p, cost, [budget], alpha=alpha)
        assert f.welfare[0] == pytest.approx(welfare, abs=1e-9)
        assert f.c_r[0] <= c_r + 1e-6
        assert refusal_count(p, cost, f.c_r[0], alpha=alpha, weight=alpha) <= budget + 1e-9


@pytest.mark.parametrize(("kwargs", "match"), [
    pytest.param({"budget": -1.0}, "budget must be a finite count >= 0", id="negative"),
    pytest.param({"budget": float("nan")}, "budget must be a finite", id="nan"),
    pytest.param({"budget": 1.0, "weight": [-1.0, 1.0]}, "weight must be", id="weight"),
    pytest.param({"budget": 1.0, "p": [1.5, 0.2]}, r"p must be a probability in \[0, 1\]", id="p"),
    pytest.param({"budget": 1.0, "c_r_max": 0.0}, "c_r_max must be", id="c_r_max"),
])
def test_bad_input_is_named(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"p": [0.5, 0.2], "cost": [2.0, 3.0], **kwargs}
    with pytest.raises(InvalidValueError, match=match):
        solve_budget(**args)  # type: ignore[arg-type]
