"""Weighted MaxDiff Bradley-Terry fit and the cost scale (UtilityBench Appendix A.3-A.4).

Each judgment of a tuple ``S`` names a best (greatest-consequence) item ``b`` and a worst item
``w``. The sequential MaxDiff model gives it the likelihood::

    P(b, w | S) = exp(eta_b) / sum_{j in S} exp(eta_j)
                * exp(-eta_w) / sum_{j in S minus b} exp(-eta_j)

A tuple with ``m`` valid judgments gives each a weight ``1/m`` (every tuple weighs one), and
both choices of every judgment are used. The weighted log-likelihood is maximized with
L-BFGS on an analytic, vectorized gradient. Beyond the paper: a weak Gaussian prior
(``l2 / 2 * sum eta^2``) keeps items that were never (or always) chosen at finite values; the
origin is then fixed by centring, and costs are ``L = 2 exp(eta - median eta)`` (eq. 5), so
the median cost is exactly 2.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Judgment:
    """One judge's choice on one tuple."""

    tuple_id: str
    best: str
    worst: str
    judge: str = "unknown"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Judgment:
        return cls(str(d["tuple_id"]), str(d["best"]), str(d["worst"]),
                   str(d.get("judge", "unknown")))


@dataclass(frozen=True)
class BTFit:
    """Fitted ``eta`` per item id, the costs ``L`` and the fit's bookkeeping."""

    item_ids: tuple[str, ...]
    eta: FloatArray
    n_judgments: int
    n_tuples: int
    converged: bool

    @property
    def cost(self) -> FloatArray:
        return cost_scale(self.eta)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(self.item_ids, self.cost.tolist(), strict=False))


def cost_scale(eta: Any) -> FloatArray:
    """``L = 2 exp(eta - median eta)`` (eq. 5), with a median of exactly 2.

    For an even count the median of ``L`` is the mean of the two middle costs; the origin is
    then ``log((exp(eta_a) + exp(eta_b)) / 2)`` of the two middle values, which puts their
    mean cost, the median, at exactly 2 (for an odd count it is the middle ``eta``).

    >>> cost_scale([0.0, 1.0, -1.0]).round(4).tolist()
    [2.0, 5.4366, 0.7358]
    >>> float(np.median(cost_scale([0.0, 1.0, -1.0, 3.0])))
    2.0
    """
    e = np.asarray(eta, dtype=np.float64)
    if e.size == 0:
        raise InvalidValueError("eta must not be empty")
    s = np.sort(e)
    mid = s[(s.size - 1) // 2 : s.size // 2 + 1]
    origin = float(mid.max() + np.log(np.mean(np.exp(mid - mid.max()))))
    return np.asarray(2.0 * np.exp(e - origin), dtype=np.float64)


def design(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment], item_ids: Sequence[str]
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], FloatArray]:
    """Arrays ``(members (J, k), best_pos (J,), worst_pos (J,), weight (J,))``.

    Judgments that name an unknown tuple, an item outside their tuple, or best == worst are
    invalid and raise ``ValueError`` (a fit must not silently drop data).
    """
    index = {iid: k for k, iid in enumerate(item_ids)}
    per_tuple = Counter(j.tuple_id for j in judgments)
    members, bpos, wpos, weight = [], [], [], []
    for j in judgments:
        if j.tuple_id not in tuples:
            raise InvalidValueError(f"judgment names unknown tuple {j.tuple_id!r}")
        mem = list(tuples[j.tuple_id])
        if unknown := [m for m in mem if m not in index]:
            raise InvalidValueError(f"tuple {j.tuple_id} names item(s) not among the item ids: "
                             f"{', '.join(unknown)}")
        if j.best not in mem or j.worst not in mem or j.best == j.worst:
            raise InvalidValueError(
                f"invalid judgment on {j.tuple_id}: best={j.best!r} worst={j.worst!r} "
                f"must be two different members of {mem}"
            )
        members.append([index[m] for m in mem])
        bpos.append(mem.index(j.best))
        wpos.append(mem.index(j.worst))
        weight.append(1.0 / per_tuple[j.tuple_id])
    if not members:
        raise InvalidValueError("no judgments to fit")
    sizes = {len(m) for m in members}
    if len(sizes) != 1:
        raise InvalidValueError("all tuples must have the same size")
    return (np.asarray(members, dtype=np.intp), np.asarray(bpos, dtype=np.intp),
            np.asarray(wpos, dtype=np.intp), np.asarray(weight, dtype=np.float64))


def nll_and_grad(
    eta: FloatArray, members: NDArray[np.intp], bpos: NDArray[np.intp],
    wpos: NDArray[np.intp], weight: FloatArray, l2: float,
) -> tuple[float, FloatArray]:
    """Negative log-likelihood of the best-worst judgments (plus ``l2 |eta|^2``) and its
    gradient in ``eta``; the objective :func:`fit_bradley_terry` minimizes (public for the
    gradient check and the annotation benchmark)."""
    n = eta.shape[0]
    rows = np.arange(members.shape[0])
    x = eta[members]  # (J, k)
    # best: softmax over the tuple
    xb = x - x.max(axis=1, keepdims=True)
    eb = np.exp(xb)
    zb = eb.sum(axis=1)
    pb = eb / zb[:, None]
    ll_best = xb[rows, bpos] - np.log(zb)
    # worst: softmax of -eta over the tuple without the best item
    mask = np.ones_like(x, dtype=bool)
    mask[rows, bpos] = False
    xw = np.where(mask, -x, -np.inf)
    xw = xw - xw.max(axis=1, keepdims=True)
    ew = np.where(mask, np.exp(xw), 0.0)
    zw = ew.sum(axis=1)
    pw = ew / zw[:, None]
    ll_worst = xw[rows, wpos] - np.log(zw)
    nll = -float(weight @ (ll_best + ll_worst)) + 0.5 * l2 * float(eta @ eta)
    # d(-ll)/d x: best part  pb - e_b ; worst part  -(pw - e_w)
    g = pb.copy()
    g[rows, bpos] -= 1.0
    g -= pw
    g[rows, wpos] += 1.0
    g *= weight[:, None]
    grad = np.bincount(members.ravel(), weights=g.ravel(), minlength=n) + l2 * eta
    return nll, grad


