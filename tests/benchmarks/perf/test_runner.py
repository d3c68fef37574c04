"""The performance runner (``python -m benchmarks.perf``), with fake benchmark modules.

The real benchmarks are slow and machine-dependent; they run with ``make perf``, not here.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from benchmarks.perf import PerfResult
from benchmarks.perf import __main__ as runner
from benchmarks.perf._common import median_times, ratio_result
from benchmarks.perf.utility_auc_speed import PAPER_C_R, c_r_grid, records


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, passed: bool) -> None:
    module = types.ModuleType(f"benchmarks.perf.{name}")
    result = PerfResult(name=f"{name} bench", value=2.0, unit="s", reference=1.0, ratio=2.0,
                        target="ratio <= 3", passed=passed)
    module.run = lambda: [result]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    _fake_module(monkeypatch, "fast", passed=True)
    _fake_module(monkeypatch, "slow", passed=False)
    monkeypatch.setattr(runner, "MODULES", ("fast", "slow"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_subset_that_passes(fakes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main(["fast"]) == 0
    out = capsys.readouterr().out
    assert "fast bench" in out and "slow bench" not in out
    saved = json.loads((fakes / "perf-results.json").read_text())
    assert saved["run"]["command"] == "python -m benchmarks.perf fast"
    assert len(saved["run"]["load_average"]) == 3
    assert saved["results"] == [{"name": "fast bench", "value": 2.0, "unit": "s", "reference": 1.0,
                      "ratio": 2.0, "target": "ratio <= 3", "passed": True}]


def test_all_modules_and_a_missed_target(fakes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main([]) == 1
    captured = capsys.readouterr()
    assert "fast bench" in captured.out and "slow bench" in captured.out
    assert "target missed: slow bench" in captured.err
    assert len(json.loads((fakes / "perf-results.json").read_text())["results"]) == 2


def test_unknown_module(fakes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert runner.main(["nope"]) == 2
    assert "unknown module(s) nope" in capsys.readouterr().err
    assert not (fakes / "perf-results.json").exists()


def test_ratio_result_and_median_times() -> None:
    r = ratio_result("x", 4.0, 2.0, max_ratio=5.0, reference_name="one sort")
    assert (r.ratio, r.passed, r.unit) == (2.0, True, "s")
    assert "ratio <= 5" in r.target and "one sort" in r.target
    assert not ratio_result("x", 12.0, 2.0, max_ratio=5.0, reference_name="y").passed
    calls: list[str] = []
    times = median_times({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
                         repeats=3)
    assert set(times) == {"a", "b"} and all(t >= 0.0 for t in times.values())
    assert calls == ["a", "b"] * 4  # one warm-up round, then side by side
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        median_times({}, repeats=0)


def test_metric_grid_and_records() -> None:
    grid = c_r_grid()
    assert grid.shape == (65,) and np.unique(grid).shape == (65,)
    assert set(PAPER_C_R) <= set(grid.tolist())
    a, d, c, cost, score = records(1000)
    assert a.shape == d.shape == c.shape == cost.shape == score.shape == (1000,)
    assert np.unique(score).shape[0] < 1000  # scores tie
    assert (cost > 0).all()
