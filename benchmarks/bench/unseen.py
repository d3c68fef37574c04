"""The "unseen" protocols: how a policy does on questions of kinds, or replies of a model, it was
not fitted on.

* **held-out sources** (:func:`holdout_sources`, ``bench --holdout-sources``): a policy (cost
  model refit, calibrator, answerability classifier) is fitted on the items of every other
  source and scored as is on the named sources' items (the bench's ``--policy`` path: nothing
  of it refitted there; the baselines are cross-fitted on the held-out items as usual). With
  ``pool=True`` its calibrator is fitted on every given model's replies to the training items
  (the ``default`` policy's recipe), else on the scored model's own.
* **leave one model out** (:func:`leave_one_model_out`, ``bench --leave-one-model-out``): with
  several models' responses, each model is scored twice on the same folds: with its own
  cross-fitted policy, and with a policy whose calibrator was fitted on the *other* models'
  replies only (the cost and answerability models are question-only: both are fitted on the
  training folds' items either way).

Every result carries the paired intervals of the bench and the share of the oracle's gain
(:func:`benchmarks.bench.paired.oracle_share`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks.bench.crossfit import choose_signal, has_signal, pooled_rows, training_set
from benchmarks.bench.data import BenchData, load_bench
from benchmarks.bench.result import BenchResult
from benchmarks.bench.run import run_bench
from benchmarks.progress import Step
from cost_models.datasets import DatasetItem
from cost_models.model_io import default_model_dir, load_model
from guard.exceptions import BenchError
from guard.policy import Policy, fit_policy
from guard.policy.fit import fit_calibrator, fit_multi_calibrator, refit_cost_model

#: The eight source styles of the seed set's growth (2026-12-01); ``growth`` names them all.
GROWTH_SOURCES = ("agent_tool", "context_paragraph", "forum_post", "non_native",
                  "patient_portal", "units_code", "voice_sms", "workplace_email")


def parse_sources(spec: str, items: Sequence[DatasetItem]) -> set[str]:
    """Comma-separated source names (``growth``: :data:`GROWTH_SOURCES`), each checked."""
    known = {it.source for it in items}
    out: set[str] = set()
    for name in (s.strip() for s in spec.split(",")):
        if not name:
            continue
        wanted = set(GROWTH_SOURCES) if name == "growth" else {name}
        missing = sorted(wanted - known)
        if missing:
            raise BenchError(f"--holdout-sources: no items of source {', '.join(missing)} "
                             f"(sources: {', '.join(sorted(known))})")
        out |= wanted
    if not out or out == known:
        raise BenchError("--holdout-sources must name some, not all, of the dataset's sources")
    return out


def fit_on(items: Sequence[DatasetItem], own: BenchData, others: Sequence[BenchData], *,
           c_r: float, signal: str | None, multi: Sequence[str] | None, pool: bool,
           name: str, trust: bool = False, cost_scale: bool = False,
           alpha_scale: bool = False) -> Policy:
    """A policy fitted on ``items``: cost model refit (the shipped one's settings), the
    answerability classifier, and a calibrator on ``own``'s replies (or, with ``pool``, on
    ``own``'s and ``others``' replies)."""
    source = {it.id: it.source for it in items}
    sig = choose_signal(own, signal, among=multi)
    train = training_set(own, sig, [source[i] for i in own.ids])
    like = load_model(default_model_dir(), trust=trust)
    cost = refit_cost_model(like, train)
    cal = None
    if pool:
        rows = pooled_rows([own, *others], set(own.ids), sig)
        cal = fit_multi_calibrator(rows, multi) if multi else fit_calibrator(rows, sig)
    return fit_policy(train, signal=sig, c_r=c_r, name=name, cost_model=cost,
                      calibrator=cal, multi=None if pool else multi, cost_scale=cost_scale,
                      alpha_scale=alpha_scale)


def holdout_sources(items: list[DatasetItem], files: Sequence[Path], sources: set[str], *,
                    c_r: float, signal: str | None = None, multi: Sequence[str] | None = None,
                    pool: bool = False, n_boot: int = 1000, seed: int = 0,
                    progress: Step | None = None, cost_scale: bool = False,
                    alpha_scale: bool = False) -> list[BenchResult]:
    """One result per responses file: fitted without ``sources``, scored on them."""
    say = progress or (lambda _m: None)
    train_items = [it for it in items if it.source not in sources]
    test_items = [it for it in items if it.source in sources]
    train_data = [load_bench(train_items, f) for f in files]
    out = []
    for k, f in enumerate(files):
        others = [d for j, d in enumerate(train_data) if j != k]
        say(f"{f.parent.name}: fitting on {len(train_items)} items of the other sources")
        policy = fit_on(train_items, train_data[k], others, c_r=c_r, signal=signal,
                        multi=multi, pool=pool, name=f"holdout-{f.parent.name}",
                        cost_scale=cost_scale, alpha_scale=alpha_scale)
        say(f"{f.parent.name}: scoring on {len(test_items)} held-out items")
        out.append(run_bench(test_items, f, c_r=c_r, policy=policy, n_boot=n_boot, seed=seed,
                             progress=progress))
    return out


def leave_one_model_out(items: list[DatasetItem], files: Sequence[Path], *, c_r: float,
                        signal: str | None = None, multi: Sequence[str] | None = None,
                        folds: int = 5, group_folds: bool = True, n_boot: int = 1000,
                        seed: int = 0, progress: Step | None = None,
                        cost_scale: bool = False, alpha_scale: bool = False
                        ) -> list[tuple[BenchResult, BenchResult]]:
    """Per model: ``(own policy, calibrator from the other models)``, same folds and seed."""
    if len(files) < 2:
        raise BenchError("--leave-one-model-out needs the responses of at least two models")
    data = [load_bench(items, f) for f in files]
    ids = [set(d.ids) for d in data]
    if any(i != ids[0] for i in ids[1:]):  # the same items, so that the folds are the same
        common = set.intersection(*ids)
        items = [it for it in items if it.id in common]
        data = [load_bench(items, f) for f in files]
    if not multi:  # one signal: the other models must give the one this model is read by
        for k, d in enumerate(data):
            sig = choose_signal(d, signal)
            others = [o for j, o in enumerate(data) if j != k]
            if not any(has_signal(o, sig) for o in others):
                raise BenchError(
                    f"--leave-one-model-out: {d.model or d.responses_file} is read by "
                    f"confidence.{sig}, which no other model's responses have; name the "
                    "signals the models give with --multi-signal (e.g. --multi-signal "
                    "verbal,logprob_mean)")
    out = []
    for k, f in enumerate(files):
        others = [d for j, d in enumerate(data) if j != k]
        own, left = (run_bench(items, f, c_r=c_r, signal=signal, multi=multi, folds=folds,
                               n_boot=n_boot, seed=seed, group_folds=group_folds,
                               progress=progress, pooled=pool, cost_scale=cost_scale,
                               alpha_scale=alpha_scale)
                     for pool in ((), others))
        out.append((own, left))
    return out


def share(result: BenchResult) -> float | None:
    """The share of the oracle's gain of a result's guard row."""
    s = result.paired.get("oracle_share", {}).get("share")
    return None if s is None or not np.isfinite(s) else float(s)


def _ci(ci: Sequence[float] | None, fmt: str = "{:+.3f}") -> str:
    return f" [{fmt.format(ci[0])}, {fmt.format(ci[1])}]" if ci else ""


def unseen_row(label: str, r: BenchResult) -> dict[str, str]:
    """One row of the unseen table: mean utility, UtilityAUC, paired gain, share."""
    g, ar, orc = (r.policies[k] for k in ("guard", "always_refuse", "oracle"))
    diff = r.paired["baselines"]["always_refuse"]["mean_utility"]
    at = r.paired["c_r"].index(r.c_r)
    sh = r.paired["oracle_share"]
    return {
        "model / protocol": f"{r.responses.model} / {label}", "n": str(r.n),
        "guard mean utility": f"{g['mean_utility']:.3f}"
                              + _ci(g.get("mean_utility_ci"), "{:.3f}"),
        "guard UtilityAUC": f"{g['utility_auc']:.3f}",
        "always refuse": f"{ar['mean_utility']:.3f}",
        "oracle": f"{orc['mean_utility']:.3f}",
        "guard - always refuse (paired)": f"{diff['diff'][at]:+.3f}" + _ci(diff["ci"][at]),
        "share of the oracle's gain": ("n/a" if sh["share"] is None else
                                       f"{sh['share']:.3f}" + _ci(sh["ci"], "{:.3f}")),
    }


def markdown(rows: Sequence[dict[str, str]]) -> str:
    """The rows as a Markdown table."""
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "| " + " | ".join("---" for _ in keys) + " |"]
    lines += ["| " + " | ".join(r[k] for k in keys) + " |" for r in rows]
    return "\n".join(lines)
