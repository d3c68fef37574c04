"""Every bench metric for many bootstrap resamples at once.

A bootstrap resample is a multiset of items, so it is a vector of counts ``w`` (how often each
item was drawn). Every metric of the bench is a function of those counts:

* means (mean utility, answer rate, Ans./Ref. Acc, policy consistency, normalized regret,
  Brier) are weighted means: one matrix product ``W @ x`` for all resamples;
* ECE-10 is a weighted per-bin gap: ``W @ onehot(bin) * (c - p)``;
* UtilityAUC: items are sorted by score once; a drawn item's copies tie with each other and
  with equal scores, so each resample's area is the sum over the original tie groups of
  (group's mean rank weight) x (group's drawn gain), with group sizes ``W`` summed per group
  and positions from their cumulative sums. ``A+`` is closed-form; ``A-`` uses the fixed sort
  of the worst-case gains, each item's copies taking consecutive positions;
* AURC: the same over the answered items with Lemma 2's weights
  ``alpha_j = (H_m - H_{j-1}) / m`` summed in closed form via harmonic-number prefix sums.

With ``w = 1`` for every item these are exactly the point estimates of
:func:`benchmarks.bench.evaluate.metrics` (tested), so the intervals come from the same
definitions, ``O(B n)`` work instead of ``B`` calls.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.baselines import BaselineRun, utilities
from benchmarks.bench.data import BenchData
from benchmarks.ranking import descending_groups
from benchmarks.riskeval import inconsistent_decisions
from benchmarks.utility_auc import best_area_above_base, worst_gains
from policies import answer_threshold, refusal_utility_values, response_gain_values

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
ORDER = ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc",
         "policy_consistency", "normalized_regret", "aurc", "ece10", "brier")


def counts(samples: IntArray, n: int) -> FloatArray:
    """``(B, n)`` draw counts of each item in each resample."""
    b = samples.shape[0]
    flat = (samples + (np.arange(b) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return out


def _group_sums(w_sorted: FloatArray, x_sorted: FloatArray, starts: IntArray) -> tuple[
        FloatArray, FloatArray]:
    """Per resample and tie group: drawn count and drawn sum of ``x``."""
    size = np.add.reduceat(w_sorted, starts, axis=1)
    total = np.add.reduceat(w_sorted * x_sorted[None, :], starts, axis=1)
    return size, total


def _ranked(w: FloatArray, x: FloatArray, score: FloatArray, n_total: FloatArray
            ) -> FloatArray:
    """``sum_j w_j x_(j)`` with UtilityAUC's weights ``(n - j + 1/2) / n^2`` (ties averaged),
    per resample; ``n_total`` is each resample's size."""
    order, starts, _ = descending_groups(score)
    size, total = _group_sums(w[:, order], x[order], starts)
    end = np.cumsum(size, axis=1)
    mean_rank = end - size / 2.0 + 0.5  # mean of ranks start+1 .. end
    n = n_total[:, None]
    out: FloatArray = ((n - mean_rank + 0.5) / n**2 * total).sum(axis=1)
    return out


def draw(data: BenchData, n_boot: int, seed: int) -> IntArray:
    """``(n_boot, n)`` item positions of the bootstrap resamples, drawn over the canonical
    (id-sorted) order: every policy and every paired difference uses these same resamples."""
    rng = np.random.default_rng(seed)
    out: IntArray = data.canonical[rng.integers(0, data.n, size=(n_boot, data.n))]
    return out


def auc_bounds(data: BenchData, w: FloatArray, c_r: float) -> tuple[FloatArray, FloatArray,
                                                                     FloatArray, FloatArray]:
    """Per resample: size ``n``, the refuse-all area ``base`` and UtilityAUC's ``A-`` and
    ``A+`` (policy-independent, so computed once per ``C_R`` for many policies)."""
    a = data.answerable
    b = refusal_utility_values(a, c_r)
    n = w.sum(axis=1)
    base = (w @ b) / n
    k = w @ a.astype(np.float64)
    area_max = base + best_area_above_base(k, n, c_r)
    g_min = worst_gains(a, data.cost, c_r)
    order = np.argsort(g_min, kind="stable")
    ws, gs = w[:, order], g_min[order]
    start = np.cumsum(ws, axis=1) - ws  # positions before each item's copies
    # sum over an item's copies of (n + 1/2 - j) / n^2 for j = start+1 .. start+c
    block = ws * (n[:, None] + 0.5) - (ws * start + ws * (ws + 1.0) / 2.0)
    area_min = base + (block * gs[None, :]).sum(axis=1) / n**2
    return n, base, area_min, area_max


