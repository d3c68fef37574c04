"""Speed of the offline bench at UtilityBench's size.

15,000 synthetic records (half answerable, log-normal costs, informative logprob confidence),
the full bench — cross-fitted calibration and thresholds, seven policies, every metric with
1,000 bootstrap resamples, the 65-value ``C_R`` sweep and the per-domain breakdown — must
finish in under 30 s, excluding model training: the cost model is trained beforehand on
other synthetic items (so the bench uses it as is) and that training is not timed. The
reference is one ``utility_auc`` call on the same records, so the ratio reads as
"equivalent UtilityAUC calls".
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.bench.run import run_bench
from benchmarks.perf._common import PerfResult
from benchmarks.utility_auc import utility_auc
from cost_models import CostRegressor, save_model
from cost_models.datasets import load_utilitybench
from utilityguard_base.jsonl import write_jsonl

N = 15_000
SEED = 11
WORDS = {"medicine": ["dose", "insulin", "infant", "tablet", "allergy", "pregnancy"],
         "law": ["lease", "contract", "custody", "appeal", "patent", "tenant"],
         "trivia": ["river", "capital", "island", "painter", "planet", "song"]}
OFFSET = {"medicine": 1.0, "law": 0.3, "trivia": -0.8}


def _items(n: int, seed: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    names = list(WORDS)
    out = []
    for i in range(n):
        dom = names[i % 3]
        a, b = rng.choice(WORDS[dom], size=2, replace=False)
        out.append({"id": f"p{i:05d}", "question": f"About the {a} and the {b}, case {i}?",
                    "answerable": bool(i % 2 == 0), "domain": dom, "source": f"{dom}-{i % 7}",
                    "cost": float(np.exp(np.log(2.0) + OFFSET[dom] + rng.normal(0, 0.7)))})
    return out


def _responses(items: list[dict[str, object]], seed: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    out = []
    for it in items:
        answered = bool(rng.random() < 0.85)
        correct = bool(it["answerable"]) and answered and bool(rng.random() < 0.5)
        lp = float(-abs(rng.normal(0.2 if correct else 0.9, 0.3)))
        out.append({"id": it["id"], "response": "...", "answered": answered,
                    "correct": correct if answered else None,
                    "confidence": {"logprob_mean": lp, "logprob_low10": lp * 2}})
    return out


def run() -> list[PerfResult]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        items, resp = _items(N, SEED), None
        resp = _responses(items, SEED + 1)
        write_jsonl(d / "items.jsonl", items)
        write_jsonl(d / "responses.jsonl", resp)
        train = _items(2_000, SEED + 2)
        model = CostRegressor(cv=3).fit([str(r["question"]) for r in train],
                                        [float(str(r["cost"])) for r in train])
        save_model(model, d / "model", {"training_data_sha256": "other synthetic items"})
        dataset = load_utilitybench(d / "items.jsonl")
        t0 = time.perf_counter()
        results = run_bench(dataset, d / "responses.jsonl", cost_model=d / "model",
                            n_boot=1000, seed=0)
        bench_s = time.perf_counter() - t0
    a = np.array([r["answerable"] for r in items], dtype=bool)
    ans = np.array([r["answered"] for r in resp], dtype=bool)
    cor = np.array([bool(r["correct"]) for r in resp], dtype=bool)
    cost = np.array([float(str(r["cost"])) for r in items])
    score = np.random.default_rng(0).random(N)
    t1 = time.perf_counter()
    utility_auc(a, ans, cor, cost, score)
    ref = time.perf_counter() - t1
    ok = bench_s < 30.0 and len(results.sweep.c_r) == 65
    return [PerfResult(f"bench: {N:,} records, 65 C_R values, 1,000 bootstrap resamples",
                       bench_s, "s", ref, bench_s / ref,
                       "< 30 s excluding model training (reference: one utility_auc call)", ok)]
