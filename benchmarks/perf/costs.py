"""Speed of the shipped cost model (issue: predict ``E[L]`` in microseconds).

Side by side in one run, on 10,000 seed-set questions (cycled):

* batch ``load_default().predict`` of 10,000 queries (the 2,618 seed questions cycled):
  target >= 20,000 queries/s; the reference is a plain word 1-2-gram
  ``TfidfVectorizer.transform`` of the same batch (fit on the seed set), the floor for any
  TF-IDF model. The batch path caches each word's columns and wordllama ids (a running
  guard's steady state); the same batch with those caches emptied first is reported too;
* one query at a time: p50 latency of ``predict([q])``, target < 1 ms (reference: the plain
  vectorizer on one query);
* loading the default model (integrity check included): target < 1 s (reference: reading
  the artifact's bytes).
"""

from __future__ import annotations

import statistics
import time

from sklearn.feature_extraction.text import TfidfVectorizer

from benchmarks.perf._common import PerfResult, median_times
from cost_models import embeddings, load_default
from cost_models.datasets import load_seed
from cost_models.model_io import ARTIFACT, default_model_dir

BATCH = 10_000
SINGLE = 500


def run() -> list[PerfResult]:
    questions = [it.question for it in load_seed()]
    batch = (questions * (BATCH // len(questions) + 1))[:BATCH]
    model = load_default()
    plain = TfidfVectorizer(ngram_range=(1, 2)).fit(questions)
    def cold() -> None:  # the word caches of the batch path emptied first
        affix = model._batch()
        if affix is not None:
            affix.clear()
        embeddings._pieces().clear()
        model.predict(batch)

    t = median_times({"model": lambda: model.predict(batch), "cold": cold,
                      "plain": lambda: plain.transform(batch)}, repeats=5)
    qps, ref_qps = BATCH / t["model"], BATCH / t["plain"]
    single_model, single_plain = [], []
    for q in batch[:SINGLE]:
        t0 = time.perf_counter()
        model.predict([q])
        t1 = time.perf_counter()
        plain.transform([q])
        t2 = time.perf_counter()
        single_model.append(t1 - t0)
        single_plain.append(t2 - t1)
    p50, ref_p50 = statistics.median(single_model), statistics.median(single_plain)
    artifact = default_model_dir() / f"{ARTIFACT}.npz"
    load = median_times({"load": load_default, "read": artifact.read_bytes}, repeats=5)
    return [
        PerfResult("cost model: batch of 10,000 queries (queries/s)", qps, "q/s", ref_qps,
                   qps / ref_qps, ">= 20,000 q/s (reference: plain TfidfVectorizer.transform)",
                   qps >= 20_000),
        PerfResult("cost model: the same batch, word caches emptied first (q/s)",
                   BATCH / t["cold"], "q/s", ref_qps, t["plain"] / t["cold"],
                   "reported (reference: plain TfidfVectorizer.transform)", True),
        PerfResult("cost model: one query at a time, p50", p50, "s", ref_p50, p50 / ref_p50,
                   "< 1 ms (reference: plain TfidfVectorizer on one query)", p50 < 1e-3),
        PerfResult("cost model: load the default model", load["load"], "s", load["read"],
                   load["load"] / load["read"], "< 1 s (reference: reading the file)",
                   load["load"] < 1.0),
    ]
