"""Training, model selection and evaluation of cost regressors.

Model selection is by cross-validation *grouped by source*: every fold holds out whole
sources, so the score says how the model does on sources it has never seen (a random split
would reward memorizing a source's style). Reported metrics:

* ``spearman``: Spearman correlation of the out-of-fold ``mu`` with ``log L``;
* ``mae_log``: mean absolute error of ``log L``;
* ``decision_agreement``: over the grid ``p = 0, 0.01, ..., 1``, the share of (item, p) pairs
  where the rule with the predicted ``E[L]`` decides as with the true ``L`` (at ``C_R``);
* ``decision_regret``: the mean expected-utility loss of those decisions against deciding
  with the true ``L``. Both are also given for the median ``exp(mu)``: the median agrees with
  the true-cost decision more often, but ``E[L]`` loses far less utility, because the rare
  costly errors it guards against dominate the loss — the reason the guard uses ``E[L]``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import spearmanr
from sklearn.base import clone

from cost_models.kinds import KINDS
from cost_models.regressor import CostRegressor, Paraphrases, cv_scheme, folds, is_grouped
from policies import (
    DEFAULT_C_R,
    expected_utility_values,
    refusal_expected_utility_values,
    should_answer,
)
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
P_GRID = np.linspace(0.0, 1.0, 101)
#: The ridge penalties :func:`select_and_train` searches.
RIDGE_GRID = (0.1, 0.3, 1.0, 3.0)


def decision_agreement(pred_cost: Any, true_cost: Any, c_r: float = DEFAULT_C_R) -> float:
    """Share of (item, p) pairs on ``P_GRID`` where both costs give the same decision.

    >>> decision_agreement([2.0, 9.0], [2.0, 9.0])
    1.0
    """
    pc = np.asarray(pred_cost, dtype=np.float64)[:, None]
    tc = np.asarray(true_cost, dtype=np.float64)[:, None]
    p = P_GRID[None, :]
    return float(np.mean(should_answer(p, pc, c_r) == should_answer(p, tc, c_r)))


def decision_regret(pred_cost: Any, true_cost: Any, c_r: float = DEFAULT_C_R) -> float:
    """Mean expected-utility loss, over items and ``P_GRID``, of deciding with ``pred_cost``
    instead of the true cost (answering is worth ``p - (1 - p) L``, refusing ``-C_R``).

    >>> decision_regret([2.0, 9.0], [2.0, 9.0])
    0.0
    """
    pc = np.asarray(pred_cost, dtype=np.float64)[:, None]
    tc = np.asarray(true_cost, dtype=np.float64)[:, None]
    p = P_GRID[None, :]
    q = expected_utility_values(p, tc)
    refuse = refusal_expected_utility_values(c_r)
    take = should_answer(p, pc, c_r)
    best = np.maximum(q, refuse)
    return float(np.mean(best - np.where(take, q, refuse)))


@dataclass(frozen=True)
class CVScores:
    kind: str
    ridge: float
    spearman: float
    mae_log: float
    decision_agreement: float | None = None
    decision_regret: float | None = None
    decision_agreement_median: float | None = None
    decision_regret_median: float | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grouped_cv(
    texts: Sequence[str], cost: Any, groups: Sequence[str] | None, *, kind: str, ridge: float,
    cv: int = 5, nested: bool = False, c_r: float = DEFAULT_C_R, random_state: int = 0,
    on_fold: Callable[[], None] | None = None, paraphrases: Paraphrases | None = None,
) -> CVScores:
    """Out-of-fold scores with folds grouped by source (shuffled K-fold when ``groups`` is
    ``None`` or has fewer than ``cv`` distinct values: :func:`cv_scheme` says which).

    With ``nested=True`` every outer fold fits a full :class:`CostRegressor` (whose own inner
    folds estimate ``s^2``) and ``decision_agreement`` is computed from its ``E[L]``.
    """
    t0 = time.perf_counter()
    y = np.asarray(cost, dtype=np.float64)
    logy = np.log(y)
    mu = np.empty_like(logy)
    mean_cost = np.empty_like(logy)
    base = CostRegressor(kind=kind, ridge=ridge, cv=cv, random_state=random_state)
    para = paraphrases if paraphrases is not None else Paraphrases([], [])
    for train, test in folds(len(texts), groups, cv, random_state):
        tr = [texts[i] for i in train]
        te = [texts[i] for i in test]
        if nested:
            # the paraphrases of the training rows, renumbered into the fold's rows
            pos = {int(r): k for k, r in enumerate(train)}
            inner = Paraphrases([t for t, o in zip(para.texts, para.of, strict=True)
                                 if int(o) in pos],
                                [pos[int(o)] for o in para.of if int(o) in pos])
            m = clone(base).fit(tr, y[train],
                                groups=None if groups is None else [groups[i] for i in train],
                                paraphrases=inner)
            mu[test] = m.predict_log(te)
            mean_cost[test] = m.predict(te)
        else:
            from cost_models.regressor import build_pipeline

            tx, ty = para.with_rows(tr, logy, train)
            pipe = build_pipeline(kind, ridge, random_state).fit(tx, ty)
            mu[test] = pipe.predict(te)
        if on_fold:
            on_fold()
    decisions: dict[str, float | None] = {}
    if nested:
        decisions = {
            "decision_agreement": decision_agreement(mean_cost, y, c_r),
            "decision_regret": decision_regret(mean_cost, y, c_r),
            "decision_agreement_median": decision_agreement(np.exp(mu), y, c_r),
            "decision_regret_median": decision_regret(np.exp(mu), y, c_r),
        }
    return CVScores(kind, ridge, float(spearmanr(mu, logy).statistic),
                    float(np.mean(np.abs(mu - logy))), **decisions,
                    seconds=round(time.perf_counter() - t0, 2))


@dataclass
class TrainReport:
    selected: CVScores
    ridge_search: list[CVScores] = field(default_factory=list)
    alternatives: list[CVScores] = field(default_factory=list)
    #: what the folds were, in words (grouped, or shuffled and why)
    scheme: str = ""
    grouped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"scheme": self.scheme, "grouped": self.grouped,
                "selected": self.selected.to_dict(),
                "ridge_search": [s.to_dict() for s in self.ridge_search],
                "alternatives": [s.to_dict() for s in self.alternatives]}


def select_and_train(
    texts: Sequence[str], cost: Any, groups: Sequence[str] | None, *, kind: str = "affix-ridge",
    ridges: Sequence[float] = RIDGE_GRID, compare: Sequence[str] = (), cv: int = 5,
    c_r: float = DEFAULT_C_R, on_fold: Callable[[], None] | None = None, group_name: str = "group",
    paraphrases: Paraphrases | None = None,
) -> tuple[CostRegressor, TrainReport]:
    """Pick the ridge penalty by grouped CV (lowest MAE of ``log L``), score the pick with nested
    grouped CV, score the ``compare`` kinds, and fit the pick on everything. Without enough
    groups every CV is shuffled K-fold, and the report's ``scheme`` says so."""
    if kind not in KINDS:
        raise InvalidValueError(f"kind must be one of {', '.join(KINDS)}")
    is_ridge = kind.endswith("ridge")
    search = [grouped_cv(texts, cost, groups, kind=kind, ridge=r, cv=cv, on_fold=on_fold,
                         paraphrases=paraphrases)
              for r in (ridges if is_ridge else ridges[:1])]
    best = min(search, key=lambda s: s.mae_log)
    selected = grouped_cv(texts, cost, groups, kind=kind, ridge=best.ridge, cv=cv, nested=True,
                          c_r=c_r, on_fold=on_fold, paraphrases=paraphrases)
    alternatives = [
        grouped_cv(texts, cost, groups, kind=k, ridge=best.ridge, cv=cv, on_fold=on_fold,
                   paraphrases=paraphrases)
        for k in compare if k != kind
    ]
    model = CostRegressor(kind=kind, ridge=best.ridge, cv=cv).fit(texts, cost, groups=groups,
                                                                  paraphrases=paraphrases)
    grouped = is_grouped(groups, cv)
    return model, TrainReport(selected, search, alternatives,
                              scheme=cv_scheme(groups, cv, group_name), grouped=grouped)
