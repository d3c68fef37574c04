"""The policy artifact: fit, save, load with every hash checked, shipped policies by name,
and the ``utilityguard fit`` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from cost_models.model_io import load_default
from cost_models.persistence import sha256_file
from guard import Guard
from guard.cli import main
from guard.exceptions import ArtifactError, ConfigError
from guard.policy import POLICY_FILE, TrainingSet, fit_policy, load_policy, save_policy
from guard.policy.artifact import shipped_dir, shipped_policies


def _training(n: int = 200, seed: int = 0) -> TrainingSet:
    rng = np.random.default_rng(seed)
    answerable = np.arange(n) % 2 == 0
    questions = [f"What is the dose of drug {i}?" if a else f"What will the stock {i} do next?"
                 for i, a in enumerate(answerable)]
    signal = rng.normal(-0.5, 0.3, n).clip(max=0.0)
    correct = answerable & (rng.random(n) < np.exp(signal))
    return TrainingSet(questions, answerable, np.full(n, 2.0), np.ones(n, dtype=bool),
                       correct, signal, [f"g{i % 5}" for i in range(n)])


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    policy = fit_policy(_training(), signal="logprob_mean", c_r=3.0, name="demo")
    out = tmp_path_factory.mktemp("policy") / "demo"
    save_policy(policy, out, card={"command": "test"})
    return out


def test_a_saved_policy_loads_with_the_same_decisions(saved: Path) -> None:
    policy = load_policy(saved)
    meta = json.loads((saved / POLICY_FILE).read_text())
    assert policy.label == f"demo@{sha256_file(saved / POLICY_FILE)[:8]}"
    assert (policy.c_r, policy.signal, policy.confidence) == (3.0, "logprob_mean", "logprobs")
    assert meta["cost_model"]["source"] == "shipped-default"  # referenced, not copied
    assert set(meta["files"]) == {"calibrator/calibrator.npz", "calibrator/calibrator.json",
                                  "answerability/answerability.npz",
                                  "answerability/answerability.json"}
    assert "sklearn" not in meta["versions"] and meta["versions"]["scikit-learn"]
    g = Guard.from_policy(saved)
    r = g.decide("What is the dose of drug 7?", "5 mg", confidence={"logprob_mean": -0.2})
    assert r.policy == policy.label and r.c_r == 3.0
    # the alpha is the answerability model's, the p the calibrator's, L the default model's
    assert r.alpha == pytest.approx(policy.alpha_of(["What is the dose of drug 7?"])[0])
    assert r.p == pytest.approx(float(policy.calibrator.predict([-0.2])[0]))
    want_cost = float(load_default().predict(["What is the dose of drug 7?"])[0])
    assert r.cost == pytest.approx(want_cost)
    assert "demo@" in (saved / "README.md").read_text()


@pytest.mark.parametrize("part", ["calibrator/calibrator.npz",
                                  "answerability/answerability.npz",
                                  "answerability/answerability.json"])
def test_a_modified_part_is_refused(saved: Path, tmp_path: Path, part: str) -> None:
    copy = tmp_path / "p"
    shutil.copytree(saved, copy)
    with (copy / part).open("ab") as fh:
        fh.write(b"\n ")
    with pytest.raises(ArtifactError, match="modified"):
        load_policy(copy)
    if part.endswith(".json"):  # still valid JSON: trust=True (your own policy) loads it
        assert load_policy(copy, trust=True).name == "demo"


def test_a_missing_part_is_refused(saved: Path, tmp_path: Path) -> None:
    copy = tmp_path / "p"
    shutil.copytree(saved, copy)
    (copy / "calibrator" / "calibrator.npz").unlink()
    with pytest.raises(ArtifactError, match="missing"):
        load_policy(copy)


def test_unknown_names_and_non_policies(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="shipped: default, smollm2"):
        load_policy("no-such-policy")
    with pytest.raises(ConfigError, match="not a utilityguard policy directory"):
        load_policy(tmp_path)


def test_the_shipped_smollm2_policy() -> None:
    assert "smollm2" in shipped_policies()
    meta = json.loads((shipped_dir() / "smollm2" / POLICY_FILE).read_text())
    for rel, sha in meta["files"].items():
        assert sha256_file(shipped_dir() / "smollm2" / rel) == sha
    g = Guard.from_policy("smollm2")
    assert g.policy is not None and g.policy.startswith("smollm2@")
    from cost_models.datasets import load_seed

    assert meta["training"]["n"] == len(load_seed()) and meta["c_r"] == 2.0  # every seed item
    assert "utilityguard fit" in meta["command"]
    ev = meta["evaluation"]["policies"]
    assert {"guard", "always_refuse"} <= set(ev)


def test_fit_command_writes_a_policy_that_matches_its_evaluation(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    from benchmarks.bench.run import run_bench
    from cost_models.datasets import load_utilitybench
    from tests.benchmarks.conftest import make_items, make_responses, train_cost_model, write_jsonl

    rows = make_items(120, seed=0)
    items = write_jsonl(tmp_path / "items.jsonl", rows)
    replies = write_jsonl(tmp_path / "replies.jsonl", make_responses(rows, seed=1))
    model = train_cost_model(make_items(90, seed=5), tmp_path / "cost")
    out = tmp_path / "mine"
    assert main(["fit", "--data", str(items), "--responses", str(replies), "--out", str(out),
                 "--cost-model", str(model), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    assert "guard" in printed and "ECE-10" in printed and "mine@" in printed
    policy = load_policy(out)
    meta = policy.meta
    assert meta["cost_model"]["source"] == "file"  # a non-default cost model is copied in
    # the card's evaluation is the bench's guard row, computed by the same code path
    bench = run_bench(load_utilitybench(items), replies, c_r=2.0, cost_model=model, n_boot=20)
    assert meta["evaluation"]["policies"]["guard"]["mean_utility"] == pytest.approx(
        bench.policies["guard"]["mean_utility"], abs=1e-12)
    assert meta["training"]["n"] == 120
    # issue 38: the card showed "[PosixPath('/tmp/.../replies.jsonl')]" (a repr and an
    # absolute path of the machine that fitted it); it shows the file by name
    card = (out / "README.md").read_text(encoding="utf-8")
    assert meta["training"]["responses"] == "replies.jsonl"
    assert "PosixPath" not in card and str(tmp_path) not in card


def test_fit_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", "--data", str(tmp_path / "none.jsonl"), "--responses",
                 str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error:") and "Traceback" not in err
