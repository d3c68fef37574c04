"""``run_bench`` end to end on synthetic data, and the cross-fitting guarantees."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.bench.baselines import BASELINES
from benchmarks.bench.crossfit import make_folds, trained_on
from benchmarks.bench.data import BenchData, load_bench
from benchmarks.bench.evaluate import METRICS, PAPER_C_R, c_r_grid
from benchmarks.bench.report import report_md
from benchmarks.bench.result import BenchResult
from benchmarks.bench.run import run_bench
from cost_models import CostRegressor, load_model
from cost_models.datasets import load_seed
from cost_models.model_io import ARTIFACT, default_model_dir
from cost_models.persistence import read_sidecar
from guard.exceptions import BenchError
from guard.segments import request_segments
from tests.benchmarks.conftest import crossfit

# metrics of the policies that nothing fitted touches (no folds, no calibrated p)
FOLD_FREE = {
    "model": ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc", "aurc",
              "ece10", "brier"),
    "always_refuse": ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc"),
    "oracle": ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc"),
}


def _policies_close(a: dict[str, Any], b: dict[str, Any], tol: float = 1e-9) -> None:
    assert a.keys() == b.keys()
    for name in a:
        for key, va in a[name].items():
            vb = b[name][key]
            if va is None or vb is None:
                assert va is vb, (name, key)
            elif isinstance(va, list):
                np.testing.assert_allclose(va, vb, atol=tol, rtol=0, err_msg=f"{name}.{key}")
            elif math.isnan(va):
                assert math.isnan(vb), (name, key)
            else:
                assert va == pytest.approx(vb, abs=tol), (name, key)


def _bench_data(files: Any) -> BenchData:
    return load_bench(files.items, files.responses)


# --- results ------------------------------------------------------------------------------

def test_every_policy_has_every_metric_and_interval(bench_results: BenchResult) -> None:
    pol = bench_results.policies
    assert list(pol) == list(BASELINES)
    for name, res in pol.items():
        for m in METRICS:
            assert isinstance(res[m], float), (name, m)
            ci = res[f"{m}_ci"]
            if ci is not None:
                assert len(ci) == 2 and ci[0] <= ci[1], (name, m)
                if math.isfinite(res[m]):
                    # a 95% interval of 50 resamples brackets the point estimate loosely
                    assert ci[0] - 0.5 <= res[m] <= ci[1] + 0.5, (name, m)
        assert 0.0 <= res["utility_auc"] <= 1.0, name
    # the guard answers and has calibrated probabilities: all its intervals exist
    assert all(pol["guard"][f"{m}_ci"] is not None for m in METRICS)
    assert bench_results.n == 120
    assert bench_results.settings.bootstrap == 50
    assert bench_results.responses.model == "synthetic-1"


def test_guard_beats_the_raw_model(bench_results: BenchResult) -> None:
    pol = bench_results.policies
    assert pol["guard"]["utility_auc"] > pol["model"]["utility_auc"] + 0.1
    assert pol["guard"]["mean_utility"] > pol["model"]["mean_utility"]
    # a calibrated p is better calibrated than the raw exp(mean logprob)
    assert pol["guard"]["ece10"] < pol["model"]["ece10"]


def test_oracle_bounds_every_policy(bench_results: BenchResult) -> None:
    pol = bench_results.policies
    best = pol["oracle"]
    for name, res in pol.items():
        assert best["mean_utility"] >= res["mean_utility"] - 1e-12, name
        assert best["utility_auc"] >= res["utility_auc"] - 1e-12, name
    # at every C_R of the sweep (where cheap wrong answers to answerable items beat refusing)
    curves = bench_results.sweep.utility_auc
    for name, curve in curves.items():
        for c_r, top, v in zip(bench_results.sweep.c_r, curves["oracle"], curve,
                               strict=True):
            assert top >= v - 1e-12, (name, c_r)


def test_always_refuse_never_answers(bench_results: BenchResult) -> None:
    res = bench_results.policies["always_refuse"]
    assert res["answer_rate"] == 0.0
    assert res["ans_acc"] == 0.0
    assert res["ref_acc"] == 1.0
    assert math.isnan(res["ece10"]) and res["ece10_ci"] is None


def test_model_policies_answer_what_the_model_answered(bench_results: BenchResult,
                                                       bench_files: Any) -> None:
    answered = sum(r["answered"] for r in bench_files.response_rows)
    pol = bench_results.policies
    assert pol["model"]["answer_rate"] == pytest.approx(answered / 120)
    assert pol["model_confidence"]["answer_rate"] == pol["model"]["answer_rate"]
    assert bench_results.responses.answered == answered
    for name in ("guard", "guard_oracle_cost", "confidence_threshold", "oracle"):
        assert pol[name]["answer_rate"] <= pol["model"]["answer_rate"], name


def test_sweep_covers_zero_to_64_with_the_paper_points(bench_results: BenchResult) -> None:
    sweep = bench_results.sweep
    grid = sweep.c_r
    assert len(grid) == 65
    assert grid[0] == 0.0 and grid[-1] == 64.0
    assert grid == sorted(set(grid))
    assert set(PAPER_C_R) <= set(grid)
    assert grid == c_r_grid().tolist()
    assert list(sweep.utility_auc) == list(BASELINES)
    for name, curve in sweep.utility_auc.items():
        assert len(curve) == 65, name
        assert all(0.0 <= v <= 1.0 for v in curve), name
    # the sweep at C_R = 2 re-makes the same decisions as the main evaluation
    k = grid.index(2.0)
    for name, curve in sweep.utility_auc.items():
        assert curve[k] == pytest.approx(bench_results.policies[name]["utility_auc"],
                                         abs=1e-12), name


def test_domain_contributions_sum_to_the_mean_utility(bench_results: BenchResult) -> None:
    doms = bench_results.domains
    assert sorted(doms) == ["geography", "medicine", "programming"]
    assert sum(d["guard"]["n"] for d in doms.values()) == bench_results.n
    for name, res in bench_results.policies.items():
        total = sum(d[name]["contribution"] for d in doms.values())
        assert total == pytest.approx(res["mean_utility"], abs=1e-12), name
        for d in doms.values():
            assert d[name]["contribution"] == pytest.approx(
                d[name]["mean_utility"] * d[name]["n"] / bench_results.n, abs=1e-12)


def test_results_are_json_and_curves_are_bounded(bench_results: BenchResult) -> None:
    back = json.loads(json.dumps(bench_results.to_json()))
    assert back["c_r"] == 2.0
    for name, curve in bench_results.curves.items():
        assert len(curve.coverage) == len(curve.utility) > 1, name
        assert curve.coverage[0] == 0.0


# --- order and determinism ----------------------------------------------------------------

def test_same_inputs_and_seed_give_identical_results(bench_files: Any,
                                                     bench_results: BenchResult) -> None:
    again = run_bench(bench_files.items, bench_files.responses, c_r=2.0,
                      cost_model=bench_files.cost_model, n_boot=50, seed=0)
    _policies_close(again.policies, bench_results.policies, tol=0.0)  # NaN != NaN
    for key in ("sweep", "domains", "curves", "responses", "costs"):
        assert getattr(again, key) == getattr(bench_results, key), key


def test_response_file_order_does_not_matter(bench_files: Any, tmp_path: Path, synth: Any,
                                             bench_results: BenchResult) -> None:
    rows = list(bench_files.response_rows)
    np.random.default_rng(3).shuffle(rows)
    shuffled = synth.write_jsonl(tmp_path / "shuffled.jsonl", rows)
    res = run_bench(bench_files.items, shuffled, c_r=2.0, cost_model=bench_files.cost_model,
                    n_boot=50, seed=0)
    _policies_close(res.policies, bench_results.policies)
    assert res.sweep == bench_results.sweep


def test_item_order_does_not_matter(
        bench_files: Any, tmp_path: Path, synth: Any, bench_results: BenchResult) -> None:
    """Folds and bootstrap resamples are drawn over the items sorted by id, so a shuffled
    dataset gives the same results (up to floating-point summation order)."""
    rows = list(bench_files.item_rows)
    np.random.default_rng(4).shuffle(rows)
    from cost_models.datasets import load_utilitybench

    items = load_utilitybench(synth.write_jsonl(tmp_path / "items.jsonl", rows))
    res = run_bench(items, bench_files.responses, c_r=2.0, cost_model=bench_files.cost_model,
                    n_boot=50, seed=0)
    _policies_close(res.policies, bench_results.policies, tol=1e-9)
    for name, curve in bench_results.sweep.utility_auc.items():
        np.testing.assert_allclose(res.sweep.utility_auc[name], curve, atol=1e-9)


# --- out of fold ----------------------------------------------------------------------------

def test_flipping_a_label_does_not_change_that_items_probability(
        bench_files: Any) -> None:
    data = _bench_data(bench_files)
    folds = make_folds(data.n, 5, 0)
    base = crossfit(bench_files, data, folds).probabilities("logprob_mean")
    checked = 0
    for i in np.flatnonzero(data.answered & data.answerable)[:6]:
        correct = data.correct.copy()
        correct[i] = not correct[i]
        flipped = crossfit(bench_files, dataclasses.replace(data, correct=correct),
                           folds).probabilities("logprob_mean")
        assert flipped.calibrated[i] == base.calibrated[i]
        fold_of_i = next(k for k, (_, test) in enumerate(folds) if i in test)
        same_fold = folds[fold_of_i][1]
        np.testing.assert_array_equal(flipped.calibrated[same_fold], base.calibrated[same_fold])
        # ... while the label does reach the items of the other folds
        assert not np.array_equal(flipped.calibrated, base.calibrated)
        checked += 1
    assert checked == 6


def test_changing_a_cost_does_not_change_that_items_refit_prediction(
        bench_files: Any) -> None:
    data = _bench_data(bench_files)
    folds = make_folds(data.n, 5, 0)
    groups = [it.source for it in bench_files.items]
    settings = CostRegressor(cv=3)
    assert groups
    base = crossfit(bench_files, data, folds, refit_with=settings)
    assert base.how["cost"].startswith("out of fold")
    for i in (0, 57, 119):
        cost = data.cost.copy()
        cost[i] *= 40.0
        changed = crossfit(bench_files, dataclasses.replace(data, cost=cost), folds,
                           refit_with=settings)
        assert changed.cost[i] == base.cost[i]
        assert not np.allclose(changed.cost, base.cost)  # it did reach the other folds


def test_a_given_model_is_used_as_is(bench_files: Any) -> None:
    data = _bench_data(bench_files)
    model = load_model(bench_files.cost_model)
    res = crossfit(bench_files, data, make_folds(data.n))
    # the runtime's price: the model's costliest segment of each question (guard.segments)
    want = [max(model.predict(request_segments([q]))) for q in data.questions]
    np.testing.assert_allclose(res.cost, want, rtol=1e-12, atol=0)
    assert "as is" in res.how["cost"]


def test_a_foreign_cost_model_is_used_as_is(bench_results: BenchResult) -> None:
    assert "as is" in bench_results.settings.cost
    assert "out of fold" in bench_results.settings.probability


def test_a_model_trained_on_the_bench_items_is_refit(bench_files: Any, tmp_path: Path,
                                                     synth: Any) -> None:
    model_dir = synth.train_cost_model(bench_files.items, tmp_path / "own")
    data = _bench_data(bench_files)
    assert trained_on(load_model(model_dir), read_sidecar(model_dir, name=ARTIFACT), data)
    res = run_bench(bench_files.items, bench_files.responses, cost_model=model_dir, n_boot=0)
    assert "out of fold" in res.settings.cost
    # without the hash the bench cannot know: as is
    blind = synth.train_cost_model(bench_files.items, tmp_path / "blind", data_hash=False)
    res = run_bench(bench_files.items, bench_files.responses, cost_model=blind, n_boot=0)
    assert "as is" in res.settings.cost


@pytest.fixture(scope="module")
def seed_responses(tmp_path_factory: pytest.TempPathFactory, synth: Any
                   ) -> tuple[list[Any], Path]:
    seed = load_seed()
    path = tmp_path_factory.mktemp("seed") / "responses.jsonl"
    synth.write_jsonl(path, synth.make_responses([it.model_dump() for it in seed], seed=2))
    return seed, path


def test_shipped_model_on_its_own_training_data_is_refit(
        seed_responses: tuple[list[Any], Path]) -> None:
    seed, path = seed_responses
    data = load_bench(seed, path)
    model_dir = default_model_dir()
    meta = read_sidecar(model_dir, name=ARTIFACT)
    assert trained_on(load_model(model_dir), meta, data)
    res = run_bench(seed, path, n_boot=0)  # the default cost model
    assert res.n == len(seed)
    assert res.settings.cost.startswith("out of fold")
    assert res.settings.cost_model == str(model_dir)
    assert res.policies["guard"]["utility_auc"] > res.policies["model"]["utility_auc"]


def test_shipped_model_on_part_of_its_training_data_is_refit(
        seed_responses: tuple[list[Any], Path], tmp_path: Path, synth: Any) -> None:
    """Responses to only some seed items: the model still saw them, so no as-is scoring."""
    seed, path = seed_responses
    part = synth.write_jsonl(tmp_path / "part.jsonl",
                       [json.loads(line) for line in path.read_text().splitlines()[:150]])
    res = run_bench(seed, part, n_boot=0)
    assert res.n == 150
    assert res.responses.missing_responses == len(seed) - 150
    assert res.settings.cost.startswith("out of fold")


def test_group_folds_hold_out_whole_sources(bench_files: Any) -> None:
    data = _bench_data(bench_files)
    source = {it.id: it.source for it in bench_files.items}
    groups = [source[i] for i in data.ids]
    folds = make_folds(data.n, 5, 0, data.canonical, groups)
    seen: set[str] = set()
    for train, test in folds:
        held = {groups[i] for i in test}
        assert held.isdisjoint({groups[i] for i in train})
        assert held.isdisjoint(seen)
        seen |= held
    assert seen == set(groups)
    with pytest.raises(BenchError, match="at least 5 distinct groups"):
        make_folds(data.n, 5, 0, data.canonical, ["one"] * data.n)


def test_bench_with_group_folds(bench_files: Any) -> None:
    res = run_bench(bench_files.items, bench_files.responses, cost_model=bench_files.cost_model,
                    n_boot=0, group_folds=True)
    assert res.settings.fold_groups == "source"
    assert res.policies["guard"]["utility_auc"] > res.policies["model"]["utility_auc"]


def test_responses_for_ids_not_in_the_dataset_are_counted_not_used(
        bench_files: Any, tmp_path: Path, synth: Any) -> None:
    rows = [json.loads(line) for line in bench_files.responses.read_text().splitlines()]
    extra = [{**rows[0], "id": "removed-1"}, {**rows[1], "id": "removed-2"}]
    path = synth.write_jsonl(tmp_path / "more.jsonl", rows[5:] + extra)
    res = run_bench(bench_files.items, path, cost_model=bench_files.cost_model, n_boot=0)
    assert res.n == len(rows) - 5  # the ids both files share
    assert res.responses.missing_responses == 5
    assert res.responses.unmatched_responses == 2
    md = report_md(res, [])
    assert "5 dataset items without a response" in md
    assert "2 response records for ids not in the dataset, not used" in md
