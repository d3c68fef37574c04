"""Cross-fitting: everything the bench fits is fitted on training folds and scored on the
held-out fold, never on the items it is scored on.

* consequence costs: the given cost model as is, or — when it was trained on the bench data
  (the shipped default on the seed set; detected by the training-data hash) — a refit per
  fold with the same settings, predicting the held-out fold;
* calibrated probabilities: a :class:`guard.calibration.Calibrator` fitted per fold on the
  answered records of the training folds (answering a refusal-required item counts as
  incorrect), or a given calibrator as is;
* the cost-blind confidence threshold: chosen per fold (see
  :mod:`benchmarks.bench.compared_policies`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from sklearn.model_selection import GroupKFold, KFold

from benchmarks.bench.data import BenchData, BenchError
from cost_models.answerability import AnswerabilityModel
from cost_models.datasets import DatasetItem
from cost_models.persistence import sha256_rows
from cost_models.regressor import CostRegressor
from guard.calibration import Calibrator, raw_probability
from guard.exceptions import CalibrationError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


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
class CostPredictions:
    cost: FloatArray
    how: str


def predict_costs(data: BenchData, model: CostRegressor, *, refit: bool,
                  folds: Sequence[tuple[IntArray, IntArray]], groups: Sequence[str]
                  ) -> CostPredictions:
    """``E[L]`` for every item: out of fold (refit per fold) or from ``model`` as is."""
    if not refit:
        return CostPredictions(model.predict(data.questions), "the given cost model, as is")
    out = np.empty(data.n, dtype=np.float64)
    for train, test in folds:
        m = CostRegressor(kind=model.kind, alpha=model.alpha, cv=model.cv,
                          max_chars=model.max_chars, random_state=model.random_state)
        m.fit([data.questions[i] for i in train], data.cost[train],
              groups=[groups[i] for i in train])
        out[test] = m.predict([data.questions[i] for i in test])
    return CostPredictions(out, "out of fold: refit per fold on the other folds' items "
                                "(the model was trained on these items)")


@dataclass
class Probabilities:
    signal: str
    raw: FloatArray  # uncalibrated probability, NaN where the signal is missing
    calibrated: FloatArray  # out-of-fold calibrated probability, NaN where missing
    how: str


def choose_signal(data: BenchData, wanted: str | None) -> str:
    available = [s for s, v in data.signals.items() if np.isfinite(v[data.answered]).any()]
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


def probabilities(data: BenchData, signal: str, folds: Sequence[tuple[IntArray, IntArray]],
                  calibrator: Calibrator | None = None) -> Probabilities:
    x = data.signals[signal]
    have = np.isfinite(x)
    raw = np.full(data.n, np.nan)
    raw[have] = np.asarray(raw_probability(signal, x[have]), dtype=np.float64)
    cal = np.full(data.n, np.nan)
    if calibrator is not None:
        cal[have] = calibrator.predict(x[have])
        return Probabilities(signal, raw, cal, f"the given calibrator ({calibrator.method_})")
    target = data.answerable & data.correct  # an answer to a refusal-required item is wrong
    methods = []
    for train, test in folds:
        fit_on = train[have[train] & data.answered[train]]
        try:
            c = Calibrator(method="auto", signal=signal).fit(x[fit_on], target[fit_on])
        except CalibrationError as exc:
            raise BenchError(f"cannot calibrate {signal} on a training fold: {exc}") from None
        methods.append(c.method_)
        pred = test[have[test]]
        cal[pred] = c.predict(x[pred])
    return Probabilities(signal, raw, cal,
                         "out of fold: a calibrator (method chosen by CV Brier inside each "
                         f"training fold: {', '.join(methods)}) fitted on the other folds' "
                         "answered records")


@dataclass
class Answerability:
    alpha: FloatArray  # out-of-fold P(answerable) of every item
    how: str


def answerability(data: BenchData, folds: Sequence[tuple[IntArray, IntArray]]
                  ) -> Answerability:
    """Out-of-fold ``P(answerable | question)`` from a text classifier fitted on the other
    folds' items. A dataset with one class only gets its constant (1 or 0)."""
    if data.answerable.all() or not data.answerable.any():
        return Answerability(np.full(data.n, float(data.answerable[0])),
                             "constant: the dataset has one answerability class")
    alpha = np.empty(data.n, dtype=np.float64)
    for train, test in folds:
        y = data.answerable[train]
        if y.all() or not y.any():
            alpha[test] = float(y.mean())
            continue
        model = AnswerabilityModel().fit([data.questions[i] for i in train], y)
        alpha[test] = model.predict_alpha([data.questions[i] for i in test])
    return Answerability(alpha, "out of fold: a text classifier (TF-IDF + wordllama embeddings, "
                                "logistic "
                                "regression) fitted on the other folds' answerability labels")
