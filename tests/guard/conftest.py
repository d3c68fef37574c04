"""Shared fakes for the guard tests: cost models that need no trained artifact."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from guard import Guard


class FixedCost:
    """A cost model that predicts the same ``E[L]`` for every query and counts its calls."""

    def __init__(self, cost: float) -> None:
        self.cost = cost
        self.calls = 0

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        self.calls += 1
        return np.full(len(texts), self.cost, dtype=np.float64)


class KeywordCost:
    """High cost for medical-sounding queries, low otherwise (a stand-in for the real model)."""

    def predict(self, texts: Sequence[str]) -> NDArray[np.float64]:
        return np.array(
            [20.0 if any(w in t.lower() for w in ("dose", "mg", "drug")) else 0.5 for t in texts]
        )


@pytest.fixture
def fixed_cost() -> Callable[[float], FixedCost]:
    return FixedCost


@pytest.fixture
def guard_with_cost() -> Callable[..., Guard]:
    def make(cost: float = 8.0, **kwargs: Any) -> Guard:
        return Guard(FixedCost(cost), **kwargs)

    return make


@pytest.fixture
def keyword_cost() -> KeywordCost:
    return KeywordCost()
