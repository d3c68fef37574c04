"""Progress of ``bench`` and ``fit``: phases on a terminal, nothing when piped."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from benchmarks.progress import BENCH_PHASES, phases
from guard.cli import main


def test_a_terminal_sees_each_phase_and_the_count() -> None:
    term = Console(file=io.StringIO(), force_terminal=True, width=100)
    with phases("bench smollm2 (1/2)", BENCH_PHASES, console=term) as step:
        for name in ("fitting a policy per fold", "bootstrap", "sweep", "paired differences"):
            step(name)
            term.file.write("")  # the live display refreshes on its own thread and on stop
    shown = term.file.getvalue()
    for text in ("bench smollm2 (1/2)", "paired differences", "phases"):
        assert text in shown, text
    assert f"{BENCH_PHASES}/{BENCH_PHASES}" in shown  # completed when the block ends


def test_piped_output_gets_no_progress() -> None:
    piped = Console(file=io.StringIO())
    with phases("bench", BENCH_PHASES, console=piped) as step:
        step("bootstrap")
    assert piped.file.getvalue() == ""


def test_bench_piped_writes_no_progress_to_stderr(bench_files: Any, tmp_path: Any,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--data", str(bench_files.data), "--responses",
                 str(bench_files.responses), "--cost-model", str(bench_files.cost_model),
                 "--bootstrap", "20", "--no-plots", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "phases" not in err and "bootstrap" not in err, err
