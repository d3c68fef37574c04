"""Progress of the long commands (``bench``, ``fit``): a bar on stderr when it is a terminal —
the model, its phase, how many phases are done, the time elapsed — and nothing at all when
stderr is piped or logged.

:func:`phases` gives the ``progress(msg)`` callback that :func:`benchmarks.bench.run.run_bench`
calls at the start of each phase; each call completes the phase before it.

Examples
--------
>>> import io
>>> from rich.console import Console
>>> piped = Console(file=io.StringIO())  # not a terminal
>>> with phases("bench", 4, console=piped) as step:
...     step("bootstrap")
>>> piped.file.getvalue()
''
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console

from cost_models.progress import progress_bar

#: the phases :func:`benchmarks.bench.run.run_bench` reports (the first names the fitting)
BENCH_PHASES = 4


@contextmanager
def phases(label: str, total: int, *, console: Console | None = None
           ) -> Iterator[Callable[[str], None]]:
    """A bar ``label: <phase>  m/total  elapsed`` while the block runs; the callback it yields
    starts the next phase (and completes the one before). Quiet unless ``console`` (default:
    stderr) is a terminal; the bar is removed when the block ends."""
    out = console or Console(stderr=True)
    if not out.is_terminal:  # piped or logged: not even a newline
        yield lambda _msg: None
        return
    bar = progress_bar(unit="phases", console=out)
    with bar:
        task = bar.add_task(f"{label}: starting", total=total)
        started = 0

        def step(msg: str) -> None:
            nonlocal started
            if started:
                bar.advance(task)
            started += 1
            bar.update(task, description=f"{label}: {msg}")

        yield step
        bar.update(task, completed=total)