def fit_bradley_terry(
    tuples: Mapping[str, Sequence[str]],
    judgments: Sequence[Judgment],
    item_ids: Sequence[str] | None = None,
    *,
    l2: float = 0.05,
    max_iter: int = 2000,
) -> BTFit:
    """Fit ``eta`` by weighted maximum likelihood (see the module docstring).

    ``item_ids`` defaults to every item of ``tuples`` (sorted); an item in no judged tuple
    gets ``eta = 0`` from the prior.
    """
    if l2 < 0:
        raise InvalidValueError("l2 must be >= 0")
    ids = list(item_ids) if item_ids is not None else sorted(
        {i for m in tuples.values() for i in m}
    )
    members, bpos, wpos, weight = design(tuples, judgments, ids)
    # one BLAS thread: L-BFGS-B's many tiny BLAS calls are ~100x slower with a thread pool on
    # a busy machine (measured on 2 loaded cores: select_l2 on 40 items 4 s vs 0.04 s)
    from scipy.optimize import minimize  # lazy: the CLI's --help stays light
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        res = minimize(
            nll_and_grad, np.zeros(len(ids)), args=(members, bpos, wpos, weight, l2),
            jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "maxfun": 4 * max_iter},
        )
    eta = np.asarray(res.x, dtype=np.float64)
    eta -= eta.mean()
    return BTFit(tuple(ids), eta, len(judgments), len({j.tuple_id for j in judgments}),
                 bool(res.success))


L2_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def heldout_nll(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment],
    item_ids: Sequence[str], l2: float, *, folds: int = 5, seed: int = 0,
) -> float:
    """Summed negative log-likelihood of held-out tuples' judgments (K folds over tuples)."""
    tids = sorted({j.tuple_id for j in judgments})
    rng = np.random.default_rng(seed)
    fold_of = dict(zip(tids, rng.permutation(len(tids)) % folds, strict=False))
    total = 0.0
    for k in range(folds):
        train = [j for j in judgments if fold_of[j.tuple_id] != k]
        test = [j for j in judgments if fold_of[j.tuple_id] == k]
        if not train or not test:
            continue
        fit = fit_bradley_terry(tuples, train, item_ids, l2=l2)
        m, b, w, wt = design(tuples, test, item_ids)
        total += nll_and_grad(fit.eta, m, b, w, wt, 0.0)[0]
    return total


def select_l2(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment],
    item_ids: Sequence[str] | None = None, grid: Sequence[float] = L2_GRID,
    *, folds: int = 5, seed: int = 0,
) -> tuple[float, dict[float, float]]:
    """The prior strength with the best held-out likelihood, and every grid point's NLL.

    How spread out the cost scale is depends on how consistent the judges are: with
    near-deterministic judges the maximum-likelihood ``eta`` diverges, and the prior decides
    the spread. Choosing ``l2`` by held-out likelihood lets the data decide instead.
    """
    ids = list(item_ids) if item_ids is not None else sorted(
        {i for m in tuples.values() for i in m}
    )
    scores = {float(g): heldout_nll(tuples, judgments, ids, float(g), folds=folds, seed=seed)
              for g in grid}
    best = min(scores, key=lambda g: scores[g])
    return best, scores


#: UtilityBench's published scale (Appendix A.4): mean 5.1217 at median 2.
PAPER_MEAN_COST = 5.1217


def scale_l2(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment],
    item_ids: Sequence[str] | None = None, *, target_mean: float = PAPER_MEAN_COST,
    lo: float = 1e-3, hi: float = 100.0, iters: int = 40,
) -> float:
    """The prior strength whose fitted costs have mean ``target_mean`` (median is 2).

    The spread of a Bradley-Terry scale measures how consistent the judges are, not only how
    different the harms are: a panel of one model family, far more self-consistent than the
    paper's mixed panel, spreads the maximum-likelihood scale over many orders of magnitude.
    Anchoring the dispersion to UtilityBench's published statistics keeps the costs on the
    scale that ``C_R`` and the +1 of a correct answer are measured against; the order of the
    items is nearly unchanged. The mean cost falls as ``l2`` grows, so bisect on ``log l2``.
    """
    if target_mean <= 2.0:
        raise InvalidValueError("target_mean must exceed the median cost 2")
    ids = list(item_ids) if item_ids is not None else sorted(
        {i for m in tuples.values() for i in m}
    )

    def mean_cost(l2: float) -> float:
        return float(fit_bradley_terry(tuples, judgments, ids, l2=l2).cost.mean())

    a, b = np.log(lo), np.log(hi)
    if mean_cost(float(np.exp(a))) < target_mean:
        return float(lo)  # the judgments are too noisy to reach the target spread
    for _ in range(iters):
        mid = (a + b) / 2.0
        a, b = (mid, b) if mean_cost(float(np.exp(mid))) > target_mean else (a, mid)
        if b - a < 1e-3:
            break
    return float(np.exp((a + b) / 2.0))
