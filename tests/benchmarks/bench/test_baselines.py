"""The bench's policies: the cost-blind threshold, the guard's Bayes rule, the oracle."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from benchmarks.bench.baselines import BASELINES, best_threshold, run_baselines, utilities
from benchmarks.bench.crossfit import Probabilities, make_folds
from benchmarks.bench.data import SIGNALS, BenchData, load_bench
from policies import expected_utility, should_answer
from tests.benchmarks.conftest import crossfit

INF = math.inf


@pytest.mark.parametrize(
    ("raw", "answered", "gain", "want"),
    [
        pytest.param([0.9, 0.8, 0.3], [1, 1, 1], [2.0, 1.0, -5.0], 0.8, id="stop-before-a-loss"),
        pytest.param([0.9, 0.8, 0.3], [1, 1, 1], [2.0, 1.0, 0.5], 0.3, id="answer-everything"),
        pytest.param([0.3, 0.9, 0.8], [1, 1, 1], [-5.0, 2.0, 1.0], 0.8, id="unsorted-input"),
        pytest.param([0.9, 0.7, 0.7, 0.2], [1, 1, 1, 1], [1.0, 3.0, -5.0, 1.0], 0.9,
                     id="a-tie-is-taken-whole-not-its-best-half"),
        pytest.param([0.7, 0.7, 0.5], [1, 1, 1], [-1.0, 3.0, -4.0], 0.7,
                     id="a-tie-group-worth-taking-as-a-whole"),
        pytest.param([0.8, 0.8], [1, 1], [2.0, -1.0], 0.8, id="single-tie-group"),
        pytest.param([0.9, 0.5], [1, 1], [-1.0, -2.0], INF, id="every-answer-loses"),
        pytest.param([0.9, 0.5], [1, 1], [1.0, -1.0 - 1e-12], 0.9, id="first-only"),
        pytest.param([0.9, 0.5], [1, 1], [-1.0, 1.0], INF, id="net-zero-is-not-helpful"),
        pytest.param([0.9, 0.5], [0, 1], [10.0, 1.0], 0.5, id="model-refusals-are-ignored"),
        pytest.param([math.nan, 0.4], [1, 1], [10.0, 1.0], 0.4, id="missing-signal-ignored"),
        pytest.param([0.9, 0.5], [0, 0], [1.0, 1.0], INF, id="nothing-answered"),
        pytest.param([], [], [], INF, id="empty"),
    ],
)
def test_best_threshold(raw: list[float], answered: list[int], gain: list[float],
                        want: float) -> None:
    got = best_threshold(np.array(raw, dtype=float), np.array(answered, dtype=bool),
                         np.array(gain, dtype=float))
    assert got == want


def _data(answerable: list[bool], answered: list[bool], correct: list[bool],
          cost: list[float], logprob: list[float]) -> BenchData:
    n = len(answerable)
    sig = {s: np.full(n, np.nan) for s in SIGNALS}
    sig["logprob_mean"] = np.array(logprob, dtype=float)
    return BenchData(
        ids=[f"q{i}" for i in range(n)], questions=[f"question {i}" for i in range(n)],
        domains=["d"] * n, answerable=np.array(answerable), cost=np.array(cost, dtype=float),
        answered=np.array(answered), correct=np.array(correct), signals=sig,
        responses_file="r.jsonl", responses_sha256="0" * 64, model="m")


def _probs(data: BenchData, p: list[float]) -> Probabilities:
    raw = np.exp(data.signals["logprob_mean"])
    return Probabilities("logprob_mean", raw, np.array(p, dtype=float), "given")


def test_guard_never_answers_where_the_model_refused() -> None:
    # item 0: refused by the model although p = 1 and the cost is tiny
    data = _data(answerable=[True, True, False, True], answered=[False, True, True, True],
                 correct=[False, True, False, False], cost=[0.1, 0.1, 0.1, 50.0],
                 logprob=[-0.01, -0.01, -2.0, -0.5])
    folds = [(np.array([0, 1]), np.array([2, 3])), (np.array([2, 3]), np.array([0, 1]))]
    runs = run_baselines(data, data.cost, _probs(data, [1.0, 1.0, 0.1, 0.6]), folds, 2.0)
    assert list(runs) == list(BASELINES)
    for name, run in runs.items():
        assert not run.answered[0], name
    assert runs["guard"].answered.tolist() == [False, True, True, False]
    assert runs["always_refuse"].answered.tolist() == [False] * 4
    # the oracle delivers every answer worth more than a refusal: the right one, and the
    # wrong answer to the answerable item only if its cost were below C_R (here 50: no)
    assert runs["oracle"].answered.tolist() == [False, True, False, False]


def test_oracle_keeps_a_cheap_wrong_answer_to_an_answerable_item() -> None:
    data = _data(answerable=[True, True, False], answered=[True, True, True],
                 correct=[True, False, False], cost=[5.0, 0.5, 0.5],
                 logprob=[-0.1, -1.0, -1.0])
    folds = [(np.array([0]), np.array([1, 2])), (np.array([1, 2]), np.array([0]))]
    runs = run_baselines(data, data.cost, _probs(data, [0.9, 0.2, 0.2]), folds, 2.0)
    # wrong, cost 0.5 < C_R = 2: delivering (-0.5) beats refusing (-2)
    assert runs["oracle"].answered.tolist() == [True, True, False]
    v = utilities(data, runs["oracle"].answered, 2.0)
    assert v.tolist() == [1.0, -0.5, 1.0]
    for name, run in runs.items():
        assert utilities(data, run.answered, 2.0).sum() <= v.sum(), name


@pytest.fixture(scope="module")
def fitted(bench_files: Any) -> tuple[BenchData, Probabilities, Any, np.ndarray]:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0)
    probs = crossfit(bench_files, data, folds).probabilities("logprob_mean")
    rng = np.random.default_rng(7)
    pred_cost = data.cost * np.exp(rng.normal(0.0, 0.7, data.n))  # an imperfect cost model
    return data, probs, folds, pred_cost


@pytest.mark.parametrize("c_r", [pytest.param(c, id=f"c_r={c:g}") for c in (0.0, 0.5, 2.0, 8.0,
                                                                              64.0)])
def test_guard_decisions_are_the_bayes_rule(fitted: Any, c_r: float) -> None:
    data, probs, folds, pred_cost = fitted
    runs = run_baselines(data, pred_cost, probs, folds, c_r)
    have = np.isfinite(probs.calibrated)
    assert have[data.answered].all()  # every answered record has a calibrated p
    p = np.where(have, probs.calibrated, 0.0)
    for name, cost in (("guard", pred_cost), ("guard_oracle_cost", data.cost)):
        run = runs[name]
        want = data.answered & have & np.asarray(should_answer(p, cost, c_r), dtype=bool)
        np.testing.assert_array_equal(run.answered, want, err_msg=name)
        # the score is q + C_R, and answering means a score >= 0 (the rule, up to rounding)
        q = np.asarray(expected_utility(p, cost))
        np.testing.assert_allclose(run.score[have], q[have] + c_r, rtol=0, atol=1e-12)
        took = run.answered
        assert (run.score[took] >= -1e-9).all(), name
        assert (run.score[data.answered & ~took] < 1e-9).all(), name
        np.testing.assert_array_equal(run.prob, probs.calibrated)
    for name, run in runs.items():
        assert not (run.answered & ~data.answered).any(), name


def test_confidence_threshold_is_chosen_on_training_folds(fitted: Any) -> None:
    data, probs, folds, pred_cost = fitted
    runs = run_baselines(data, pred_cost, probs, folds, 2.0)
    gain = utilities(data, np.ones(data.n, dtype=bool), 2.0) - np.where(data.answerable, -2.0,
                                                                          1.0)
    for train, test in folds:
        t = best_threshold(probs.raw[train], data.answered[train], gain[train])
        want = data.answered[test] & (probs.raw[test] >= t)
        np.testing.assert_array_equal(runs["confidence_threshold"].answered[test], want)
        # changing the gains of the held-out items does not move their decisions
        g2 = gain.copy()
        g2[test] = -g2[test]
        assert best_threshold(probs.raw[train], data.answered[train], g2[train]) == t


def test_model_policies_keep_the_models_decisions(fitted: Any) -> None:
    data, probs, folds, pred_cost = fitted
    runs = run_baselines(data, pred_cost, probs, folds, 2.0)
    np.testing.assert_array_equal(runs["model"].answered, data.answered)
    np.testing.assert_array_equal(runs["model"].score, data.answered.astype(float))
    np.testing.assert_array_equal(runs["model_confidence"].answered, data.answered)
    np.testing.assert_array_equal(runs["model_confidence"].score, probs.raw)


def test_guard_uses_the_answerability_aware_rule(bench_files: Any) -> None:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0, data.canonical)
    fit = crossfit(bench_files, data, folds)
    probs, alpha = fit.probabilities("logprob_mean"), fit.alpha
    assert ((alpha >= 0) & (alpha <= 1)).all()
    cost = data.cost * 1.5
    runs = run_baselines(data, cost, probs, folds, 2.0, alpha)
    have = np.isfinite(probs.calibrated)
    p = np.where(have, probs.calibrated, 0.0)
    want = data.answered & have & np.asarray(should_answer(p, cost, 2.0, alpha=alpha))
    np.testing.assert_array_equal(runs["guard"].answered, want)
    paper = data.answered & have & np.asarray(should_answer(p, cost, 2.0))
    np.testing.assert_array_equal(runs["guard_paper_rule"].answered, paper)
    # a lower alpha makes refusing worth more, so the guard answers no more often
    assert runs["guard"].answered.sum() <= runs["guard_paper_rule"].answered.sum()


def test_answerability_is_out_of_fold(bench_files: Any) -> None:
    data = load_bench(bench_files.items, bench_files.responses)
    folds = make_folds(data.n, 5, 0, data.canonical)
    base = crossfit(bench_files, data, folds).alpha
    for i in (0, 1, 7):
        flipped = data.answerable.copy()
        flipped[i] = not flipped[i]
        again = crossfit(bench_files, dataclasses.replace(data, answerable=flipped), folds).alpha
        assert again[i] == base[i]
