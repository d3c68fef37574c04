"""The vectorized bootstrap equals the per-resample metrics, resample by resample."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from benchmarks.bench.baselines import BASELINES, run_baselines
from benchmarks.bench.bootstrap import ORDER, counts, many
from benchmarks.bench.crossfit import make_folds
from benchmarks.bench.data import load_bench
from benchmarks.bench.evaluate import METRICS, metrics
from tests.benchmarks.conftest import crossfit


def test_columns_follow_the_metric_list() -> None:
    assert ORDER == METRICS


def test_counts_count_the_draws() -> None:
    w = counts(np.array([[0, 0, 2], [1, 2, 2]]), 4)
    np.testing.assert_array_equal(w, [[2, 0, 1, 0], [0, 1, 2, 0]])


@pytest.mark.parametrize("c_r", [pytest.param(0.0, id="cr-0"), pytest.param(2.0, id="cr-2"),
                                 pytest.param(16.0, id="cr-16")])
def test_vectorized_bootstrap_equals_per_resample_metrics(bench_files: Any, c_r: float) -> None:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0, data.canonical)
    probs = crossfit(bench_files, data, folds).probabilities("logprob_mean")
    runs = run_baselines(data, data.cost * 1.3, probs, folds, c_r)
    assert set(runs) == set(BASELINES)
    samples = np.random.default_rng(7).integers(0, data.n, size=(12, data.n))
    w = counts(samples, data.n)
    for name, run in runs.items():
        got = many(data, run, probs.calibrated, w, c_r)
        point = many(data, run, probs.calibrated, np.ones((1, data.n)), c_r)[0]
        want_point = metrics(data, run, probs.calibrated, np.arange(data.n), c_r)
        for s in range(-1, samples.shape[0]):
            row = point if s < 0 else got[s]
            want = want_point if s < 0 else metrics(data, run, probs.calibrated, samples[s], c_r)
            for k, m in enumerate(METRICS):
                if math.isnan(want[m]):
                    assert math.isnan(row[k]), (name, m, s)
                else:
                    assert row[k] == pytest.approx(want[m], abs=1e-9), (name, m, s)
