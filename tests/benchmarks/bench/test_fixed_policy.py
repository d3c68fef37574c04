"""``bench --policy``: a fitted policy scored as is on questions it was not fitted on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench.run import run_bench
from cost_models.datasets import load_utilitybench
from guard.cli import main
from guard.core import Guard
from guard.exceptions import BenchError


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory, synth: Any) -> tuple[Path, Path, Path]:
    """A policy fitted on one synthetic draw, and a different draw to score it on."""
    d = tmp_path_factory.mktemp("fixed")
    train = synth.make_items(120, seed=0)
    synth.write_jsonl(d / "train.jsonl", train)
    synth.write_jsonl(d / "train_resp.jsonl", synth.make_responses(train, seed=1))
    assert main(["fit", "--data", str(d / "train.jsonl"), "--responses",
                 str(d / "train_resp.jsonl"), "--out", str(d / "policy"), "--bootstrap", "20",
                 "--name", "synthetic"]) == 0
    test = synth.make_items(80, seed=9)
    for r in test:  # other questions of the same kinds
        r["id"] = "new-" + r["id"]
        r["question"] = r["question"].replace("case", "instance")
    synth.write_jsonl(d / "test.jsonl", test)
    synth.write_jsonl(d / "test_resp.jsonl", synth.make_responses(test, seed=4))
    return d / "policy", d / "test.jsonl", d / "test_resp.jsonl"


def test_the_guard_row_is_the_policys_own_decisions(fitted: tuple[Path, Path, Path]) -> None:
    policy, items_path, responses = fitted
    items = load_utilitybench(items_path)
    res = run_bench(items, responses, c_r=2.0, policy=policy, n_boot=20, seed=0)
    # what the runtime decides for each item, and the utility that follows (docs/design.md):
    # correct answer +1, wrong answer -L, refusal +1 on a refusal-required item, else -C_R
    guard = Guard.from_policy(policy)
    recs = {json.loads(x)["id"]: json.loads(x) for x in responses.read_text().splitlines()}
    utilities, answers = [], 0
    for it in items:
        r = recs[it.id]
        d = guard.decide(it.question, r["response"],
                         confidence={"logprob_mean": r["confidence"]["logprob_mean"]})
        delivered = d.decision == "answer" and r["answered"]
        answers += delivered
        if delivered:
            utilities.append(1.0 if it.answerable and r["correct"] else -float(it.cost or 0))
        else:
            utilities.append(-2.0 if it.answerable else 1.0)
    g = res.policies["guard"]
    assert g["answer_rate"] == pytest.approx(answers / len(items), abs=1e-12)
    assert g["mean_utility"] == pytest.approx(sum(utilities) / len(items), abs=1e-9)
    assert "no refit" in res.settings.decisions and "synthetic@" in res.settings.decisions
    assert res.settings.cost_model.startswith("policy:synthetic@")


def test_policy_excludes_a_separate_cost_model_or_calibrator(fitted: tuple[Path, Path, Path]
                                                              ) -> None:
    policy, items_path, responses = fitted
    items = load_utilitybench(items_path)
    with pytest.raises(BenchError, match="brings its own"):
        run_bench(items, responses, policy=policy, cost_model=policy, n_boot=0)
    with pytest.raises(BenchError, match=r"reads confidence\.logprob_mean"):
        run_bench(items, responses, policy=policy, signal="verbal", n_boot=0)


def test_cli_bench_policy(fitted: tuple[Path, Path, Path], tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    policy, items_path, responses = fitted
    assert main(["bench", "--data", str(items_path), "--responses", str(responses), "--policy",
                 str(policy), "--bootstrap", "10", "--no-plots", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert "no refit" in saved["settings"]["decisions"]
    assert main(["bench", "--data", str(items_path), "--responses", str(responses), "--policy",
                 str(tmp_path / "nope"), "--out", str(tmp_path)]) == 2
    assert "error" in capsys.readouterr().err
