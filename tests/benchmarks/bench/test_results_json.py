"""``results.json`` is the same file whatever shape ``run_bench`` returns in memory.

The expectation ``data/results_before_typed.json`` was written by ``write_outputs`` of main at
commit 9bae1f6 (before ``run_bench`` returned frozen dataclasses; it returned a TypedDict that
``json.dumps`` wrote as is), from the ``bench_files`` fixture with ``c_r=2.0, n_boot=20,
seed=0``. Only what differs from run to run is normalized on both sides: ``settings.seconds``
(wall time) and the two temporary paths (``responses.file``, ``settings.cost_model``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.bench.report import write_outputs
from benchmarks.bench.run import run_bench
from tests.benchmarks.conftest import BenchFiles

EXPECTED = Path(__file__).parent / "data" / "results_before_typed.json"


def normalized(text: str) -> str:
    """``text`` (a results.json) with the run-dependent values replaced, keys in file order."""
    doc: dict[str, Any] = json.loads(text)
    doc["settings"]["seconds"] = 0.0
    doc["settings"]["cost_model"] = Path(doc["settings"]["cost_model"]).name
    doc["responses"]["file"] = Path(doc["responses"]["file"]).name
    return json.dumps(doc, indent=2) + "\n"


def results_json(bench_files: BenchFiles, out: Path) -> str:
    res = run_bench(bench_files.items, bench_files.responses, c_r=2.0,
                    cost_model=bench_files.cost_model, n_boot=20, seed=0)
    write_outputs(res, out, plots=False)
    return (out / "results.json").read_text()


def test_results_json_is_unchanged(bench_files: BenchFiles, tmp_path: Path) -> None:
    assert normalized(results_json(bench_files, tmp_path)) == EXPECTED.read_text()
