"""Cross-fitting: everything the bench fits is fitted on training folds and scored on the
held-out fold, never on the items it is scored on.

* the guard: per fold, a policy fitted on the training folds by
  :func:`guard.policy.fit_policy` — the function ``utilityguard fit`` runs on all data —
  (cost model: the given one as is, or — when it was trained on the bench data, the shipped
  default on the seed set, detected by the training-data hash — a refit with the same
  settings; a calibrator on the answered training records, answering a refusal-required item
  counting as incorrect, or a given calibrator as is; an answerability classifier), and the
  held-out items decided by that policy's :class:`guard.Guard`, exactly as the runtime does;
* the cost-blind confidence threshold: chosen per fold (see
  :mod:`benchmarks.bench.baselines`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.model_selection import GroupKFold, KFold

from benchmarks.bench.data import BenchData
from cost_models.datasets import DatasetItem
from cost_models.persistence import sha256_rows
from cost_models.regressor import CostRegressor
from guard.calibration import Calibrator, raw_probability
from guard.calibration.multi import MultiSignalCalibrator
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import BenchError, CalibrationError
from guard.policy import Policy, TrainingSet, fit_policy
from guard.policy.fit import fit_calibrator, fit_multi_calibrator

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]


def make_folds(n: int, k: int = 5, seed: int = 0, order: IntArray | None = None,
               groups: Sequence[str] | None = None) -> list[tuple[IntArray, IntArray]]:
    """K folds over positions ``0..n-1``, drawn over ``order`` (e.g. :attr:`BenchData.canonical`)
    so that the folds follow the items, not their positions. With ``groups`` (one label per
    position, e.g. the items' sources) whole groups are held out together."""
    if n < 2 * k:
        raise BenchError(f"the bench needs at least {2 * k} items for {k}-fold cross-fitting")
    pos = np.arange(n) if order is None else np.asarray(order)
    if groups is None:
        split = KFold(n_splits=k, shuffle=True, random_state=seed).split(pos)
    else:
        labels = np.asarray(groups, dtype=object)[pos]
        if len(set(labels.tolist())) < k:
            raise BenchError(f"grouped folds need at least {k} distinct groups, "
                             f"found {len(set(labels.tolist()))}")
        split = GroupKFold(n_splits=k, shuffle=True, random_state=seed).split(pos, groups=labels)
    return [(pos[a], pos[b])  # in canonical order: fits see the same rows in the same order
            for a, b in split]


def trained_on(model: CostRegressor, meta: dict[str, object], data: BenchData,
               items: Sequence[DatasetItem] | None = None) -> bool:
    """True when the model's training-data hash equals the hash of the bench items — the
    items with a response, or the whole dataset ``items`` (responses to only part of the
    model's training set must not be scored with a model that saw them)."""
    want = meta.get("training_data_sha256")
    if not want:
        return False
    have = {sha256_rows([(q, float(c)) for q, c in zip(data.questions, data.cost, strict=True)])}
    if items is not None and all(it.cost is not None for it in items):
        # training hashes are over rows in file order; the bench holds its items sorted by id
        scored = set(data.ids)
        have.add(sha256_rows([(it.question, float(it.cost or 0.0)) for it in items
                              if it.id in scored]))
        have.add(sha256_rows([(it.question, float(it.cost or 0.0)) for it in items]))
    return want in have


@dataclass
class Probabilities:
    signal: str
    raw: FloatArray  # uncalibrated probability, NaN where the signal is missing
    calibrated: FloatArray  # out-of-fold calibrated probability, NaN where missing
    how: str


def has_signal(data: BenchData, signal: str) -> bool:
    """Whether some answered response of ``data`` carries confidence ``signal``."""
    return bool(np.isfinite(data.signals[signal][data.answered]).any())


def choose_signal(data: BenchData, wanted: str | None,
                  among: Sequence[str] | None = None) -> str:
    """The signal the bench reports and a single-signal calibrator reads: ``wanted``, else the
    first of ``among`` (a multi-signal calibrator's signals) the responses have, else the
    first they have."""
    available = [s for s in data.signals if has_signal(data, s)]
    if among:
        have = [s for s in among if s in available]
        if not have:
            raise BenchError(f"{data.responses_file}: no answered response has any of "
                             f"confidence.{', '.join(among)}")
        return have[0]
    if wanted:
        if wanted not in data.signals:
            raise BenchError(f"--signal must be one of {', '.join(data.signals)}")
        if wanted not in available:
            raise BenchError(f"{data.responses_file}: no answered response has "
                             f"confidence.{wanted}")
        return wanted
    if not available:
        raise BenchError(f"{data.responses_file}: no answered response has a confidence "
                         f"signal ({', '.join(data.signals)})")
    return available[0]


def training_set(data: BenchData, signal: str, groups: Sequence[str]) -> TrainingSet:
    """Every bench item as a policy training row (:class:`guard.policy.TrainingSet`)."""
    return TrainingSet(list(data.questions), data.answerable, data.cost, data.answered,
                       data.answerable & data.correct, data.signals[signal], list(groups),
                       dict(data.signals), list(data.texts) if data.texts else [])


def pooled_rows(others: Sequence[BenchData], ids: set[str], signal: str) -> TrainingSet:
    """The training rows of other models' responses to the items ``ids`` (one row per model
    and item), for a calibrator pooled over models."""
    parts = []
    for o in others:
        take = [i for i, rid in enumerate(o.ids) if rid in ids]
        parts.append(training_set(o, signal, [""] * o.n).take(take))
    first = parts[0]

    def cat(f: str) -> Any:
        return np.concatenate([getattr(p, f) for p in parts])

    return TrainingSet(
        [q for p in parts for q in p.questions], cat("answerable"), cat("cost"),
        cat("answered"), cat("correct"), cat("signal"),
        groups=[g for p in parts for g in p.groups],
        signals={k: np.concatenate([p.signals[k] for p in parts]) for k in first.signals},
        texts=[t for p in parts for t in (p.texts or [None] * p.n)])


Tick = Callable[[int, int], None]


def decide(guard: Guard, data: BenchData, idx: IntArray, signal: str,
           wrap: Callable[[str, int], Any] | None = None, tick: Tick | None = None
           ) -> list[DecisionRecord]:
    """The runtime's decisions (:meth:`guard.Guard.decide`, as the proxy and the decorator
    make them) for the items ``idx``: each item's question (or the request ``wrap`` makes of
    it: :mod:`benchmarks.bench.contexts`), recorded reply and recorded confidence signal. A
    reply whose text was not recorded is the model's refusal when it was graded a refusal,
    else a placeholder answer text. ``tick(done, len(idx))`` after every 5% of the items."""
    out = []
    every = max(1, len(idx) // 20)
    for k, i in enumerate(idx):
        if tick is not None and k and k % every == 0:
            tick(k, len(idx))
        text = data.texts[i] if data.texts else None
        if text is None and data.answered[i]:
            text = "(reply text not recorded)"
        # every recorded signal (a single-signal calibrator reads only its own)
        conf = {s: float(v[i]) for s, v in data.signals.items() if np.isfinite(v[i])} or None
        query = data.questions[i] if wrap is None else wrap(data.questions[i], int(i))
        out.append(guard.decide(query, text, confidence=conf, request_id=data.ids[i]))
    return out


@dataclass
class GuardFit:
    """The guard, cross-fitted: for every item, what the policy fitted on the other folds
    decided with (``cost`` = L, ``p``, ``alpha``) and decided (``answer``), and its score
    (expected gain over refusing; ``-inf`` without ``p``)."""

    cost: FloatArray
    raw: FloatArray
    p: FloatArray
    alpha: FloatArray
    answer: BoolArray
    margin: FloatArray
    how: dict[str, str]
    records: list[DecisionRecord]
    policies: list[Policy]  # the policy fitted on each fold's training items

    def probabilities(self, signal: str) -> Probabilities:
        return Probabilities(signal, self.raw, self.p, self.how["probability"])


def _guard_fit(data: BenchData, signal: str, records: list[DecisionRecord | None],
               how: dict[str, str], fitted: list[Policy]) -> GuardFit:
    n = data.n
    done = [r for r in records if r is not None]
    if len(done) != n:
        raise BenchError("the folds do not cover every item")
    cost = np.array([r.cost for r in done], dtype=np.float64)
    alpha = np.array([r.alpha for r in done], dtype=np.float64)
    p = np.array([np.nan if r.p is None else r.p for r in done], dtype=np.float64)
    answer = np.array([r.decision == "answer" for r in done], dtype=bool)
    margin = np.array([-np.inf if r.margin is None else r.margin for r in done],
                      dtype=np.float64)
    x = data.signals[signal]
    have = np.isfinite(x)
    raw = np.full(n, np.nan)
    raw[have] = np.asarray(raw_probability(signal, x[have]), dtype=np.float64)
    return GuardFit(cost, raw, p, alpha, answer, margin, how, done, fitted)


def fixed_guard(data: BenchData, policy: Policy, tick: Tick | None = None) -> GuardFit:
    """The guard of one fitted policy, as is (nothing refitted): every item decided by
    ``policy``'s :class:`guard.Guard` — the check of a shipped or user policy on questions it
    was not fitted on. ``tick(done, n)`` reports the items decided."""
    records: list[DecisionRecord | None] = list(
        decide(Guard.from_policy(policy), data, np.arange(data.n), policy.signal, tick=tick))
    how = {
        "cost": f"the policy's cost model ({policy.label}), as is",
        "probability": f"the policy's calibrator ({policy.calibrator.method_}), as is",
        "answerability": ("the policy's answerability classifier, as is"
                          if policy.answerability is not None
                          else f"the policy's constant alpha = {policy.alpha_constant}"),
        "decisions": f"guard.Guard.decide with the fixed policy {policy.label} (no refit)",
    }
    return _guard_fit(data, policy.signal, records, how, [policy])


def _probability_how(calibrator: Calibrator | None, methods: Sequence[str],
                     multi: Sequence[str] | None, pooled: Sequence[BenchData]) -> str:
    kind = (f"a multi-signal calibrator ({', '.join(multi)} and reply features)" if multi
            else "a calibrator")
    if pooled:
        return (f"out of fold and out of model: {kind} fitted on the other models' replies "
                f"({', '.join(str(o.model) for o in pooled)}) to the other folds' items")
    if calibrator is not None:
        return f"the given calibrator ({calibrator.method_})"
    if multi:
        return f"out of fold: {kind} fitted on the other folds' answered records"
    return ("out of fold: a calibrator (method chosen by CV Brier inside each training fold: "
            f"{', '.join(methods)}) fitted on the other folds' answered records")


def crossfit_guard(data: BenchData, signal: str, folds: Sequence[tuple[IntArray, IntArray]],
                   groups: Sequence[str], c_r: float, *, cost_model: CostRegressor,
                   refit: bool, calibrator: Calibrator | None = None,
                   multi: Sequence[str] | None = None,
                   pooled: Sequence[BenchData] = (), cost_scale: bool = False,
                   alpha_scale: bool = False, tick: Tick | None = None) -> GuardFit:
    """Per fold, :func:`guard.policy.fit_policy` on the training folds (the function
    ``utilityguard fit`` calls on all data), then the held-out items decided by that policy's
    :class:`guard.Guard` (the runtime's code). ``tick(done, 2 * folds)``: after each fold's
    fit and after its decisions."""
    full = training_set(data, signal, groups)
    records: list[DecisionRecord | None] = [None] * data.n
    methods = []
    fitted: list[Policy] = []
    for k, (train, test) in enumerate(folds):
        try:
            cal: Calibrator | MultiSignalCalibrator | None = calibrator
            if pooled:  # the calibrator from the other models' replies to these items
                rows = pooled_rows(pooled, {data.ids[i] for i in train}, signal)
                cal = (fit_multi_calibrator(rows, multi) if multi
                       else fit_calibrator(rows, signal))
            policy = fit_policy(full.take(train), signal=signal, c_r=c_r, name=f"fold-{k}",
                                cost_model=cost_model, refit_cost=cost_model if refit else None,
                                calibrator=cal, multi=None if pooled else multi,
                                cost_scale=cost_scale, alpha_scale=alpha_scale)
        except CalibrationError as exc:
            raise BenchError(f"on a training fold: {exc}") from None
        methods.append(policy.calibrator.method_)
        fitted.append(policy)
        if tick is not None:
            tick(2 * k + 1, 2 * len(folds))
        for i, rec in zip(test, decide(Guard.from_policy(policy), data, test, signal), strict=True):
            records[i] = rec
        if tick is not None:
            tick(2 * k + 2, 2 * len(folds))
    one_class = data.answerable.all() or not data.answerable.any()
    how = {
        "cost": (("out of fold: refit per fold on the other folds' items (the model was "
                  "trained on these items)") if refit else "the given cost model, as is")
                + ("; its price mapped by a cost scale fitted per fold on out-of-fold prices "
                   "of the other folds' items" if cost_scale else ""),
        "probability": _probability_how(calibrator, methods, multi, pooled),
        "answerability": ("constant: the dataset has one answerability class" if one_class else
                          "out of fold: a text classifier (TF-IDF + logistic regression) "
                          "fitted on the other folds' answerability labels"
                          + ("; its alpha Platt-scaled on grouped out-of-fold predictions of "
                             "the other folds' items" if alpha_scale else "")),
        "decisions": "guard.Guard.decide with the policy fitted on the other folds "
                     "(guard.policy.fit_policy, as utilityguard fit)",
    }
    return _guard_fit(data, signal, records, how, fitted)
