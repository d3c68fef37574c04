"""The budget–welfare frontier of a model's decisions, as a table and a plot.

On the guard's own estimates (``p``, ``E[L]``, ``alpha`` per item, out of fold in the bench)
:func:`policies.frontier` gives ``P(R_max)``, the best expected immediate utility with at most
``R_max`` expected unnecessary refusals, and its slope ``C_R*(R_max)``. Both are shown per
request here — ``R`` as expected unnecessary refusals per request (and as a rate of the
expected answerable requests), ``P`` as mean expected utility per request — so the slope of
the curve *is* ``C_R*``. The paper's fixed prices are marked: each selects one point.
Where realised values are given (labels, true costs, grades), each row also shows what the
decisions at that price actually did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from guard.decision_records import DecisionRecord
from policies import PAPER_C_R, answered_at, budget_range, frontier_at, price_points


def solver_p(record: DecisionRecord) -> float:
    """The budget solver's ``p`` of one decision: NaN for the model's own refusal (never
    answered at any price), 1 for an answer the guard lets through without a probability
    (answered at every price), else the record's ``p``."""
    if record.decision == "passthrough_refusal":
        return float("nan")
    if record.p is None:
        return 1.0 if record.decision == "answer" else float("nan")
    return float(record.p)


def _realised(ans: Any, value_answer: Any, value_refuse: Any, weight: Any
              ) -> dict[str, float]:
    x = np.asarray(ans, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    return {"realised_unnecessary_refusal_rate": float(((1 - x) * w).sum() / max(w.sum(), 1e-12)),
            "realised_mean_utility": float(np.mean(x * value_answer + (1 - x) * value_refuse))}


def frontier_table(p: Any, cost: Any, alpha: Any, *, value_answer: Any = None,
                   value_refuse: Any = None, weight: Any = None, points: int = 33
                   ) -> dict[str, Any]:
    """``{"rows": [...], "paper": [...], "n", "answerable_expected"}``: the frontier on
    ``points`` budgets and at the paper's ``C_R`` values (JSON-ready)."""
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), np.shape(p))
    n, expected = int(np.size(p)), float(a.sum())
    real = value_answer is not None and value_refuse is not None and weight is not None

    def row(budget: float, c_r: float, welfare: float, ans: Any) -> dict[str, float]:
        out = {"c_r": float(c_r), "refusals_per_request": budget / n,
               "rate_of_answerable": budget / expected if expected else 0.0,
               "welfare_per_request": welfare / n}
        if real:
            out.update(_realised(ans, value_answer, value_refuse, weight))
        return out

    at_paper = price_points(p, cost, PAPER_C_R, alpha=a)
    lo, hi = budget_range(p, cost, alpha=a)
    grid = sorted({*np.linspace(lo, hi, points).tolist(), *(b for _, b, _ in at_paper)})
    f = frontier_at(p, cost, grid, alpha=a)  # through the paper's points: the curve meets its dots
    rows = [row(b, c, w, s.answer_probability)
            for b, c, w, s in zip(f.budget, f.c_r, f.welfare, f.solutions, strict=True)]
    paper = [row(b, c, w, answered_at(p, cost, c, alpha=a)) for c, b, w in at_paper]
    return {"n": n, "answerable_expected": expected, "rows": rows, "paper": paper}


def frontier_markdown(table: dict[str, Any]) -> str:
    """The frontier as Markdown: the paper's prices first, then the budget grid."""
    real = bool(table["rows"]) and "realised_mean_utility" in table["rows"][0]
    head = ("| C_R* | R per request | R / answerable | P per request |"
            + (" realised unnecessary-refusal rate | realised mean utility |" if real else ""))
    sep = "|" + " --- |" * (6 if real else 4)

    def line(r: dict[str, float], mark: str = "") -> str:
        cells = [f"{mark}{r['c_r']:.3f}", f"{r['refusals_per_request']:.4f}",
                 f"{r['rate_of_answerable']:.4f}", f"{r['welfare_per_request']:.4f}"]
        if real:
            cells += [f"{r['realised_unnecessary_refusal_rate']:.4f}",
                      f"{r['realised_mean_utility']:.4f}"]
        return "| " + " | ".join(cells) + " |"

    paper = "\n".join(line(r, "paper ") for r in table["paper"])
    grid = "\n".join(line(r) for r in table["rows"])
    return "\n".join([head, sep, paper, grid])


def plot_frontier(tables: dict[str, dict[str, Any]], out: Path) -> bool:
    """``P(R)`` and ``C_R*(R)`` of each table (one line per model) with the paper's prices
    marked; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for label, t in tables.items():
        x = [r["refusals_per_request"] for r in t["rows"]]
        (line,) = top.plot(x, [r["welfare_per_request"] for r in t["rows"]], lw=1.5,
                           label=label)
        bottom.step(x, [r["c_r"] for r in t["rows"]], where="post", lw=1.5,
                    color=line.get_color(), label=label)
        px = [r["refusals_per_request"] for r in t["paper"]]
        top.scatter(px, [r["welfare_per_request"] for r in t["paper"]], s=18,
                    color=line.get_color(), zorder=3)
        for r in t["paper"]:
            top.annotate(f"{r['c_r']:g}", (r["refusals_per_request"], r["welfare_per_request"]),
                         fontsize=7, xytext=(3, -9), textcoords="offset points")
    top.set_ylabel("P(R): expected utility per request")
    top.set_title("Budget–welfare frontier (dots: the paper's fixed C_R)")
    bottom.set_yscale("symlog", linthresh=1.0)
    bottom.set_ylim(0, 100)  # the smallest budgets need prices far above the paper's range
    bottom.set_ylabel("slope C_R*(R) (symlog, cut at 100)")
    bottom.set_xlabel("R_max: expected unnecessary refusals per request")
    top.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True
