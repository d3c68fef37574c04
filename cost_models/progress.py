"""The one progress bar of the long commands: on stderr when it is a terminal, nothing at all
when it is piped or logged.

``progress_bar(label)`` shows ``label  bar  m/n  elapsed`` (and ``ETA`` with ``eta=True``);
without a label each task's description is shown, so a caller can rename the task as it
moves through phases (:func:`benchmarks.progress.phases`). It lives in ``cost_models``, the
lowest package with a command line, so that ``cost_models``, ``guard`` and ``benchmarks`` all
use it; rich is imported when a bar is made, not when the module is.

>>> import io
>>> from rich.console import Console
>>> piped = Console(file=io.StringIO())  # not a terminal
>>> with progress_bar("collect", console=piped) as bar:
...     task = bar.add_task("collect", total=3)
...     bar.advance(task)
>>> piped.file.getvalue()
''
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def progress_bar(label: str | None = None, *, unit: str | None = None, eta: bool = False,
                 console: Console | None = None) -> Progress:
    """A rich ``Progress`` (use it as a context manager): ``label`` (else each task's
    description), a bar, ``m/n``, ``unit`` (e.g. ``"phases"``), the time elapsed and, with
    ``eta``, the time remaining. Disabled unless ``console`` (default: stderr) is a terminal;
    removed from the screen when the block ends."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    out = console or Console(stderr=True)
    columns: list[str | ProgressColumn] = [
        TextColumn(label if label is not None else "{task.description}"), BarColumn(),
        MofNCompleteColumn()]
    if unit:
        columns.append(TextColumn(unit))
    columns.append(TimeElapsedColumn())
    if eta:
        columns += [TextColumn("ETA"), TimeRemainingColumn()]
    shown = out.is_terminal
    # piped: a quiet console too, for a disabled bar still ends its line when it stops
    options: dict[str, Any] = {"console": out if shown else Console(quiet=True),
                               "transient": True, "disable": not shown}
    return Progress(*columns, **options)


__all__ = ["progress_bar"]
