"""Paired differences against an independent computation: resample by resample with the
plain metric functions, differences taken per resample, percentiles by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.bench.baselines import run_baselines
from benchmarks.bench.bootstrap import draw
from benchmarks.bench.crossfit import make_folds
from benchmarks.bench.data import load_bench
from benchmarks.bench.paired import BASELINES, paired_differences, paired_grid
from benchmarks.bench.report import report_md
from benchmarks.bench.run import run_bench
from benchmarks.utility_auc import utility_auc
from tests.benchmarks.conftest import crossfit


def _by_hand(data: Any, run: Any, idx: np.ndarray, c_r: float) -> tuple[float, float]:
    """UtilityAUC and mean utility of one policy on the items ``idx``, from the definitions:
    v = 1 for a right answer, -L for a wrong one, -C_R for refusing an answerable item, 1 for
    refusing an unanswerable one."""
    a, d = data.answerable[idx], run.answered[idx]
    right = (data.answerable & data.correct)[idx]
    cost = data.cost[idx]
    v = np.where(d, np.where(right, 1.0, -cost), np.where(a, -c_r, 1.0))
    return utility_auc(a, d, right, cost, run.score[idx], c_r=c_r), float(v.mean())


def test_paired_grid_is_the_paper_points_and_c_r() -> None:
    sweep = [0.0, 0.01, 0.5, 1.0, 2.0, 3.3, 4.0, 8.0, 16.0, 32.0, 64.0]
    assert paired_grid(sweep, 3.3) == [0.0, 0.5, 1.0, 2.0, 3.3, 4.0, 8.0, 16.0, 32.0, 64.0]
    assert paired_grid(sweep, 2.0, full=True) == sweep


def test_paired_differences_match_an_independent_loop(bench_files: Any) -> None:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0, data.canonical)
    probs = crossfit(bench_files, data, folds).probabilities("logprob_mean")
    grid = [0.5, 2.0, 16.0]
    runs_at = {c: run_baselines(data, data.cost * 1.3, probs, folds, c) for c in grid}
    samples = draw(data, 40, 3)
    got = paired_differences(data, runs_at, samples, chunk=15)  # chunks must not matter
    assert got["c_r"] == grid and got["bootstrap"] == 40 and got["reference"] == "guard"
    assert list(got["baselines"]) == list(BASELINES)
    for c_pos, c in enumerate(grid):
        runs = runs_at[c]
        everyone = np.arange(data.n)
        ref_all = _by_hand(data, runs["guard"], everyone, c)
        ref_boot = [_by_hand(data, runs["guard"], s, c) for s in samples]
        for name in BASELINES:
            base_all = _by_hand(data, runs[name], everyone, c)
            base_boot = [_by_hand(data, runs[name], s, c) for s in samples]
            for k, metric in enumerate(("utility_auc", "mean_utility")):
                block = got["baselines"][name][metric]
                assert block["diff"][c_pos] == pytest.approx(ref_all[k] - base_all[k], abs=1e-12)
                d = np.array([r[k] - b[k] for r, b in zip(ref_boot, base_boot, strict=True)])
                d = np.sort(d[np.isfinite(d)])
                # numpy's default percentile: linear interpolation between order statistics
                lo_pos, hi_pos = 0.025 * (d.size - 1), 0.975 * (d.size - 1)
                lo = d[int(lo_pos)] + (lo_pos % 1) * (d[int(lo_pos) + 1] - d[int(lo_pos)])
                hi = d[int(hi_pos)] + (hi_pos % 1) * (d[int(hi_pos) + 1] - d[int(hi_pos)])
                assert block["ci"][c_pos] == pytest.approx([lo, hi], abs=1e-9), (name, metric, c)


def test_always_refuse_difference_is_the_guards_gain_over_refusing(bench_files: Any) -> None:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0, data.canonical)
    probs = crossfit(bench_files, data, folds).probabilities("logprob_mean")
    runs_at = {2.0: run_baselines(data, data.cost, probs, folds, 2.0)}
    got = paired_differences(data, runs_at, draw(data, 0, 0))
    guard = runs_at[2.0]["guard"]
    a, right = data.answerable, data.answerable & data.correct
    # refusing everything is worth -C_R on answerable items and 1 on the others; the guard
    # changes only the answered items' utilities
    delta = np.where(guard.answered, np.where(right, 1.0, -data.cost), 0.0) \
        - np.where(guard.answered, np.where(a, -2.0, 1.0), 0.0)
    block = got["baselines"]["always_refuse"]["mean_utility"]
    assert block["diff"] == [pytest.approx(delta.sum() / data.n, abs=1e-12)]
    assert block["ci"] == [None]  # no resamples: no interval, not a made-up one


def test_bench_writes_paired_differences(bench_files: Any, tmp_path: Path) -> None:
    results = run_bench(bench_files.items, bench_files.responses, c_r=3.0,
                        cost_model=bench_files.cost_model, n_boot=30, seed=1)
    paired = results.paired
    assert paired["c_r"] == [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    at = paired["c_r"].index(3.0)
    pol = results.policies
    for name in BASELINES:
        block = paired["baselines"][name]["utility_auc"]
        assert block["diff"][at] == pytest.approx(
            pol["guard"]["utility_auc"] - pol[name]["utility_auc"], abs=1e-12)
        lo, hi = block["ci"][at]
        assert lo <= hi
    json.dumps(results.to_json())  # serializable
    md = report_md(results, [])
    assert "## Paired differences" in md
    assert "`guard` minus each baseline, UtilityAUC" in md
    d = paired["baselines"]["always_refuse"]["mean_utility"]
    lo, hi = d["ci"][at]
    cell = f"{d['diff'][at]:+.3f} [{lo:+.3f}, {hi:+.3f}]" + ("*" if lo > 0 else "")
    assert cell in md
