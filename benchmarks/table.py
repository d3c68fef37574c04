"""The paper's Table 1 columns from per-sample outcomes."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchmarks.outcomes import outcomes, scores
from benchmarks.utility_auc import utility_auc
from policies import DEFAULT_C_R


@dataclass(frozen=True)
class Table1Row:
    """UtilityAUC and the paper's rates (fractions in [0, 1]; the paper prints percent).

    ``ans_acc``: answerable samples receiving a correct substantive answer;
    ``ref_acc``: refusal-required samples receiving a refusal;
    ``answer_rate``: samples receiving a substantive answer. ``nan`` where undefined.
    """

    n: int
    utility_auc: float
    ans_acc: float
    ref_acc: float
    answer_rate: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def table1(
    answerable: Any, answered: Any, correct: Any, cost: Any, score: Any = None,
    *, c_r: float = DEFAULT_C_R,
) -> Table1Row:
    """Table 1 row; without ``score`` the binary protocol (answered = 1, refused = 0).

    Examples
    --------
    A correct answer, an unnecessary refusal, a refused and an answered refusal-required
    query:

    >>> row = table1([True, True, False, False], [True, False, False, True],
    ...              [True, None, None, None], [1.0, 1.0, 2.0, 2.0])
    >>> row.ans_acc, row.ref_acc, row.answer_rate
    (0.5, 0.5, 0.5)
    """
    o = outcomes(answerable, answered, correct, cost)
    s = o.answered.astype(np.float64) if score is None else scores(score, o.n)
    a, d = o.answerable, o.answered
    n_a, n_r = int(a.sum()), int((~a).sum())
    return Table1Row(
        n=o.n,
        utility_auc=utility_auc(a, d, o.correct, o.cost, s, c_r=c_r),
        ans_acc=float((a & d & o.correct).sum() / n_a) if n_a else float("nan"),
        ref_acc=float((~a & ~d).sum() / n_r) if n_r else float("nan"),
        answer_rate=float(d.mean()),
    )
