"""Per-policy metrics, bootstrap confidence intervals, the ``C_R`` sweep and the per-domain
breakdown."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.baselines import BaselineRun, run_baselines, utilities
from benchmarks.bench.bootstrap import counts, draw, many
from benchmarks.bench.crossfit import IntArray, Probabilities
from benchmarks.bench.data import BenchData
from benchmarks.riskeval import normalized_regret, policy_consistency
from benchmarks.selective import aurc
from benchmarks.utility_auc import utility_auc
from guard.calibration.scoring import brier, ece

FloatArray = NDArray[np.float64]
METRICS = ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc",
           "policy_consistency", "normalized_regret", "aurc", "ece10", "brier")
PAPER_C_R = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def c_r_grid() -> FloatArray:
    """65 values from 0 to 64: the paper's points plus a log grid (57 points from 0.01 to 64,
    of which only 64 is also a paper point)."""
    grid = np.unique(np.concatenate((PAPER_C_R, np.geomspace(0.01, 64.0, 57))))
    return np.asarray(grid, dtype=np.float64)


def _safe(f: Callable[[], float]) -> float:
    try:
        return float(f())
    except ValueError:  # an empty subset (e.g. no answered item in a resample)
        return float("nan")


def metrics(data: BenchData, run: BaselineRun, p_ref: FloatArray, idx: IntArray, c_r: float
            ) -> dict[str, float]:
    """Every metric of one policy on the items ``idx`` (a bootstrap sample or all items)."""
    a, d, L = data.answerable[idx], run.answered[idx], data.cost[idx]
    right = (data.answerable & data.correct)[idx]
    v = utilities(data, run.answered, c_r)[idx]
    answered = np.flatnonzero(d)
    have_p = np.isfinite(p_ref[idx])
    prob = run.prob[idx]
    scored = answered[np.isfinite(prob[answered])]
    n_a, n_r = int(a.sum()), int((~a).sum())
    return {
        "utility_auc": utility_auc(a, d, right, L, run.score[idx], c_r=c_r),
        "mean_utility": float(v.mean()),
        "answer_rate": float(d.mean()),
        "ans_acc": float((d & right).sum() / n_a) if n_a else float("nan"),
        "ref_acc": float((~a & ~d).sum() / n_r) if n_r else float("nan"),
        "policy_consistency": _safe(lambda: policy_consistency(
            p_ref[idx][have_p], d[have_p], L[have_p], c_r)),
        "normalized_regret": _safe(lambda: normalized_regret(
            p_ref[idx][have_p], d[have_p], L[have_p], c_r)),
        "aurc": _safe(lambda: aurc(right[answered], run.score[idx][answered])),
        "ece10": _safe(lambda: ece(prob[scored], right[scored])),
        "brier": _safe(lambda: brier(prob[scored], right[scored])),
    }


def evaluate(data: BenchData, runs: dict[str, BaselineRun], probs: Probabilities, c_r: float,
             *, n_boot: int = 1000, seed: int = 0, chunk: int = 100,
             on_step: Callable[[], None] | None = None) -> dict[str, dict[str, Any]]:
    """Point estimates on all items and 95% percentile bootstrap intervals (resampling
    items; every resample's metrics computed at once from its draw counts, see
    :mod:`benchmarks.bench.bootstrap`)."""
    everyone = np.arange(data.n)
    samples = draw(data, n_boot, seed)
    out: dict[str, dict[str, Any]] = {}
    for name, run in runs.items():
        res: dict[str, Any] = dict(metrics(data, run, probs.calibrated, everyone, c_r))
        boot = np.concatenate(
            [many(data, run, probs.calibrated, counts(samples[lo:lo + chunk], data.n), c_r)
             for lo in range(0, n_boot, chunk)]) if n_boot else np.empty((0, len(METRICS)))
        for k, m in enumerate(METRICS):
            col = boot[:, k][np.isfinite(boot[:, k])]
            res[f"{m}_ci"] = ([float(np.percentile(col, 2.5)), float(np.percentile(col, 97.5))]
                              if col.size else None)
        out[name] = res
        if on_step:
            on_step()
    return out


def sweep(data: BenchData, pred_cost: FloatArray, probs: Probabilities,
          folds: Sequence[tuple[IntArray, IntArray]], grid: FloatArray,
          alpha: FloatArray | None = None) -> dict[str, list[float]]:
    """UtilityAUC of every policy at every ``C_R`` of ``grid`` (decisions re-made per C_R)."""
    right = data.answerable & data.correct
    curves: dict[str, list[float]] = {}
    for c_r in grid:
        for name, run in run_baselines(data, pred_cost, probs, folds, float(c_r),
                                      alpha).items():
            curves.setdefault(name, []).append(
                utility_auc(data.answerable, run.answered, right, data.cost, run.score,
                            c_r=float(c_r)))
    return curves


def by_domain(data: BenchData, runs: dict[str, BaselineRun], c_r: float
              ) -> dict[str, dict[str, dict[str, float]]]:
    """Per domain and policy: items, contribution to the mean utility (sums to the overall
    mean utility), mean utility inside the domain, and UtilityAUC inside the domain."""
    doms = np.array(data.domains)
    right = data.answerable & data.correct
    out: dict[str, dict[str, dict[str, float]]] = {}
    for dom in sorted(set(data.domains)):
        m = doms == dom
        out[dom] = {}
        for name, run in runs.items():
            v = utilities(data, run.answered, c_r)
            out[dom][name] = {
                "n": int(m.sum()),
                "contribution": float(v[m].sum() / data.n),
                "mean_utility": float(v[m].mean()),
                "utility_auc": utility_auc(data.answerable[m], run.answered[m], right[m],
                                           data.cost[m], run.score[m], c_r=c_r),
            }
    return out
