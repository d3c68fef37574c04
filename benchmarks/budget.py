"""From a follow-up budget to ``C_R*`` on recorded traffic (``utilityguard budget``).

The items are what a policy decided on — graded response records decided by the policy as
is, or the proxy's audit log — as arrays the solver (:func:`policies.solve_budget`) reads:
``p``, the decision cost ``E[L]`` and ``alpha`` per item, and per item the weight one refusal
uses of the budget: its answerability label where the item has one, ``alpha`` (the estimate)
where it has none. Utilities are realised with the labels (the true cost, the grade) where
they exist and expected (``q`` for an answer, ``1 - alpha`` for a refusal) where not.

The budget is a rate of answerable requests (``R_max = rate * sum(weight)``) or a count per
``N`` requests (``R_max = count / N * n``); bootstrap intervals resample items and solve again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.crossfit import fixed_guard
from benchmarks.bench.data import load_bench
from benchmarks.bench.frontier import solver_p
from cost_models.datasets import DatasetItem
from guard.decision_records import DecisionRecord
from guard.exceptions import AuditStoreError, BenchError
from guard.policy import load_policy, shipped_policies
from policies import expected_utility_values, solve_budget
from policies.budget import BudgetSolution

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Step = Callable[[int, int], None]


@dataclass(frozen=True)
class BudgetItems:
    """Per-item arrays of the budgeted problem; ``labelled`` marks the items whose refusal
    weight is a label (the rest use ``alpha``); ``source`` says where they came from."""

    p: FloatArray
    cost: FloatArray
    alpha: FloatArray
    weight: FloatArray
    labelled: BoolArray
    value_answer: FloatArray
    value_refuse: FloatArray
    source: str

    @property
    def n(self) -> int:
        return int(self.p.size)

    def take(self, idx: NDArray[np.intp]) -> BudgetItems:
        return BudgetItems(self.p[idx], self.cost[idx], self.alpha[idx], self.weight[idx],
                           self.labelled[idx], self.value_answer[idx], self.value_refuse[idx],
                           self.source)

    @property
    def counting(self) -> str:
        """How unnecessary refusals are counted, in words."""
        k = int(self.labelled.sum())
        if k == self.n:
            return f"counted with the answerability labels (all {self.n} items)"
        if k == 0:
            return f"estimated as sum(alpha) over refused items (no labels; {self.n} items)"
        return (f"counted with the labels on {k} items, estimated as sum(alpha) over the "
                f"refused ones of the other {self.n - k}")


def default_policy() -> str:
    """The policy ``budget`` decides with when none is named: the shipped ``default`` when
    this installation has one, else the shipped ``smollm2``."""
    names = shipped_policies()
    return "default" if "default" in names else "smollm2"


def items_from_responses(items: list[DatasetItem], responses: Path, policy: str | Path,
                         *, trust: bool = False, progress: Step | None = None) -> BudgetItems:
    """Graded responses decided by ``policy`` as is (nothing refitted); the dataset's labels
    give the weights and the realised utilities (true cost, grade). ``progress(done, n)``:
    the responses decided so far."""
    data = load_bench(items, responses)
    fixed = load_policy(policy, trust=trust)
    fit = fixed_guard(data, fixed, progress)
    p = np.array([solver_p(r) for r in fit.records], dtype=np.float64)
    a = data.answerable
    right = a & data.correct
    return BudgetItems(
        p=p, cost=fit.cost, alpha=fit.alpha, weight=a.astype(np.float64),
        labelled=np.ones(data.n, dtype=bool),
        value_answer=np.where(right, 1.0, -data.cost), value_refuse=np.where(a, 0.0, 1.0),
        source=f"{data.model or responses.name} responses ({data.n} items) decided by "
               f"policy {fixed.label}")


def _flag(v: Any) -> bool | None:
    return None if v is None else bool(v)


def items_from_audit(target: str | os.PathLike[str]) -> BudgetItems:
    """The proxy's audit log: every decision, with its latest label where it has one
    (``POST /v1/feedback``)."""
    from guard.proxy.audit import open_store
    from guard.proxy.audit.schema import DECISIONS, FEEDBACK
    from guard.proxy.audit.store import read_rows

    try:  # the store's errors name it (a URL without its password)
        labels = {r["request_id"]: r for r in read_rows(target, FEEDBACK)}  # later rows win
        rows = list(read_rows(target, DECISIONS))
    except AuditStoreError as exc:
        raise BenchError(str(exc)) from None
    if not rows:
        raise BenchError(f"{open_store(target).name}: the audit log holds no decisions")
    p, cost, alpha, weight, labelled, v_ans, v_ref = [], [], [], [], [], [], []
    for row in rows:
        rec = DecisionRecord.model_validate({k: row[k] for k in DecisionRecord.model_fields
                                             if row.get(k) is not None})
        label = labels.get(rec.request_id) or {}
        answerable = _flag(label.get("answerable"))
        correct = _flag(label.get("correct"))
        true_cost = float(label.get("cost") or rec.cost)
        p.append(solver_p(rec))
        cost.append(rec.cost)
        alpha.append(rec.alpha)
        labelled.append(answerable is not None)
        weight.append(rec.alpha if answerable is None else float(answerable))
        if correct is not None:
            v_ans.append(1.0 if correct and answerable is not False else -true_cost)
        elif rec.p is not None:
            v_ans.append(float(expected_utility_values(rec.p, rec.cost)))
        else:
            v_ans.append(0.0)
        v_ref.append(1.0 - rec.alpha if answerable is None else float(not answerable))
    return BudgetItems(
        p=np.array(p), cost=np.array(cost), alpha=np.array(alpha), weight=np.array(weight),
        labelled=np.array(labelled, dtype=bool), value_answer=np.array(v_ans),
        value_refuse=np.array(v_ref), source=f"audit log ({len(rows)} decisions)")


@dataclass(frozen=True)
class Target:
    """A budget as a rate of answerable requests, or as ``count`` per ``per`` requests."""

    rate: float | None = None
    count: float | None = None
    per: float | None = None

    def budget(self, items: BudgetItems) -> float:
        """``R_max`` as a count on ``items``."""
        if self.rate is not None:
            return self.rate * float(items.weight.sum())
        if self.count is None or not self.per:
            raise BenchError("a budget needs a rate, or a count and a number of requests")
        return self.count / self.per * items.n

    def describe(self) -> str:
        if self.rate is not None:
            return f"{self.rate:g} of answerable requests"
        return f"{self.count:g} per {self.per:g} requests"


def summary(items: BudgetItems, sol: BudgetSolution) -> dict[str, Any]:
    """What the decisions at ``C_R*`` give: deterministic (answer at equality, as the guard
    decides) and with the boundary randomized (expected)."""
    answerable = float(items.weight.sum())
    x = sol.answer_probability
    ans = sol.answer.astype(np.float64)

    def util(xs: FloatArray) -> float:
        return float(np.mean(xs * items.value_answer + (1 - xs) * items.value_refuse))

    return {
        "c_r": sol.c_r, "binding": sol.binding, "feasible": sol.feasible,
        "budget": sol.budget, "answerable": answerable,
        "unnecessary_refusals": sol.refused,
        "unnecessary_refusal_rate": sol.refused / answerable if answerable else None,
        "mean_utility": util(ans), "answer_rate": float(ans.mean()),
        "boundary_items": int(sol.boundary.sum()),
        "boundary_refuse_probability": sol.refuse_probability,
        "randomized": {"unnecessary_refusals": sol.refused_expected,
                       "unnecessary_refusal_rate": (sol.refused_expected / answerable
                                                    if answerable else None),
                       "mean_utility": util(x), "answer_rate": float(x.mean())},
    }


def solve(items: BudgetItems, target: Target, *, c_r_max: float) -> BudgetSolution:
    return solve_budget(items.p, items.cost, target.budget(items), alpha=items.alpha,
                        weight=items.weight, c_r_max=c_r_max)


KEYS = ("c_r", "unnecessary_refusal_rate", "mean_utility", "answer_rate")


def bootstrap(items: BudgetItems, target: Target, *, c_r_max: float, n_boot: int, seed: int,
              progress: Step | None = None) -> dict[str, list[float] | None]:
    """95% percentile intervals of :data:`KEYS` over ``n_boot`` item resamples (the budget
    re-derived on each: a rate applies to the resample's answerable items)."""
    if n_boot == 0:
        return {k: None for k in KEYS}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in KEYS}
    for b in range(n_boot):
        sub = items.take(rng.integers(0, items.n, items.n))
        s = summary(sub, solve(sub, target, c_r_max=c_r_max))
        for k in KEYS:
            if s[k] is not None:
                draws[k].append(float(s[k]))
        if progress:
            progress(b + 1, n_boot)
    return {k: ([float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))] if v else None)
            for k, v in draws.items()}
