"""A policy's cost scale: the guard's price of a request mapped to ``E[L | that price]``.

The guard prices a request by the **maximum** over its question segments
(:mod:`guard.segments`), so that no question a request carries is priced lower than it would
be alone. The maximum of several noisy estimates is biased upwards: on the seed set it
priced questions about 1.15 times (median) above the cost model's price of the whole text.
A :class:`CostScale` is fitted on out-of-fold prices of the training questions (each priced
by a cost model that did not see its source, exactly as the runtime prices it) against their
true costs, and maps a price to the conditional mean of the cost at that price — what the
decision rule needs, since it is linear in ``L``.

The map is **strictly increasing**, so it keeps every order the maximum makes: a request
that carries a question is still priced at least as high as the question alone (the
adversarial guarantee of :mod:`guard.segments`), and the costliest segment stays the same
one. It is piecewise linear in ``(log price, log cost)`` between its knots and has slope 1
beyond them (a price above every training price is scaled like the highest one, never
capped). Its state is a few numbers in ``policy.json``: loading it runs no code.

>>> s = CostScale((0.0, 1.0), (0.0, 0.5))
>>> round(s(1.0), 6), round(s(math.e), 6), round(s(math.e ** 3), 6)
(1.0, 1.648721, 12.182494)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from guard.exceptions import ConfigError

FloatArray = NDArray[np.float64]
#: At most this many knots are kept (a fitted scale is data in policy.json, bounded).
MAX_KNOTS = 64
#: A fitted scale is fitted on at least this many prices.
MIN_ROWS = 50


@dataclass(frozen=True)
class CostScale:
    """``price -> E[L | price]``, strictly increasing (see the module docstring)."""

    log_price: tuple[float, ...]
    log_cost: tuple[float, ...]
    n: int = 0  # the prices it was fitted on

    def __post_init__(self) -> None:
        x, y = np.asarray(self.log_price, float), np.asarray(self.log_cost, float)
        if x.ndim != 1 or x.shape != y.shape or not 1 <= x.size <= MAX_KNOTS:
            raise ConfigError(f"a cost scale needs 1 to {MAX_KNOTS} knots, as many log "
                              "prices as log costs")
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ConfigError("a cost scale's knots must be finite")
        if (np.diff(x) <= 0).any() or (np.diff(y) <= 0).any():
            raise ConfigError("a cost scale's knots must be strictly increasing")

    @cached_property
    def _knots(self) -> tuple[FloatArray, FloatArray]:
        """The knots as arrays, made once (the scale prices every request)."""
        return np.asarray(self.log_price, dtype=np.float64), \
            np.asarray(self.log_cost, dtype=np.float64)

    def apply(self, price: Any) -> FloatArray:
        """The scaled costs of prices ``> 0`` (an array)."""
        lp = np.log(np.asarray(price, dtype=np.float64))
        x, y = self._knots
        out = np.interp(lp, x, y)
        out = np.where(lp < x[0], y[0] + (lp - x[0]), out)
        out = np.where(lp > x[-1], y[-1] + (lp - x[-1]), out)
        return np.asarray(np.exp(out), dtype=np.float64)

    def __call__(self, price: float) -> float:
        """:meth:`apply` of one price, on numpy scalars (the proxy scales one price per
        request): the same log, interpolation, extrapolation and exp, so the same bits
        (``tests/guard/test_cost_scale_scalar.py``), without four array round trips."""
        lp = np.log(np.float64(price))
        x, y = self._knots
        if lp < x[0]:
            out = y[0] + (lp - x[0])
        elif lp > x[-1]:
            out = y[-1] + (lp - x[-1])
        else:
            out = np.interp(lp, x, y)
        return float(np.exp(out))

    def to_data(self) -> dict[str, Any]:
        """The JSON a policy stores."""
        return {"kind": "monotone log-log", "log_price": list(self.log_price),
                "log_cost": list(self.log_cost), "n": self.n}

    @classmethod
    def from_data(cls, data: Any) -> CostScale:
        """Rebuild from :meth:`to_data` (every value checked: it is read from a file)."""
        if not isinstance(data, dict) or data.get("kind") != "monotone log-log":
            raise ConfigError("policy.json: cost_scale is not a monotone log-log scale")
        try:
            xs = tuple(float(v) for v in data["log_price"])
            ys = tuple(float(v) for v in data["log_cost"])
            n = int(data.get("n", 0))
        except (KeyError, TypeError, ValueError):
            raise ConfigError("policy.json: cost_scale needs lists of numbers log_price, "
                              "log_cost") from None
        return cls(xs, ys, n)


def fit_cost_scale(price: Sequence[float] | FloatArray, cost: Sequence[float] | FloatArray
                   ) -> CostScale:
    """The scale from out-of-fold ``price``s of training questions to their true ``cost``s:
    isotonic regression of the cost on the price (the conditional mean, no distribution
    assumed), its blocks as knots at (mean log price, log mean cost), thinned to
    :data:`MAX_KNOTS`.

    >>> rng = np.random.default_rng(0)
    >>> c = np.exp(rng.normal(0, 1, 400))
    >>> s = fit_cost_scale(c * 1.5, c)  # prices 1.5 times too high
    >>> round(s(3.0), 1)
    2.0
    """
    from sklearn.isotonic import IsotonicRegression

    p, c = np.asarray(price, dtype=np.float64), np.asarray(cost, dtype=np.float64)
    if p.shape != c.shape or p.size < MIN_ROWS:
        raise ConfigError(f"a cost scale needs at least {MIN_ROWS} (price, cost) pairs")
    if not (np.isfinite(p).all() and np.isfinite(c).all() and (p > 0).all() and (c > 0).all()):
        raise ConfigError("a cost scale needs finite prices and costs > 0")
    lp = np.log(p)
    fitted = IsotonicRegression(increasing=True).fit_transform(lp, c)
    xs: list[float] = []
    ys: list[float] = []
    for v in np.unique(fitted):  # one block per distinct fitted value, increasing
        block = fitted == v
        xs.append(float(lp[block].mean()))
        ys.append(math.log(float(v)))
    if len(xs) > MAX_KNOTS:  # thin evenly, keeping both ends
        keep = np.unique(np.linspace(0, len(xs) - 1, MAX_KNOTS).round().astype(int))
        xs, ys = [xs[k] for k in keep], [ys[k] for k in keep]
    return CostScale(tuple(xs), tuple(ys), int(p.size))
