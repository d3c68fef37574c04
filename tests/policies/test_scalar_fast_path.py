"""The scalar fast paths of :mod:`policies.decision` (plain Python floats) return the array
path's values bit for bit and raise where it raises.

The array path is reached by passing the same values as 0-d numpy arrays (not plain floats),
so each case compares the two implementations on identical inputs."""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from policies import answer_threshold, expected_utility, refusal_expected_utility
from utilityguard_base.exceptions import InvalidValueError

HOSTILE = [0.0, -0.0, 1.0, 5e-324, 2.2250738585072014e-308, 1e-300, 0.5, 1.0 - 2 ** -53,
           1.0 + 2 ** -52, 2.0, 3.0, 1e15, 1e300, 1.7976931348623157e308, math.inf, -math.inf,
           math.nan, -1.0, -5e-324]


def _bits(x: Any) -> bytes:
    assert type(x) is float  # the public functions return Python floats for scalars
    return struct.pack("<d", x)


def _values(seed: int, n: int) -> list[float]:
    rng = random.Random(seed)
    out = list(HOSTILE)
    for _ in range(n):
        out.append(rng.choice([rng.random(), rng.uniform(0, 50), math.exp(rng.uniform(-30, 30)),
                               float(rng.randint(0, 20)), rng.random() * 1e-10]))
    return out


def _same(fn: Callable[..., Any], *args: float, **kwargs: float) -> None:
    """``fn`` on floats and on 0-d arrays: equal bits, or both raise InvalidValueError."""
    arr_args = [np.asarray(a) for a in args]
    arr_kwargs = {k: np.asarray(v) for k, v in kwargs.items()}
    try:
        slow = fn(*arr_args, **arr_kwargs)
    except InvalidValueError:
        with pytest.raises(InvalidValueError):
            fn(*args, **kwargs)
        return
    assert _bits(fn(*args, **kwargs)) == _bits(slow), (fn.__name__, args, kwargs)


def test_answer_threshold_fast_path_is_the_array_path() -> None:
    costs, crs, alphas = _values(1, 300), _values(2, 40), _values(3, 40)
    for cost in costs:
        for c_r in crs[::3]:
            for alpha in alphas[::4]:
                _same(answer_threshold, cost, c_r, alpha=alpha)


def test_expected_utilities_fast_path_is_the_array_path() -> None:
    ps, costs = _values(4, 300), _values(5, 300)
    for p in ps:
        for cost in costs[::7]:
            _same(expected_utility, p, cost)
        for alpha in costs[::7]:
            _same(refusal_expected_utility, p, alpha=alpha)
            _same(refusal_expected_utility, alpha, alpha=p)


def test_the_fast_path_rejects_what_the_array_path_rejects() -> None:
    # invalid scalars fall back to the checks, which name the argument
    with pytest.raises(InvalidValueError, match="cost"):
        answer_threshold(0.0, 2.0)
    with pytest.raises(InvalidValueError, match="c_r"):
        answer_threshold(3.0, math.inf)
    with pytest.raises(InvalidValueError, match="alpha"):
        answer_threshold(3.0, 2.0, alpha=math.nan)
    with pytest.raises(InvalidValueError, match="p"):
        expected_utility(1.5, 2.0)
    with pytest.raises(InvalidValueError, match="c_r"):
        refusal_expected_utility(-0.1)


def test_known_values() -> None:
    # stated independently of the code: (8 - 2) / 9, (3 + 1 - 0.5 * 2) / 4, 0.9 - 0.1 * 1
    assert answer_threshold(8.0, 2.0) == 6.0 / 9.0
    assert answer_threshold(3.0, 1.0, alpha=0.5) == 0.75
    assert expected_utility(0.9, 1.0) == 0.9 - 0.1 * 1.0
    assert refusal_expected_utility(2.0, alpha=0.5) == -0.5
    # non-floats (ints, bools, numpy scalars) keep working through the array path
    assert answer_threshold(8, 2) == 6.0 / 9.0
    assert answer_threshold(np.float64(8.0), 2.0) == 6.0 / 9.0


def _same_lognormal(mu: float, s2: float) -> None:
    """``expected_cost_lognormal`` on floats and on a one-element mu (the array path, as the
    cost model called it before): equal bits, or both raise."""
    from policies.decision import expected_cost_lognormal

    try:
        slow = expected_cost_lognormal(np.array([mu]), np.asarray(s2))
    except InvalidValueError:
        with pytest.raises(InvalidValueError):
            expected_cost_lognormal(mu, s2)
        return
    assert _bits(expected_cost_lognormal(mu, s2)) == _bits(float(slow[0])), (mu, s2)


def test_expected_cost_lognormal_fast_path_is_the_array_path() -> None:
    from policies.decision import expected_cost_lognormal

    mus = [m for m in _values(6, 400) if abs(m) < 700] + [-m for m in _values(7, 200)
                                                         if abs(m) < 700]
    with np.errstate(over="ignore"):  # both paths overflow to inf alike
        for mu in mus:
            for s2 in _values(8, 30):
                _same_lognormal(mu, s2)
    assert expected_cost_lognormal(0.0, 0.0) == 1.0
    # exp(1 + 2 / 2) = e^2, within rounding of the C library's exp
    assert abs(expected_cost_lognormal(1.0, 2.0) - math.exp(2.0)) <= 2 * math.ulp(math.exp(2.0))
