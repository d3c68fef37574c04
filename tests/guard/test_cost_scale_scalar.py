"""A cost scale applied to one price (``CostScale.__call__``, the proxy's path) gives the same
bits as its array path (``CostScale.apply``, the bench's), inside the knots, outside them on
either side, on the knots themselves and at the edges (0, inf, NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from guard.cost_scale import CostScale
from guard.policy import load_policy


def _scales() -> list[CostScale]:
    shipped = load_policy("smollm2").cost_scale
    assert shipped is not None  # the shipped policy has a scale
    return [shipped, CostScale((0.0,), (1.0,), 1),
            CostScale((-2.0, 0.5, 3.0), (-1.0, 0.0, 4.0), 3)]


@pytest.mark.parametrize("scale", _scales())
def test_one_price_is_scaled_as_the_array_path_scales_it(scale: CostScale) -> None:
    rng = np.random.default_rng(7)
    knots = np.exp(np.asarray(scale.log_raw))
    prices = np.concatenate([np.logspace(-8, 8, 4001), rng.lognormal(0.0, 3.0, 4000),
                             knots, np.nextafter(knots, 0), np.nextafter(knots, np.inf)])
    want = scale.apply(prices)
    got = np.array([scale(float(p)) for p in prices])
    np.testing.assert_array_equal(got, want)
    assert all(type(scale(float(p))) is float for p in prices[:5])


@pytest.mark.parametrize("scale", _scales())
def test_the_edges_are_the_array_paths(scale: CostScale) -> None:
    with np.errstate(divide="ignore"):
        assert scale(0.0) == float(scale.apply([0.0])[0]) == 0.0
    assert scale(math.inf) == float(scale.apply([math.inf])[0]) == math.inf
    # NaN in, whatever the array path makes of it (NaN, or the one knot's cost) out
    np.testing.assert_array_equal([scale(math.nan)], scale.apply([math.nan]))
