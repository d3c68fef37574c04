"""Several models in one bench run: one table, a row per model and policy (Table 1 shape)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench.baselines import BASELINES
from guard.cli import main


def test_two_models_one_table(tmp_path: Path, synth: Any,
                              capsys: pytest.CaptureFixture[str]) -> None:
    items = synth.make_items(80, seed=3)
    synth.write_jsonl(tmp_path / "items.jsonl", items)
    first = synth.make_responses(items, seed=1)
    second = [dict(r, model="synthetic-2") for r in synth.make_responses(items, seed=2)][:60]
    synth.write_jsonl(tmp_path / "a.jsonl", first)
    synth.write_jsonl(tmp_path / "b.jsonl", second)  # this model answered 60 of the 80
    out = tmp_path / "out"
    assert main(["bench", "--data", str(tmp_path / "items.jsonl"), "--responses",
                 str(tmp_path / "a.jsonl"), "--responses", str(tmp_path / "b.jsonl"),
                 "--bootstrap", "10", "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 models" in printed
    md = (out / "models.md").read_text().splitlines()
    rows = [line for line in md if line.startswith("| synthetic")]
    assert len(rows) == 2 * len(BASELINES)  # a row per model and policy
    assert sum("synthetic-1 (80 items)" in r for r in rows) == len(BASELINES)
    assert sum("synthetic-2 (60 items)" in r for r in rows) == len(BASELINES)
    for model in ("synthetic-1", "synthetic-2"):  # each model's own outputs
        saved = json.loads((out / model / "results.json").read_text())
        assert saved["responses"]["model"] == model
    assert json.loads((out / "synthetic-2" / "results.json").read_text())["n"] == 60
