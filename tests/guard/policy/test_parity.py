"""Parity: the guard users run decides exactly as the bench's ``guard`` row.

On the real seed set and the shipped SmolLM2 responses, the bench cross-fits a policy per
training fold (:func:`benchmarks.bench.crossfit.crossfit_guard`). For one fold, that fold's
policy is saved to disk and loaded back; every held-out item is then decided

* by ``Guard.from_policy(dir)`` in process, and
* by the real proxy (``create_app`` with ``policy=dir`` under uvicorn on 127.0.0.1) in front of
  a fake upstream that replays the recorded reply with token logprobs,

and each decision must equal the bench's, with the same ``L``, ``p`` and ``alpha`` to 1e-9.

The shipped responses record the logprob *summary* (``logprob_mean``, ``logprob_low10`` and
``completion_tokens``), not the per-token values. The replay (:mod:`benchmarks.replay`)
therefore synthesizes ``completion_tokens`` token logprobs whose summary equals the recorded
one: ``k = ceil(0.1 n)`` tokens at ``logprob_low10`` and the other ``n - k`` at the value that
makes the mean ``logprob_mean``. The proxy reads them with its own extractor, so the signal it
computes is the recorded one up to floating-point rounding (checked below).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from benchmarks.bench.crossfit import crossfit_guard, make_folds
from benchmarks.bench.data import load_bench, shipped_responses
from benchmarks.replay import replay_app, token_logprobs
from cost_models.datasets import load_seed
from cost_models.model_io import load_default
from guard import Guard
from guard.confidence.logprobs import logprob_signal
from guard.policy import save_policy
from guard.proxy import create_app
from guard.settings import Settings
from tests.guard.proxy.conftest import Served

FOLDS_CHECKED = (2,)
TOL = 1e-9


@pytest.fixture(scope="module")
def bench() -> Any:
    items = load_seed()
    data = load_bench(items, shipped_responses())
    source = {it.id: it.source for it in items}
    folds = make_folds(data.n, 5, 0, data.canonical)
    fit = crossfit_guard(data, "logprob_mean", folds, [source[i] for i in data.ids], 2.0,
                         cost_model=load_default(), refit=True)
    return data, folds, fit


def test_the_replayed_logprobs_summarize_to_the_recorded_signal() -> None:
    for mean, low, n in ((-0.067, -0.37, 36), (-0.5, -0.5, 1), (-0.3, -1.9, 75)):
        sig = logprob_signal({"content": [{"logprob": v} for v in token_logprobs(mean, low, n)]})
    with pytest.raises(ValueError):
        token_logprobs(-0.2, -1.9, 75)  # 8 tokens at -1.9 already make the mean < -0.2
        assert sig is not None
        assert (sig.mean, sig.low10, sig.n_tokens) == (pytest.approx(mean, abs=1e-12),
                                                       pytest.approx(low, abs=1e-12), n)


def _same(record: Any, want: Any) -> None:
    assert record["decision"] == want.decision
    for key in ("cost", "p", "alpha", "threshold"):
        got, exp = record[key], getattr(want, key)
        if exp is None:
            assert got is None, key
        else:
            assert got == pytest.approx(exp, abs=TOL, rel=0), key


@pytest.mark.slow  # a fold of the bench's cross-fitting (make test-fast leaves it out)
@pytest.mark.parametrize("k", FOLDS_CHECKED)
def test_runtime_decides_every_held_out_item_as_the_bench(bench: Any, k: int,
                                                          tmp_path: Path) -> None:
    data, folds, fit = bench
    test = folds[k][1]
    policy = fit.policies[k]
    policy.name = f"fold-{k}"
    save_policy(policy, tmp_path / "policy")
    guard = Guard.from_policy(tmp_path / "policy")
    assert guard.policy == policy.label and policy.label.startswith(f"fold-{k}@")
    replies = {json.loads(line)["id"]: json.loads(line)
               for line in shipped_responses().read_text().splitlines() if line.strip()}
    # 1. Guard.decide in process, with the policy loaded from disk
    for i in test:
        rec = replies[data.ids[i]]
        got = guard.decide(data.questions[i], rec["response"],
                           confidence={"logprob_mean": rec["confidence"]["logprob_mean"]})
        _same(got.model_dump(), fit.records[i])
    # 2. the real proxy, serving the same policy directory, in front of the replay upstream
    upstream = Served(replay_app({data.questions[i]: replies[data.ids[i]] for i in test}))
    db = tmp_path / "audit.db"
    settings = Settings(_env_file=None, upstream=upstream.url + "/v1", policy=str(
        tmp_path / "policy"), audit_path=db, read_timeout=10.0)
    proxy = Served(create_app(settings))
    try:
        with httpx.Client(base_url=proxy.url, timeout=30.0) as client:
            ids = {}
            for i in test:
                r = client.post("/v1/chat/completions", json={
                    "model": "smollm2-135m-instruct",
                    "messages": [{"role": "user", "content": data.questions[i]}]})
                assert r.status_code == 200, r.text
                assert r.headers["x-utilityguard-policy"] == policy.label
                assert r.headers["x-utilityguard-decision"] == fit.records[i].decision
                ids[r.headers["x-utilityguard-request-id"]] = i
    finally:
        proxy.stop()  # flushes the audit log
        upstream.stop()
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = [dict(r) for r in conn.execute("SELECT * FROM decisions")]
    assert len(rows) == len(test)
    for row in rows:
        i = ids[row["request_id"]]
        assert row["policy"] == policy.label
        _same(row, fit.records[i])
    decided = np.array([fit.records[i].decision == "answer" for i in test])
    assert decided.sum() > 0 and (~decided).sum() > 0  # both kinds of decision were checked
