"""Speed of the metric: UtilityAUC against one sort, the ``C_R`` sweep against one UtilityAUC.

* ``utility_auc`` on 10^6 random records whose scores have ties (3 decimals), against one
  ``numpy.argsort`` of 10^6 random floats: target ratio <= 3 (issue 26). The metric needs one
  argsort
  (the observed order) and one sort (the worst-case reference ``A-``), so about 2-3 is the
  floor.
* ``utility_auc_sweep`` over the bench's 65 ``C_R`` values (the paper's 0, 0.5, 1, 2, 4, 8,
  16, 32, 64 plus a log grid from 0.01 to 64) on 15,000 records, against one ``utility_auc`` call
  on the same records: target ratio <= 20 (65 separate calls would be about 65).

Times are medians of repeated runs, every round measuring both sides in turn.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.evaluate import PAPER_C_R, c_r_grid
from benchmarks.perf._common import PerfResult, median_times, ratio_result
from benchmarks.utility_auc import utility_auc, utility_auc_sweep

SEED = 20240601
N_LARGE = 1_000_000
N_SWEEP = 15_000
__all__ = ["PAPER_C_R", "c_r_grid", "records", "run"]  # the grid is the bench's own


Records = tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_], NDArray[np.float64],
                NDArray[np.float64]]


def records(n: int, seed: int = SEED) -> Records:
    """``(answerable, answered, correct, cost, score)`` of ``n`` random records.

    Scores are rounded to 3 decimals, so they tie.
    """
    rng = np.random.default_rng(seed)
    return (
        rng.random(n) < 0.8,
        rng.random(n) < 0.85,
        rng.random(n) < 0.6,
        rng.lognormal(0.0, 1.0, n),
        np.round(rng.random(n), 3),
    )


def run() -> list[PerfResult]:
    big = records(N_LARGE)
    floats = np.random.default_rng(SEED + 1).random(N_LARGE)
    t = median_times(
        {
            "utility_auc": lambda: utility_auc(*big),
            "argsort": lambda: np.argsort(floats),
        },
        repeats=9,
    )
    auc = ratio_result(
        f"utility_auc, {N_LARGE:,} records with ties",
        t["utility_auc"],
        t["argsort"],
        max_ratio=3.0,
        reference_name=f"one numpy.argsort of {N_LARGE:,} floats",
    )

    small = records(N_SWEEP, SEED + 2)
    grid = c_r_grid()
    t = median_times(
        {
            "sweep": lambda: utility_auc_sweep(*small, grid),
            "single": lambda: utility_auc(*small),
        },
        repeats=41,
    )
    sweep = ratio_result(
        f"utility_auc_sweep, {grid.shape[0]} C_R values, {N_SWEEP:,} records",
        t["sweep"],
        t["single"],
        max_ratio=20.0,
        reference_name=f"one utility_auc call on the {N_SWEEP:,} records",
    )
    return [auc, sweep]