def utility_auc_given(data: BenchData, run: BaselineRun, w: FloatArray, c_r: float,
                      bounds: tuple[FloatArray, FloatArray, FloatArray, FloatArray]
                      ) -> FloatArray:
    """UtilityAUC of ``run`` per resample, with :func:`auc_bounds` of the same ``w``."""
    n, base, area_min, area_max = bounds
    g = response_gain_values(data.answerable, run.answered, data.correct, data.cost, c_r)
    area = base + _ranked(w, g, run.score, n)
    out: FloatArray = np.clip((area - area_min) / (area_max - area_min), 0.0, 1.0)
    return out


def utility_auc_many(data: BenchData, run: BaselineRun, w: FloatArray, c_r: float) -> FloatArray:
    return utility_auc_given(data, run, w, c_r, auc_bounds(data, w, c_r))


def aurc_many(right: NDArray[np.bool_], score: FloatArray, w: FloatArray) -> FloatArray:
    """AURC of each resample over the items with weight (the caller passes answered items)."""
    m = w.sum(axis=1)
    if score.shape[0] == 0:
        return np.full(w.shape[0], np.nan)
    top = int(m.max())
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, top + 1))))
    sh = np.concatenate(([0.0], np.cumsum(harmonic)))  # sh[x] = sum_{t < x} H_t
    order, starts, _ = descending_groups(score)
    size, errs = _group_sums(w[:, order], (~right[order]).astype(np.float64), starts)
    end = np.cumsum(size, axis=1)
    start = end - size
    hm = harmonic[m.astype(np.intp)][:, None]
    e_i, s_i = end.astype(np.intp), start.astype(np.intp)
    alpha_sum = (size * hm - (sh[e_i] - sh[s_i])) / np.where(m > 0, m, 1.0)[:, None]
    mean_alpha = _ratio(alpha_sum, size)
    out = np.nansum(mean_alpha * errs, axis=1)
    return np.where(m > 0, out, np.nan)


def many(data: BenchData, run: BaselineRun, p_ref: FloatArray, w: FloatArray, c_r: float,
         n_bins: int = 10) -> FloatArray:
    """``(B, 10)`` metrics (columns in :data:`ORDER`) for the count matrix ``w``."""
    a, d, L = data.answerable, run.answered, data.cost
    right = a & data.correct
    n = w.sum(axis=1)
    cols: dict[str, FloatArray] = {}
    cols["utility_auc"] = utility_auc_many(data, run, w, c_r)
    cols["mean_utility"] = (w @ utilities(data, d, c_r)) / n
    cols["answer_rate"] = (w @ d.astype(np.float64)) / n
    cols["ans_acc"] = _ratio(w @ (d & right).astype(np.float64), w @ a.astype(np.float64))
    cols["ref_acc"] = _ratio(w @ (~a & ~d).astype(np.float64), w @ (~a).astype(np.float64))
    have = np.isfinite(p_ref)
    c = np.where(have, p_ref, 0.0)
    tau_raw = np.asarray(answer_threshold(L, c_r), dtype=np.float64)
    bad = inconsistent_decisions(c, d, tau_raw) & have
    regret = np.where(bad, np.abs(c - np.clip(tau_raw, 0.0, 1.0)), 0.0)
    n_have = w @ have.astype(np.float64)
    cols["policy_consistency"] = _ratio(w @ (have & ~bad).astype(np.float64), n_have)
    cols["normalized_regret"] = _ratio(w @ regret, n_have)
    ans = np.flatnonzero(d)
    cols["aurc"] = aurc_many(right[ans], run.score[ans], w[:, ans])
    scored = d & np.isfinite(run.prob)
    p = np.where(scored, run.prob, 0.0)
    y = right.astype(np.float64)
    n_scored = w @ scored.astype(np.float64)
    cols["brier"] = _ratio(w @ np.where(scored, (p - y) ** 2, 0.0), n_scored)
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    bins = np.minimum(np.searchsorted(edges, p, side="right") - 1, n_bins - 1)
    onehot = np.zeros((p.shape[0], n_bins))
    onehot[np.flatnonzero(scored), bins[scored]] = 1.0
    gap = w @ (onehot * (y - p)[:, None])
    cols["ece10"] = _ratio(np.abs(gap).sum(axis=1), n_scored)
    return np.column_stack([cols[k] for k in ORDER])
