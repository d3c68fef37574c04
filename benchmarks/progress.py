"""Progress of the long commands (``bench``, ``fit``, ``budget``, ``asking train``) in
phases: a bar on stderr when it is a terminal — the command, its phase, the phases done,
the time elapsed — and plain lines when stderr is piped or logged
(:func:`utilityguard_base.progress.progress_bar`: after the first few seconds, one per phase and
one every few seconds).

:func:`phases` gives a :class:`Phases`: calling it with a message starts the next phase
(and completes the one before); :meth:`Phases.tick` reports how far the current phase is
(``done`` of ``total`` steps, shown with the phase), which moves the bar within the phase:
the bench's slow phase, fitting a policy per fold, ticks twice per fold.

Examples
--------
>>> import io
>>> from rich.console import Console
>>> piped = Console(file=io.StringIO())  # not a terminal: plain lines
>>> now = [0.0]  # the clock, in seconds
>>> with phases("bench", 2, console=piped, clock=lambda: now[0], every=5.0) as step:
...     now[0] = 10.0  # past the first interval: lines are shown from now on
...     step("fitting a policy per fold")
...     step.tick(1, 5)  # moves the bar, prints nothing of its own
...     now[0] = 12.0
...     step("bootstrap")
>>> print(piped.file.getvalue(), end="")
bench: fitting a policy per fold: 0/2 phases (10s)
bench: bootstrap: 1/2 phases (12s)
bench: bootstrap: done, 2/2 phases in 12s
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from utilityguard_base.progress import progress_bar

#: the phases :func:`benchmarks.bench.run.run_bench` reports (the first is the fitting, or
#: deciding with a given policy)
BENCH_PHASES = 5


class Phases:
    """The progress of a command in phases (what :func:`phases` yields)."""

    def __init__(self, label: str, total: int | None, bar: Any, task: Any) -> None:
        self.label, self.total, self._bar, self._task = label, total, bar, task
        self.started = 0
        self.phase = "starting"

    def __call__(self, msg: str) -> None:
        """Start the next phase, ``msg`` (the one before is complete)."""
        self.started += 1
        self.phase = msg
        self._bar.update(self._task, description=self._description(), detail="",
                         completed=self.started - 1)

    def tick(self, done: int, total: int) -> None:
        """``done`` of ``total`` steps of the current phase are complete: the bar moves (a
        plain line shows the count at its next line, it prints none of its own)."""
        fraction = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
        self._bar.update(self._task, detail=f" ({done}/{total})",
                         completed=max(self.started - 1, 0) + fraction)

    def _description(self) -> str:
        return f"{self.label}: {self.phase}"


#: what a function that reports phases accepts: a :class:`Phases`, or any callable taking
#: the phase's message
Step = Callable[[str], None]


def ticker(step: Step | None) -> Callable[[int, int], None] | None:
    """``step``'s :meth:`Phases.tick`, or ``None`` for a plain callable (or none)."""
    return step.tick if isinstance(step, Phases) else None


@contextmanager
def phases(label: str, total: int | None, *, console: Console | None = None,
           clock: Callable[[], float] | None = None, every: float | None = None
           ) -> Iterator[Phases]:
    """A bar ``label: <phase> (k/n)  m/total phases  elapsed`` while the block runs (on a
    terminal; plain lines when piped, see :func:`utilityguard_base.progress.progress_bar`);
    ``total=None`` when the number of phases is not known. The bar is removed when the
    block ends."""
    bar = progress_bar(unit="phases", console=console or Console(stderr=True), clock=clock,
                       every=every)
    with bar:
        task = bar.add_task(f"{label}: starting", total=total, detail="")
        step = Phases(label, total, bar, task)
        yield step
        bar.update(task, completed=total if total else step.started)
