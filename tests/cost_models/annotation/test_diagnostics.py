"""Annotation diagnostics on hand-made judgments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cost_models.annotation.diagnostics import (
    judge_agreement,
    judgments_per_item,
    self_agreement,
    split_half_reliability,
)
from cost_models.annotation.fit import Judgment
from cost_models.annotation.tuples import build_tuples


def test_judge_agreement_counts_pairs_of_different_judges() -> None:
    judgments = [
        Judgment("t1", "a", "b", "x"), Judgment("t1", "a", "c", "y"),  # best agrees
        Judgment("t2", "a", "b", "x"), Judgment("t2", "a", "b", "y"),  # both agree
        Judgment("t3", "a", "b", "x"), Judgment("t3", "c", "d", "x"),  # same judge: no pair
    ]
    agreement = judge_agreement(judgments)
    assert agreement.to_dict() == {"pairs": 2, "best": 1.0, "worst": 0.5, "both": 0.5}


def test_agreement_without_pairs_is_undefined() -> None:
    agreement = judge_agreement([Judgment("t1", "a", "b", "x")])
    assert agreement.pairs == 0
    assert math.isnan(agreement.best)


def test_self_agreement_compares_the_repeated_tuples() -> None:
    first = [Judgment("t1", "a", "b"), Judgment("t2", "c", "d"), Judgment("t3", "a", "d")]
    repeat = [Judgment("t1", "a", "c"), Judgment("t2", "c", "d")]
    assert self_agreement(first, repeat).to_dict() == {
        "pairs": 2, "best": 1.0, "worst": 0.5, "both": 0.5}


def test_judgments_per_item() -> None:
    tuples = {"t1": ["a", "b", "c", "d"], "t2": ["a", "b", "c", "e"]}
    judgments = [Judgment("t1", "a", "b"), Judgment("t1", "a", "c"), Judgment("t2", "a", "b")]
    assert judgments_per_item(tuples, judgments) == {
        "min": 1.0, "median": 3.0, "mean": pytest.approx(2.4), "max": 3.0}


def test_split_half_reliability_is_high_for_consistent_judges() -> None:
    rng = np.random.default_rng(0)
    ids = [f"i{k}" for k in range(200)]
    eta = dict(zip(ids, rng.normal(0, 2, len(ids)), strict=True))
    tuples = {t.tuple_id: list(t.items) for t in build_tuples(ids, ["g"] * len(ids), ratio=3)}
    judgments = []
    for tid, members in tuples.items():
        order = sorted(members, key=lambda i: eta[i] + rng.gumbel() * 0.3)
        judgments.append(Judgment(tid, order[-1], order[0]))
    rho = split_half_reliability(tuples, judgments, ids, seed=1)
    assert 0.6 < rho <= 1.0


def test_position_balance_counts_choices_by_position() -> None:
    from cost_models.annotation.diagnostics import position_balance

    tuples = {"t1": ["a", "b", "c", "d"], "t2": ["d", "c", "b", "a"], "t3": ["a", "c", "b", "d"]}
    judgments = [Judgment("t1", "a", "d"), Judgment("t2", "a", "d"), Judgment("t3", "b", "a"),
                 Judgment("t1", "a", "b", "second")]
    got = position_balance(tuples, judgments)
    assert got["most"] == [2, 0, 1, 1]  # a first in t1 (twice), a last in t2, b third in t3
    assert got["least"] == [2, 1, 0, 1]  # d last in t1, d first in t2, a first in t3, b in t1
    assert 0.0 < got["most_chi2_p"] <= 1.0 and 0.0 < got["least_chi2_p"] <= 1.0
    skewed = position_balance({f"t{k}": ["a", "b", "c", "d"] for k in range(200)},
                              [Judgment(f"t{k}", "a", "b") for k in range(200)])
    assert skewed["most"] == [200, 0, 0, 0] and skewed["most_chi2_p"] < 1e-6


def test_exposure_report_bands_appearances() -> None:
    from cost_models.annotation.diagnostics import exposure_report

    # a, b in 3 tuples; c in 4; d in 6: 3 + 3 + 4 + 6 = 16 = 4 tuples of 4
    tuples = {"t1": ["a", "b", "c", "d"], "t2": ["a", "b", "c", "d"], "t3": ["a", "b", "c", "d"],
              "t4": ["c", "d", "x", "y"], "t5": ["d", "x", "y", "z"], "t6": ["d", "x", "y", "z"]}
    cost = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 50.0}
    rows = exposure_report(tuples, cost, top=0.75)
    assert [r["appearances"] for r in rows] == ["3", "4", "6-7"]
    assert [r["items"] for r in rows] == [2, 1, 1]
    assert rows[0]["median_cost"] == 1.5 and rows[2]["max_cost"] == 50.0
    assert [r["top_share"] for r in rows] == [0.0, 0.0, 1.0]
