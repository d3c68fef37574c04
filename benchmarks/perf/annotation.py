"""Speed of the Bradley-Terry fit at UtilityBench's size.

15,000 items, ``1.25 x 15,000 = 18,750`` four-item tuples built from three coarse groups, two
simulated judges per tuple (Gumbel noise around known ``eta``): the weighted MaxDiff fit must
finish in under 60 s. The reference is one evaluation of the likelihood and its gradient, so
the ratio reads as "equivalent gradient evaluations".
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.perf._common import PerfResult
from cost_models.annotation.fit import Judgment, design, fit_bradley_terry, nll_and_grad
from cost_models.annotation.tuples import build_tuples

N_ITEMS = 15_000
SEED = 7


def simulate(n: int, seed: int = SEED) -> tuple[dict[str, tuple[str, ...]], list[Judgment],
                                                 list[str]]:
    rng = np.random.default_rng(seed)
    eta = rng.normal(0.0, 2.0, n)
    ids = [f"i{k}" for k in range(n)]
    groups = np.digitize(eta + rng.normal(0.0, 1.0, n), [-1.0, 1.0]).astype(str).tolist()
    tuples = {t.tuple_id: t.items for t in build_tuples(ids, groups, seed=seed)}
    judgments = []
    for tid, items in tuples.items():
        idx = np.array([int(i[1:]) for i in items])
        for judge in ("a", "b"):
            b = int(np.argmax(eta[idx] + rng.gumbel(size=4)))
            rest = [k for k in range(4) if k != b]
            w = rest[int(np.argmax(-eta[idx][rest] + rng.gumbel(size=3)))]
            judgments.append(Judgment(tid, items[b], items[w], judge))
    return tuples, judgments, ids


def run() -> list[PerfResult]:
    tuples, judgments, ids = simulate(N_ITEMS)
    t0 = time.perf_counter()
    fit_bradley_terry(tuples, judgments, ids)
    fit_s = time.perf_counter() - t0
    m, b, w, wt = design(tuples, judgments, ids)
    t1 = time.perf_counter()
    nll_and_grad(np.zeros(len(ids)), m, b, w, wt, 0.05)
    grad_s = time.perf_counter() - t1
    return [PerfResult(f"Bradley-Terry fit: {N_ITEMS:,} items, {len(tuples):,} tuples",
                       fit_s, "s", grad_s, fit_s / grad_s,
                       "< 60 s (reference: one likelihood + gradient evaluation)", fit_s < 60.0)]
