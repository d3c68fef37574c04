"""The bench, end to end: load, cross-fit, run the policies, evaluate, sweep."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench.baselines import run_baselines
from benchmarks.bench.bootstrap import draw
from benchmarks.bench.crossfit import (
    GuardFit,
    Probabilities,
    choose_signal,
    crossfit_guard,
    fixed_guard,
    make_folds,
    trained_on,
)
from benchmarks.bench.data import BenchData, load_bench
from benchmarks.bench.evaluate import by_domain, c_r_grid, evaluate, sweep
from benchmarks.bench.frontier import frontier_table, solver_p
from benchmarks.bench.paired import oracle_share, paired_differences, paired_grid
from benchmarks.bench.result import (
    BenchResult,
    BenchSettings,
    CostSummary,
    Curve,
    ResponsesSummary,
    Sweep,
)
from benchmarks.progress import Step, ticker
from benchmarks.utility_auc import utility_curve
from cost_models.datasets import DatasetItem
from cost_models.model_io import ARTIFACT, default_model_dir, load_model
from cost_models.persistence import read_sidecar
from guard.calibration import Calibrator
from guard.calibration.scoring import brier, ece
from guard.exceptions import BenchError
from guard.policy import Policy, load_policy
from policies import DEFAULT_C_R
from utilityguard_base.exceptions import UtilityGuardError


def _auc(y: np.ndarray, score: np.ndarray) -> float | None:
    """ROC AUC of ``score`` for ``y`` (None with one class)."""
    if y.all() or not y.any():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, score))


def calibration_summary(data: BenchData, probs: Probabilities) -> dict[str, Any]:
    """ECE-10 and Brier of the raw and the out-of-fold calibrated probability on the answered
    items with a signal (an answer to a refusal-required item counts as incorrect)."""
    rows = data.answered & np.isfinite(probs.raw) & np.isfinite(probs.calibrated)
    y = (data.answerable & data.correct)[rows]
    if not rows.any():
        return {"signal": probs.signal, "n": 0}
    raw, cal = probs.raw[rows], probs.calibrated[rows]
    return {"signal": probs.signal, "n": int(rows.sum()),
            "ece_before": ece(raw, y), "ece_after": ece(cal, y),
            "brier_before": brier(raw, y), "brier_after": brier(cal, y)}


def _fixed_policy(data: BenchData, policy: str | Path | Policy, signal: str | None,
                  trust: bool, say: Step) -> tuple[str, Path, Any]:
    """``--policy``: the signal, the cost model's label and the fitted policy's decisions
    (a :class:`~guard.policy.Policy` in memory is used as is)."""
    try:
        fixed = policy if isinstance(policy, Policy) else load_policy(policy, trust=trust)
    except UtilityGuardError as exc:
        raise BenchError(str(exc)) from None
    if signal is not None and signal != fixed.signal:
        raise BenchError(f"policy {fixed.label} reads confidence.{fixed.signal}, "
                         f"not {signal}")
    sig = choose_signal(data, None, among=list(fixed.calibrator.signals))
    say(f"deciding with policy {fixed.label}")
    return sig, Path(f"policy:{fixed.label}"), fixed_guard(data, fixed, ticker(say))


def crossfit(data: BenchData, items: list[DatasetItem], groups: list[str], fold_idx: Any,
              c_r: float, cost_model: Path | None, calibrator: Path | None,
              signal: str | None, trust: bool, say: Step, *,
              multi: Sequence[str] | None = None,
              pooled: Sequence[BenchData] = (), cost_scale: bool = False, alpha_scale: bool = False
              ) -> tuple[str, Path, Any]:
    """The default: a policy fitted per fold; the signal, the cost model dir and the fit
    (``multi`` / ``pooled``: see :func:`run_bench`)."""
    model_dir = cost_model or default_model_dir()
    model = load_model(model_dir, trust=trust)
    meta = read_sidecar(model_dir, name=ARTIFACT)
    refit = trained_on(model, meta, data, items)
    cal = Calibrator.load(calibrator, trust=trust) if calibrator else None
    if cal is not None:  # a calibrator maps one signal: never feed it another one
        if signal is not None and signal != cal.signal:
            raise BenchError(f"{calibrator}: the calibrator reads confidence."
                             f"{cal.signal}, not {signal}")
        signal = cal.signal
    sig = choose_signal(data, signal, among=multi)
    say("fitting a policy per fold")
    fit = crossfit_guard(data, sig, fold_idx, groups, c_r, cost_model=model, refit=refit,
                         calibrator=cal, multi=multi, pooled=pooled, cost_scale=cost_scale,
                         alpha_scale=alpha_scale, tick=ticker(say))
    return sig, model_dir, fit


def _utility_curves(data: BenchData, runs: dict[str, Any], c_r: float) -> dict[str, Curve]:
    """Each compared policy's utility against coverage, thinned to about 400 points."""
    right = data.answerable & data.correct
    curves: dict[str, Curve] = {}
    for name, run in runs.items():
        cov, u = utility_curve(data.answerable, run.answered, right, data.cost, run.score, c_r=c_r)
        step = max(1, len(cov) // 400)
        curves[name] = Curve(coverage=cov[::step].tolist(), utility=u[::step].tolist())
    return curves


def _responses_summary(data: BenchData) -> ResponsesSummary:
    """Which responses file was scored, whose, and how it matched the dataset."""
    return ResponsesSummary(
        file=data.responses_file, sha256=data.responses_sha256, model=data.model,
        missing_responses=data.missing_responses, unmatched_responses=data.unmatched_responses,
        answered=int(data.answered.sum()),
        correct=int((data.answered & data.answerable & data.correct).sum()))


def run_bench(
    items: list[DatasetItem], responses: Path, *, c_r: float = DEFAULT_C_R,
    cost_model: Path | None = None, calibrator: Path | None = None, signal: str | None = None,
    folds: int = 5, n_boot: int = 1000, seed: int = 0, trust: bool = False,
    group_folds: bool = False, paired_full: bool = False, progress: Step | None = None,
    policy: str | Path | Policy | None = None, multi: Sequence[str] | None = None,
    pooled: Sequence[BenchData] = (), cost_scale: bool = False, alpha_scale: bool = False,
) -> BenchResult:
    """Everything ``results.json`` holds (see :mod:`benchmarks.bench.report`).

    ``group_folds``: cross-fit over folds that hold out whole sources (the items' ``source``),
    so every fitted piece — cost model refit, calibrator, threshold, answerability — is scored
    on sources it never saw (stricter than the default random folds). ``paired_full``: the
    paired differences at every ``C_R`` of the sweep, not only its paper points and ``c_r``
    (:mod:`benchmarks.bench.paired`). ``policy``: a fitted policy (path or shipped name) scored
    as is — the guard row is its decisions, nothing of it refitted; the cost model, calibrator
    and signal are the policy's (a :class:`~guard.policy.Policy` in memory works too).
    ``multi``: the guard's calibrator is a multi-signal one on these signals. ``pooled``:
    other models' responses on the same items; the guard's calibrator of each fold is fitted
    on their replies to the training items instead of this model's (the model left out).
    ``cost_scale``: each fold's policy maps its price by a cost scale
    (:func:`guard.policy.fit.fit_scale`, fitted on the training folds); ``alpha_scale``: its
    answerability classifier recalibrated (:func:`guard.policy.fit.fit_answerability_scale`)."""
    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    data = load_bench(items, responses)
    source = {it.id: it.source for it in items}
    groups = [source[i] for i in data.ids]
    fold_idx = make_folds(data.n, folds, seed, data.canonical,
                          groups if group_folds else None)
    if policy is not None:
        if cost_model is not None or calibrator is not None:
            raise BenchError("--policy brings its own cost model and calibrator: drop "
                             "--cost-model / --calibrator")
        sig, model_dir, fit = _fixed_policy(data, policy, signal, trust, say)
    else:
        sig, model_dir, fit = crossfit(data, items, groups, fold_idx, c_r, cost_model,
                                        calibrator, signal, trust, say, multi=multi,
                                        pooled=pooled, cost_scale=cost_scale,
                                        alpha_scale=alpha_scale)
    probs = fit.probabilities(sig)
    runs = run_baselines(data, fit.cost, probs, fold_idx, c_r, fit.alpha, decided=fit.answer)
    say("bootstrap")
    policies = evaluate(data, runs, probs, c_r, n_boot=n_boot, seed=seed)
    say("sweep")
    grid = c_r_grid()
    curves = sweep(data, fit.cost, probs, fold_idx, grid, fit.alpha)
    say("paired differences")
    runs_at = {c: run_baselines(data, fit.cost, probs, fold_idx, c, fit.alpha,
                               decided=fit.answer if c == c_r else None)
               for c in paired_grid(grid.tolist(), c_r, full=paired_full)}
    samples = draw(data, n_boot, seed)
    paired = paired_differences(data, runs_at, samples)
    paired["oracle_share"] = oracle_share(data, runs, samples, c_r)
    utility_curves = _utility_curves(data, runs, c_r)
    return BenchResult(
        c_r=c_r,
        n=data.n,
        responses=_responses_summary(data),
        settings=BenchSettings(
            signal=sig, cost=fit.how["cost"], cost_model=str(model_dir),
            probability=probs.how, answerability=fit.how["answerability"],
            decisions=fit.how["decisions"],
            answerability_auc=_auc(data.answerable, fit.alpha),
            folds=folds, fold_groups="source" if group_folds else None, seed=seed,
            bootstrap=n_boot, seconds=round(time.perf_counter() - t0, 2)),
        policies=policies,
        calibration=calibration_summary(data, probs),
        sweep=Sweep(c_r=grid.tolist(), utility_auc=curves),
        paired=paired,
        domains=by_domain(data, runs, c_r),
        curves=utility_curves,
        costs=CostSummary(true_median=float(np.median(data.cost)),
                          predicted_median=float(np.median(fit.cost))),
        frontier=_frontier(data, fit, say),
    )


def _frontier(data: BenchData, fit: GuardFit, say: Step) -> dict[str, Any]:
    """The guard's budget-welfare frontier on its out-of-fold estimates, with what its
    decisions realised (true costs, grades, answerability labels)."""
    say("budget-welfare frontier")
    p = np.array([solver_p(r) for r in fit.records], dtype=np.float64)
    right = data.answerable & data.correct
    return frontier_table(p, fit.cost, fit.alpha, value_answer=np.where(right, 1.0, -data.cost),
                          value_refuse=np.where(data.answerable, 0.0, 1.0),
                          weight=data.answerable.astype(np.float64))
