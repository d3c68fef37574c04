"""The policies the bench compares, all on the same responses.

* ``model``: the raw model, binary score (the paper's Table 1 protocol);
* ``model_confidence``: the raw model ordered by its confidence (the paper's Table 3);
* ``guard``: predicted ``E[L]``, calibrated ``p``, the Bayes rule, scored by the expected
  gain over refusing. Half of a UtilityBench-shaped set must be refused, so answerability is
  uncertain and the Bayes rule is docs/design.md's answerability-aware one,
  ``q >= 1 - alpha (1 + C_R)``, with ``alpha = P(answerable | query)`` from a text classifier
  fitted on the training folds (score ``q + C_R`` when ``alpha = 1``);
* ``guard_oracle_cost``: the same with the true ``L`` (isolates cost-model error);
* ``guard_paper_rule``: the guard with ``alpha = 1``, the paper's rule as stated (what the
  guard does when it has no answerability estimate);
* ``confidence_threshold``: the best single cost-blind threshold on the raw confidence,
  chosen on the training folds (what a selective-prediction tool would do);
* ``always_refuse``: refuse everything;
* ``oracle``: the best achievable with these responses — deliver exactly the answers whose
  delivery gains utility over a refusal (every correct answer, and a wrong answer to an
  answerable item whose cost is below ``C_R``), ordered by that gain; its mean utility and
  UtilityAUC bound every policy that only withholds the model's answers (UtilityAUC 1 would
  need a correct answer to every answerable item).

A model's own refusal stays a refusal under every policy: the guard can withhold an answer,
never invent one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.crossfit import IntArray, Probabilities
from benchmarks.bench.data import BenchData
from policies import (
    answer_threshold,
    expected_utility_values,
    refusal_expected_utility_values,
    response_gain_values,
    response_utility_values,
    should_answer,
)

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
BASELINES = ("model", "model_confidence", "guard", "guard_oracle_cost", "guard_paper_rule",
            "confidence_threshold", "always_refuse", "oracle")


@dataclass
class BaselineRun:
    name: str
    answered: BoolArray
    score: FloatArray
    prob: FloatArray  # the probability the policy acts on; NaN where it has none


def utilities(data: BenchData, answered: BoolArray, c_r: float) -> FloatArray:
    """Per-item response utility ``v`` of delivering ``answered``."""
    return response_utility_values(data.answerable, answered, data.correct, data.cost, c_r)


def bayes(data: BenchData, p: FloatArray, cost: FloatArray, c_r: float,
          alpha: FloatArray | float = 1.0) -> tuple[BoolArray, FloatArray]:
    """The guard's decisions and scores: answer iff ``should_answer(p, L, C_R, alpha)``;
    score = expected gain over refusing, ``q - [alpha (-C_R) + (1 - alpha)]`` (``q + C_R``
    when ``alpha = 1``). Items without ``p`` are decided as :meth:`guard.Guard.decide` does
    by default: refused, unless the threshold is <= 0 (every ``p`` would answer). The same
    decisions as the runtime's, vectorized (tested against ``Guard.decide``)."""
    have = np.isfinite(p)
    pf = np.where(have, p, 0.0)
    rule = np.asarray(should_answer(pf, cost, c_r, alpha=alpha), dtype=bool)
    blind = np.asarray(answer_threshold(cost, c_r, alpha=alpha)) <= 0
    take = data.answered & np.where(have, rule, blind)
    refuse = refusal_expected_utility_values(c_r, alpha=np.asarray(alpha))
    score = np.where(have, expected_utility_values(pf, cost) - refuse, -np.inf)
    return take, score


def best_threshold(raw: FloatArray, answered: BoolArray, gain: FloatArray) -> float:
    """The raw-confidence threshold maximizing total gain of answering ``raw >= t`` (among
    the model's answers); ``inf`` (answer nothing) when no threshold helps."""
    cand = np.flatnonzero(answered & np.isfinite(raw))
    if cand.shape[0] == 0:
        return float("inf")
    order = cand[np.argsort(-raw[cand], kind="stable")]
    values, gains = raw[order], np.cumsum(gain[order])
    last_of_tie = np.r_[values[1:] != values[:-1], True]  # thresholds take whole tie groups
    totals, thresholds = gains[last_of_tie], values[last_of_tie]
    k = int(np.argmax(totals))
    return float(thresholds[k]) if totals[k] > 0 else float("inf")


def run_baselines(data: BenchData, pred_cost: FloatArray, probs: Probabilities,
                 folds: Sequence[tuple[IntArray, IntArray]], c_r: float,
                 alpha: FloatArray | None = None, decided: BoolArray | None = None
                 ) -> dict[str, BaselineRun]:
    """Decisions, scores and probabilities of every policy at ``c_r``; ``alpha`` is the
    out-of-fold ``P(answerable)`` of every item (``None``: 1, the paper's rule).
    ``decided``: the guard's decisions as the runtime made them at this ``c_r``
    (:func:`benchmarks.bench.crossfit.crossfit_guard`); they replace the vectorized rule's."""
    al: FloatArray | float = 1.0 if alpha is None else alpha
    raw, cal = probs.raw, probs.calibrated
    raw_score = np.where(np.isfinite(raw), raw, -1.0)
    runs: dict[str, BaselineRun] = {}
    runs["model"] = BaselineRun("model", data.answered.copy(), data.answered.astype(float), raw)
    runs["model_confidence"] = BaselineRun("model_confidence", data.answered.copy(), raw_score, raw)
    take, score = bayes(data, cal, pred_cost, c_r, al)
    runs["guard"] = BaselineRun("guard", take if decided is None else decided.copy(), score, cal)
    take, score = bayes(data, cal, data.cost, c_r, al)
    runs["guard_oracle_cost"] = BaselineRun("guard_oracle_cost", take, score, cal)
    take, score = bayes(data, cal, pred_cost, c_r)
    runs["guard_paper_rule"] = BaselineRun("guard_paper_rule", take, score, cal)
    gain = response_gain_values(data.answerable, np.ones(data.n, dtype=bool), data.correct,
                                data.cost, c_r)
    take = np.zeros(data.n, dtype=bool)
    for train, test in folds:
        t = best_threshold(raw[train], data.answered[train], gain[train])
        take[test] = data.answered[test] & np.isfinite(raw[test]) & (raw[test] >= t)
    runs["confidence_threshold"] = BaselineRun("confidence_threshold", take, raw_score, raw)
    none = np.zeros(data.n, dtype=bool)
    runs["always_refuse"] = BaselineRun("always_refuse", none, np.zeros(data.n),
                                      np.full(data.n, np.nan))
    best = data.answered & (gain > 0)
    runs["oracle"] = BaselineRun("oracle", best, np.where(best, gain, 0.0),
                               (best & data.answerable & data.correct).astype(float))
    return runs
