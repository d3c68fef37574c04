"""The one progress display (utilityguard_base.progress): a bar on a terminal; plain lines at a
steady rate when piped (issue 38: ``make bench`` and ``fit`` printed nothing for minutes in a
CI log)."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from utilityguard_base.progress import PlainProgress, interval, progress_bar


def test_a_terminal_sees_the_label_the_count_and_the_eta() -> None:
    term = Console(file=io.StringIO(), force_terminal=True, width=100)
    with progress_bar("annotate", eta=True, console=term) as bar:
        task = bar.add_task("annotate", total=4)
        bar.advance(task, 4)
    shown = term.file.getvalue()
    for text in ("annotate", "4/4", "ETA"):
        assert text in shown, text


def test_piped_output_is_plain_lines_with_the_count() -> None:
    piped = Console(file=io.StringIO())
    with progress_bar("collect", eta=True, console=piped, every=0.0) as bar:
        task = bar.add_task("collect", total=2)
        bar.advance(task)
        bar.advance(task)
    lines = piped.file.getvalue().splitlines()
    assert lines[0] == "collect: 0/2 (0s)"
    assert lines[-1].startswith("collect: done, 2/2 in ")
    assert "\x1b" not in piped.file.getvalue()  # no terminal codes in a log


def test_a_quick_block_prints_nothing() -> None:
    # a command done (or failed) within the first interval keeps its output or its one-line
    # error alone
    piped = Console(file=io.StringIO())
    with progress_bar("collect", console=piped, every=3600.0) as bar:
        bar.advance(bar.add_task("collect", total=2))
    assert piped.file.getvalue() == ''


def test_piped_a_line_comes_at_a_steady_rate_even_when_nothing_advances() -> None:
    out = io.StringIO()
    with PlainProgress("bench", out, every=0.05) as bar:
        task = bar.add_task("fitting a policy per fold", total=5)
        time.sleep(0.6)  # a slow phase: nothing advances
        bar.update(task, completed=1, detail=" (2/10)")
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    heartbeats = [line for line in lines if line.startswith("bench: fitting a policy per fold:")]
    assert len(heartbeats) >= 4, lines  # the start, then about one per 0.05 s (a loaded
    # machine may delay the thread; four in 0.6 s is the least a steady rate gives)
    assert any("(2/10): 1/5" in line for line in lines), lines  # the count within a phase


def test_a_detail_prints_no_line_of_its_own() -> None:
    now = [0.0]
    out = io.StringIO()
    with PlainProgress("budget", out, every=10.0, heartbeat=False, clock=lambda: now[0]) as bar:
        now[0] = 20.0  # past the first interval: lines are shown
        task = bar.add_task("bootstrap", total=1)
        for k in range(200):  # a fast inner loop must not flood the log
            bar.update(task, detail=f" ({k}/200)")
    assert out.getvalue().splitlines() == ["budget: bootstrap: 0/1 (20s)",
                                           "budget: bootstrap (199/200): done, 0/1 in 20s"]


def test_the_interval_can_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTILITYGUARD_PROGRESS_INTERVAL", "2.5")
    assert interval() == 2.5
    monkeypatch.setenv("UTILITYGUARD_PROGRESS_INTERVAL", "nonsense")
    assert interval() == 5.0
