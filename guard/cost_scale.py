"""A policy's cost scale: a request's raw cost mapped to ``E[L | that raw cost]``.

The guard prices a request by the **maximum** over its question segments
(:mod:`guard.segments`), so that no question a request carries is priced lower than it would
be alone: that maximum is the request's *raw cost* (the costliest segment's ``E[L]``, before
any scale). The maximum of several noisy estimates is biased upwards: on the seed set it was
about 1.15 times (median) above the cost model's ``E[L]`` of the whole text. A
:class:`CostScale` is fitted on out-of-fold raw costs of the training questions (each priced
by a cost model that did not see its source, exactly as the runtime prices it) against their
true costs, and maps a raw cost to the conditional mean of the cost at that raw cost — what
the decision rule needs, since it is linear in ``L``; the scaled value is the ``cost`` of
the :class:`~guard.price.Price`.

The map is **strictly increasing**, so it keeps every order the maximum makes: a request
that carries a question is still priced at least as high as the question alone (the
adversarial guarantee of :mod:`guard.segments`), and the costliest segment stays the same
one. It is piecewise linear in ``(log raw cost, log cost)`` between its knots and has slope 1
beyond them (a raw cost above every training one is scaled like the highest, never capped).
Its state is a few numbers in ``policy.json`` (the raw costs' logs under ``log_price``, the
key of the format): loading it runs no code.

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
#: A fitted scale is fitted on at least this many raw costs.
MIN_ROWS = 50


@dataclass(frozen=True)
class CostScale:
    """``raw cost -> E[L | raw cost]``, strictly increasing (see the module docstring)."""

    log_raw: tuple[float, ...]
    log_cost: tuple[float, ...]
    n: int = 0  # the raw costs it was fitted on

    def __post_init__(self) -> None:
        x, y = np.asarray(self.log_raw, float), np.asarray(self.log_cost, float)
        if x.ndim != 1 or x.shape != y.shape or not 1 <= x.size <= MAX_KNOTS:
            raise ConfigError(f"a cost scale needs 1 to {MAX_KNOTS} knots, as many log "
                              "raw costs as log costs")
        if not (np.isfinite(x).all() and np.isfinite(y).all()):
            raise ConfigError("a cost scale's knots must be finite")
        if (np.diff(x) <= 0).any() or (np.diff(y) <= 0).any():
            raise ConfigError("a cost scale's knots must be strictly increasing")

    @cached_property
    def _knots(self) -> tuple[FloatArray, FloatArray]:
        """The knots as arrays, made once (the scale prices every request)."""
        return np.asarray(self.log_raw, dtype=np.float64), \
            np.asarray(self.log_cost, dtype=np.float64)

    def apply(self, raw: Any) -> FloatArray:
        """The scaled costs of raw costs ``> 0`` (an array)."""
        lp = np.log(np.asarray(raw, dtype=np.float64))
        x, y = self._knots
        out = np.interp(lp, x, y)
        out = np.where(lp < x[0], y[0] + (lp - x[0]), out)
        out = np.where(lp > x[-1], y[-1] + (lp - x[-1]), out)
        return np.asarray(np.exp(out), dtype=np.float64)

    def __call__(self, raw: float) -> float:
        """:meth:`apply` of one raw cost, on numpy scalars (the proxy scales one per
        request): the same log, interpolation, extrapolation and exp, so the same bits
        (``tests/guard/test_cost_scale_scalar.py``), without four array round trips."""
        lp = np.log(np.float64(raw))
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
        return {"kind": "monotone log-log", "log_price": list(self.log_raw),
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


def fit_cost_scale(raw: Sequence[float] | FloatArray, cost: Sequence[float] | FloatArray
                   ) -> CostScale:
    """The scale from the out-of-fold ``raw`` costs of training questions to their true
    ``cost``s: isotonic regression of the cost on the raw cost (the conditional mean, no
    distribution assumed), its blocks as knots at (mean log raw cost, log mean cost),
    thinned to :data:`MAX_KNOTS`.

    >>> rng = np.random.default_rng(0)
    >>> c = np.exp(rng.normal(0, 1, 400))
    >>> s = fit_cost_scale(c * 1.5, c)  # raw costs 1.5 times too high
    >>> round(s(3.0), 1)
    2.0
    """
    from sklearn.isotonic import IsotonicRegression

    p, c = np.asarray(raw, dtype=np.float64), np.asarray(cost, dtype=np.float64)
    if p.shape != c.shape or p.size < MIN_ROWS:
        raise ConfigError(f"a cost scale needs at least {MIN_ROWS} (raw cost, cost) pairs")
    if not (np.isfinite(p).all() and np.isfinite(c).all() and (p > 0).all() and (c > 0).all()):
        raise ConfigError("a cost scale needs finite raw costs and costs > 0")
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
