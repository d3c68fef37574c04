"""``results.json`` is the same file whatever shape ``run_bench`` returns in memory.

The expectation ``data/results_before_typed.json`` was written by ``write_outputs`` of main at
commit 9bae1f6 (before ``run_bench`` returned frozen dataclasses; it returned a TypedDict that
``json.dumps`` wrote as is), from the ``bench_files`` fixture with ``c_r=2.0, n_boot=20,
seed=0``. Only what differs from run to run is normalized on both sides: ``settings.seconds``
(wall time) and the two temporary paths (``responses.file``, ``settings.cost_model``).
Floats are compared to 12 significant digits: the utility areas are now summed by tie group
(#26), which moves some values in their last binary digit and nothing more.
The expectation was written when the guard priced each question as one text; since #20 it
prices the costliest of its segments (:mod:`guard.segments`), which changes the guard row's
decisions, and since #34 it prices what the question asks (:mod:`guard.asking`). The file's
format is what this test holds, so it prices each text whole with nothing left out, as the code
that wrote the expectation did; the segment rule and the reading have their own tests.
Sections added to the file since then (``frontier``, the budget–welfare frontier of #27) are
compared by their own tests and left out here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import guard.asking
import guard.core
from benchmarks.bench.report import write_outputs
from benchmarks.bench.run import run_bench
from tests.benchmarks.conftest import BenchFiles

EXPECTED = Path(__file__).parent / "data" / "results_before_typed.json"


def normalized(text: str) -> str:
    """``text`` (a results.json) with the run-dependent values replaced, keys in file order."""
    doc: dict[str, Any] = json.loads(text)
    doc.pop("frontier", None)  # added after the expectation was written
    doc["paired"].pop("oracle_share", None)  # likewise (issue 21)
    doc["settings"]["seconds"] = 0.0
    doc["settings"]["cost_model"] = Path(doc["settings"]["cost_model"]).name
    doc["responses"]["file"] = Path(doc["responses"]["file"]).name
    return json.dumps(_rounded(doc), indent=2) + "\n"


def _rounded(value: Any) -> Any:
    """``value`` with every float rounded to 12 significant digits (ints and the rest as is)."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def results_json(bench_files: BenchFiles, out: Path) -> str:
    res = run_bench(bench_files.items, bench_files.responses, c_r=2.0,
                    cost_model=bench_files.cost_model, n_boot=20, seed=0)
    write_outputs(res, out, plots=False)
    return (out / "results.json").read_text()


def test_results_json_is_unchanged(bench_files: BenchFiles, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard.core, "request_segments", lambda texts: list(texts) or [""])
    monkeypatch.setattr(guard.asking, "owned_segments",
                        lambda texts: [(t, k) for k, t in enumerate(texts) if t.strip()])
    monkeypatch.setattr(guard.core, "load_default_detector", lambda: None)
    assert normalized(results_json(bench_files, tmp_path)) == normalized(EXPECTED.read_text())


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_results_json_holds_no_absolute_path(bench_files: BenchFiles, tmp_path: Path,
                                             monkeypatch: Any) -> None:
    """A results.json is shared like report.md: the responses file and the cost model of a
    run on files outside the package and the working directory are named by their names."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)  # the bench files are not under the working directory
    doc = json.loads(results_json(bench_files, tmp_path / "out"))
    assert doc["responses"]["file"] == bench_files.responses.name
    assert doc["settings"]["cost_model"] == Path(bench_files.cost_model).name
    assert [s for s in _strings(doc) if Path(s).is_absolute() or str(tmp_path) in s] == []
