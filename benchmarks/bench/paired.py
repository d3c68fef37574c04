"""Paired differences: the guard minus each baseline, with paired bootstrap intervals.

At every ``C_R`` of the paired grid the policies' decisions are re-made at that ``C_R`` (as in
the sweep) and every policy is scored on the *same* bootstrap resamples as the bench's
intervals (:func:`benchmarks.bench.bootstrap.draw`). The difference ``guard - baseline`` is
taken resample by resample, so its percentile 95% interval accounts for both policies seeing
the same items (a difference of two separate intervals would not). Metrics: UtilityAUC and
mean utility. Resamples where a metric is undefined (UtilityAUC with ``A+ = A-``) are left out
of that metric's interval.

The grid is the paper's ``C_R`` points of the sweep plus the bench's ``C_R`` by default, or
every ``C_R`` of the sweep (``full``): each ``C_R`` costs one bootstrap pass per policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.baselines import BaselineRun, utilities
from benchmarks.bench.bootstrap import auc_bounds, counts, utility_auc_given
from benchmarks.bench.data import BenchData
from benchmarks.bench.evaluate import PAPER_C_R
from benchmarks.utility_auc import utility_auc

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
REFERENCE = "guard"
BASELINES = ("model", "model_confidence", "guard_paper_rule", "confidence_threshold",
             "always_refuse")
PAIRED_METRICS = ("utility_auc", "mean_utility")


def paired_grid(sweep_grid: Sequence[float], c_r: float, *, full: bool = False) -> list[float]:
    """The ``C_R`` values to pair at: the sweep's paper points (or all of it) and ``c_r``."""
    values = {float(c) for c in sweep_grid if full or float(c) in PAPER_C_R}
    return sorted(values | {float(c_r)})


def _point(data: BenchData, run: BaselineRun, c_r: float) -> dict[str, float]:
    right = data.answerable & data.correct
    return {"utility_auc": utility_auc(data.answerable, run.answered, right, data.cost,
                                       run.score, c_r=c_r),
            "mean_utility": float(utilities(data, run.answered, c_r).mean())}


def _ci(values: FloatArray) -> list[float] | None:
    col = values[np.isfinite(values)]
    if not col.size:
        return None
    return [float(np.percentile(col, 2.5)), float(np.percentile(col, 97.5))]


def paired_differences(
    data: BenchData, runs_at: dict[float, dict[str, BaselineRun]], samples: IntArray, *,
    reference: str = REFERENCE, baselines: Sequence[str] = BASELINES, chunk: int = 100,
    on_step: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """``results.json``'s ``paired`` block: per baseline and metric, lists aligned with
    ``c_r``: the point difference ``reference - baseline`` on all items and its paired
    bootstrap 95% interval (``None`` without resamples)."""
    grid = sorted(runs_at)
    names = [b for b in baselines if b in runs_at[grid[0]] and b != reference]
    n_boot = samples.shape[0]
    diffs = {(b, m, c): np.empty(n_boot) for b in names for m in PAIRED_METRICS for c in grid}
    for lo in range(0, n_boot, chunk):
        w = counts(samples[lo:lo + chunk], data.n)
        sl = slice(lo, lo + w.shape[0])
        for c in grid:
            runs = runs_at[c]
            bounds = auc_bounds(data, w, c)
            n = bounds[0]

            def both(run: BaselineRun, c: float = c, w: FloatArray = w,
                     bounds: Any = bounds, n: FloatArray = n) -> tuple[FloatArray, FloatArray]:
                return (utility_auc_given(data, run, w, c, bounds),
                        (w @ utilities(data, run.answered, c)) / n)

            ref = both(runs[reference])
            for b in names:
                base = both(runs[b])
                for k, m in enumerate(PAIRED_METRICS):
                    diffs[(b, m, c)][sl] = ref[k] - base[k]
        if on_step:
            on_step()
    out: dict[str, Any] = {"reference": reference, "c_r": grid, "bootstrap": n_boot,
                           "level": 0.95, "baselines": {}}
    points = {c: {name: _point(data, runs_at[c][name], c) for name in [reference, *names]}
              for c in grid}
    for b in names:
        out["baselines"][b] = {
            m: {"diff": [points[c][reference][m] - points[c][b][m] for c in grid],
                "ci": [_ci(diffs[(b, m, c)]) if n_boot else None for c in grid]}
            for m in PAIRED_METRICS}
    return out


def oracle_share(data: BenchData, runs: dict[str, BaselineRun], samples: IntArray, c_r: float,
                 *, reference: str = REFERENCE) -> dict[str, Any]:
    """The share of the oracle's gain the reference captures, on mean utility:
    ``(guard - always_refuse) / (oracle - always_refuse)``, with its 95% interval over the
    same bootstrap resamples (resamples where the oracle gains nothing are left out).

    1 is a perfect abstainer on these replies, 0 is no better than refusing everything.
    """
    u = {k: utilities(data, runs[k].answered, c_r) for k in (reference, "always_refuse",
                                                              "oracle")}
    gain = float(u["oracle"].mean() - u["always_refuse"].mean())
    point = float(u[reference].mean() - u["always_refuse"].mean()) / gain if gain > 0 else None
    ci = None
    if samples.shape[0]:
        w = counts(samples, data.n)
        ref, base, top = (w @ u[reference], w @ u["always_refuse"], w @ u["oracle"])
        ok = (top - base) > 0
        ci = _ci((ref[ok] - base[ok]) / (top[ok] - base[ok])) if ok.any() else None
    return {"reference": reference, "c_r": c_r, "share": point, "ci": ci}
