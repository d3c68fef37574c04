"""Speed of the metric: UtilityAUC against one sort, the ``C_R`` sweep against one UtilityAUC.

* ``utility_auc`` on 10^6 random records whose scores have ties (3 decimals), against one
  ``numpy.argsort`` of 10^6 random floats: target ratio <= 5. The metric needs one argsort
  (the observed order) and one sort (the worst-case reference ``A-``), so about 2-3 is the
  floor.
* ``utility_auc_sweep`` over 65 ``C_R`` values (the paper's 0, 0.5, 1, 2, 4, 8, 16, 32, 64
  plus 56 log-spaced values in [0.01, 100]) on 15,000 records, against one ``utility_auc`` call
  on the same records: target ratio <= 20 (65 separate calls would be about 65).

Times are medians of repeated runs, every round measuring both sides in turn.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from benchmarks.perf._common import PerfResult, median_times, ratio_result
from benchmarks.utility_auc import utility_auc, utility_auc_sweep

SEED = 20240601
N_LARGE = 1_000_000
N_SWEEP = 15_000
PAPER_C_R = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def c_r_grid() -> NDArray[np.float64]:
    """The 65 unique ``C_R`` values of the sweep, ascending."""
    grid = np.unique(np.concatenate((PAPER_C_R, np.geomspace(0.01, 100.0, 56))))
    if grid.shape[0] != 65:  # pragma: no cover - guards an edit of the grid
        raise RuntimeError(f"the C_R grid must hold 65 unique values, has {grid.shape[0]}")
    return grid


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
        max_ratio=5.0,
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
