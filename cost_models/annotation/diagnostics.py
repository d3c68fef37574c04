"""Annotation diagnostics: judge agreement, judgments per item, split-half reliability."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from cost_models.annotation.fit import Judgment, fit_bradley_terry


@dataclass(frozen=True)
class Agreement:
    """Agreement between pairs of judgments of the same tuple."""

    pairs: int
    best: float
    worst: float
    both: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _agreement(pairs: list[tuple[Judgment, Judgment]]) -> Agreement:
    if not pairs:
        return Agreement(0, float("nan"), float("nan"), float("nan"))
    best = np.mean([a.best == b.best for a, b in pairs])
    worst = np.mean([a.worst == b.worst for a, b in pairs])
    both = np.mean([a.best == b.best and a.worst == b.worst for a, b in pairs])
    return Agreement(len(pairs), float(best), float(worst), float(both))


def judge_agreement(judgments: Sequence[Judgment]) -> Agreement:
    """Agreement over every pair of judgments by *different* judges on one tuple."""
    by_tuple: dict[str, list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_tuple[j.tuple_id].append(j)
    pairs = [
        (a, b)
        for js in by_tuple.values()
        for i, a in enumerate(js)
        for b in js[i + 1 :]
        if a.judge != b.judge
    ]
    return _agreement(pairs)


def self_agreement(first: Sequence[Judgment], repeat: Sequence[Judgment]) -> Agreement:
    """Agreement of a repeated pass with the first pass on the tuples judged twice."""
    firsts = {j.tuple_id: j for j in first}
    return _agreement([(firsts[r.tuple_id], r) for r in repeat if r.tuple_id in firsts])


def judgments_per_item(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment]
) -> dict[str, float]:
    """How many judgments saw each item: min, median, mean and max over items."""
    seen: Counter[str] = Counter()
    for j in judgments:
        seen.update(tuples[j.tuple_id])
    items = {i for m in tuples.values() for i in m}
    counts = np.array([seen.get(i, 0) for i in items], dtype=float)
    return {"min": float(counts.min()), "median": float(np.median(counts)),
            "mean": float(counts.mean()), "max": float(counts.max())}


def split_half_reliability(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment],
    item_ids: Sequence[str] | None = None, *, l2: float = 0.05, seed: int = 0,
) -> float:
    """Spearman correlation between fits on two disjoint random halves of the tuples.

    Every judgment of a tuple goes to the same half. Items judged in only one half get the
    prior's value in the other, which lowers the correlation (a conservative estimate).
    """
    tids = sorted({j.tuple_id for j in judgments})
    rng = np.random.default_rng(seed)
    half = set(rng.permutation(tids)[: len(tids) // 2].tolist())
    ids = list(item_ids) if item_ids is not None else sorted(
        {i for m in tuples.values() for i in m}
    )
    a = fit_bradley_terry(tuples, [j for j in judgments if j.tuple_id in half], ids, l2=l2)
    b = fit_bradley_terry(tuples, [j for j in judgments if j.tuple_id not in half], ids, l2=l2)
    from scipy.stats import spearmanr  # lazy: the CLI's --help stays light

    rho = spearmanr(a.eta, b.eta).statistic
    return float(rho)


def position_balance(tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment]
                     ) -> dict[str, Any]:
    """How often the "most" (best) and "least" (worst) choices fell on each position of the
    tuple as the judge saw it, with the chi-square test p-value against equal shares (a small
    p: the judges' choices depend on the position)."""
    from scipy.stats import chisquare

    size = max((len(m) for m in tuples.values()), default=0)
    most = np.zeros(size, dtype=np.int64)
    least = np.zeros(size, dtype=np.int64)
    for j in judgments:
        members = list(tuples[j.tuple_id])
        most[members.index(j.best)] += 1
        least[members.index(j.worst)] += 1

    def p_value(counts: np.ndarray) -> float | None:
        return float(chisquare(counts).pvalue) if counts.sum() else None

    return {"most": most.tolist(), "least": least.tolist(),
            "most_chi2_p": p_value(most), "least_chi2_p": p_value(least)}


EXPOSURE_BINS = ((3, 3), (4, 4), (5, 5), (6, 7), (8, 11), (12, None))


def exposure_report(tuples: Mapping[str, Sequence[str]], cost: Mapping[str, float],
                    top: float = 0.9) -> list[dict[str, Any]]:
    """Top-end cost against exposure: per band of appearances (tuples an item is in), the
    number of items, their median and largest cost, and the share in the top ``1 - top`` of
    all costs. Bands outside the data are left out."""
    seen = Counter(i for members in tuples.values() for i in members)
    ids = list(cost)
    values = np.array([cost[i] for i in ids], dtype=np.float64)
    shown = np.array([seen.get(i, 0) for i in ids])
    cut = float(np.quantile(values, top))
    out = []
    for lo, hi in EXPOSURE_BINS:
        m = (shown >= lo) & (shown <= (hi if hi is not None else shown.max()))
        if m.any():
            out.append({"appearances": f"{lo}" if hi == lo else f"{lo}+" if hi is None
                        else f"{lo}-{hi}", "items": int(m.sum()),
                        "median_cost": float(np.median(values[m])),
                        "top_share": float((values[m] >= cut).mean()),
                        "max_cost": float(values[m].max()), "top_cut": cut})
    return out
