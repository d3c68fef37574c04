"""Progress of ``bench``, ``fit`` and ``budget`` in phases (issue 38): on a terminal a bar
that moves during the slow phase (fitting a policy per fold ticks per fold); piped, plain
lines per phase and at a steady rate."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from benchmarks.progress import BENCH_PHASES, Phases, phases
from guard.cli import main


def test_a_terminal_sees_each_phase_and_the_count() -> None:
    term = Console(file=io.StringIO(), force_terminal=True, width=120)
    with phases("bench smollm2 (1/2)", BENCH_PHASES, console=term) as step:
        for name in ("fitting a policy per fold", "bootstrap", "sweep", "paired differences"):
            step(name)
            term.file.write("")  # the live display refreshes on its own thread and on stop
    shown = term.file.getvalue()
    for text in ("bench smollm2 (1/2)", "paired differences", "phases"):
        assert text in shown, text
    assert f"{BENCH_PHASES}/{BENCH_PHASES}" in shown  # completed when the block ends


def test_the_bar_moves_within_a_phase() -> None:
    term = Console(file=io.StringIO(), force_terminal=True, width=120)
    with phases("bench", BENCH_PHASES, console=term) as step:
        step("fitting a policy per fold")
        bar = step._bar
        seen = [bar.tasks[0].completed]
        for k in range(1, 11):
            step.tick(k, 10)
            seen.append(bar.tasks[0].completed)
        step("bootstrap")
        seen.append(bar.tasks[0].completed)
    assert seen == pytest.approx([0.0, *(k / 10 for k in range(1, 11)), 1.0])


class Recorder:
    """A bar that records what it is told."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def update(self, task: Any, **fields: Any) -> None:
        self.calls.append(fields)


def test_run_bench_reports_every_phase_and_ticks_in_the_slow_one(bench_files: Any) -> None:
    from benchmarks.bench.run import run_bench
    from cost_models.datasets import load_utilitybench

    bar = Recorder()
    step = Phases("bench", BENCH_PHASES, bar, 0)
    run_bench(load_utilitybench(bench_files.data), bench_files.responses,
              cost_model=bench_files.cost_model, n_boot=10, folds=5, progress=step)
    assert step.started == BENCH_PHASES
    starts = [i for i, c in enumerate(bar.calls) if "description" in c]
    assert "fitting a policy per fold" in bar.calls[starts[0]]["description"]
    ticks = [c for c in bar.calls[starts[0] + 1:starts[1]] if "detail" in c]
    assert [t["detail"] for t in ticks] == [f" ({k}/10)" for k in range(1, 11)]
    done = [c["completed"] for c in bar.calls]
    assert done == sorted(done) and done[-1] < BENCH_PHASES  # the bar only moves forward


def test_bench_piped_writes_plain_progress_lines(bench_files: Any, tmp_path: Any,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTILITYGUARD_PROGRESS_INTERVAL", "0.01")  # lines from the start
    assert main(["bench", "--data", str(bench_files.data), "--responses",
                 str(bench_files.responses), "--cost-model", str(bench_files.cost_model),
                 "--bootstrap", "20", "--no-plots", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert any(line.startswith(f"bench: fitting a policy per fold: 0/{BENCH_PHASES} phases (")
               for line in err)
    assert any(line.startswith("bench: bootstrap: 1/") for line in err)
    assert err[-1].startswith(f"bench: budget-welfare frontier: done, {BENCH_PHASES}/"
                              f"{BENCH_PHASES} phases in ")
    assert not any("\x1b" in line for line in err)


@pytest.mark.slow  # decides every shipped response (make test-fast leaves it out)
def test_budget_piped_writes_its_phases(capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTILITYGUARD_PROGRESS_INTERVAL", "0.01")
    assert main(["budget", "--rate", "0.3", "--bootstrap", "5", "--json"]) == 0
    err = capsys.readouterr().err
    assert "budget: deciding: 0/2 phases" in err and "budget: bootstrap: 1/2 phases" in err
