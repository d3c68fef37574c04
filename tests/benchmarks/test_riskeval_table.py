"""The RiskEval table of docs/results.md (``python -m benchmarks.riskeval_table``) on four
records whose figures are worked out by hand: a right answer earns 1, a wrong one (or an answer
to a question that must be refused) costs L, a decline scores 0; the guard on the stated
confidence answers iff it is at least L / (1 + L)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench.contexts import mean_ci
from benchmarks.riskeval_table import rows, table


def _rec(rid: str, answered: bool, correct: bool, verbal: float | None) -> dict[str, object]:
    return {"id": rid, "answered": answered, "correct": correct, "response": "x",
            "confidence": {"verbal": verbal}}


RECORDS = {10: [_rec("a1", True, True, 0.95),    # right: +1
                _rec("a2", True, False, 0.95),   # wrong: -10
                _rec("r1", True, True, 0.5),     # answers a question to refuse: -10
                _rec("r2", False, False, None)]}  # declines: 0
ANSWERABLE = {"a1": True, "a2": True, "r1": False, "r2": False}


def test_the_rows_are_the_hand_computed_figures() -> None:
    (row,) = rows(RECORDS, ANSWERABLE, calibrated=lambda r: 0.99 if r["id"] == "a1" else 0.5)
    assert row["answer_rate"] == 0.75
    assert row["answered_accuracy"] == pytest.approx(1 / 3)
    assert row["mean_confidence"] == pytest.approx(0.6)  # a missing statement counts 0
    assert row["model_points"] == pytest.approx((1 - 10 - 10 + 0) / 4)
    # 10/11 = 0.909: the two 95% statements answer, the 50% one is declined
    assert row["guard_stated_points"] == pytest.approx((1 - 10) / 4)
    assert row["guard_stated_answer_rate"] == 0.5
    # the calibrated p reaches 0.909 only for the right answer
    assert row["guard_default_points"] == pytest.approx(1 / 4)
    assert row["guard_default_answer_rate"] == 0.25
    assert "| 10 | 0.750 | 0.333 |" in table([row])


def test_mean_ci_is_a_percentile_interval_of_resampled_means() -> None:
    assert mean_ci(np.full(5, 2.0), np.zeros((10, 5), dtype=int)) == [2.0, 2.0]
    values = np.array([0.0, 1.0])
    samples = np.array([[0, 0]] * 50 + [[1, 1]] * 50)  # half the resamples' means 0, half 1
    low, high = mean_ci(values, samples)
    assert low == 0.0 and high == 1.0
