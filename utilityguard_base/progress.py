"""The one progress display of the long commands: a bar on stderr when it is a terminal,
plain lines at a steady rate when it is piped or logged (a CI log must not sit silent for
minutes).

``progress_bar(label)`` shows ``label  bar  m/n  elapsed`` (and ``ETA`` with ``eta=True``);
without a label each task's description is shown, so a caller can rename the task as it
moves through phases (:func:`benchmarks.progress.phases`). Piped, the same calls print
:class:`PlainProgress` lines once the block has run :data:`INTERVAL` seconds (a quick command,
or one that fails at once, prints none: its output or its one-line error stays alone): then
one when a task's description changes, one at most every :data:`INTERVAL` seconds (also
when nothing advances: a heartbeat), and one when the block ends. It lives in
:mod:`utilityguard_base`, below every package with a long command; rich is imported when a
bar is made, not when the module is.

>>> import io
>>> from rich.console import Console
>>> piped = Console(file=io.StringIO())  # not a terminal
>>> with progress_bar("collect", console=piped, clock=lambda: 0.0, every=0.0) as bar:
...     task = bar.add_task("collect", total=3)
...     bar.advance(task)
>>> print(piped.file.getvalue(), end="")
collect: 0/3 (0s)
collect: 1/3 (0s)
collect: done, 1/3 in 0s
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

#: Seconds between two plain progress lines (``UTILITYGUARD_PROGRESS_INTERVAL`` overrides it).
INTERVAL = 5.0


def interval() -> float:
    """:data:`INTERVAL`, or ``UTILITYGUARD_PROGRESS_INTERVAL`` when set to a number > 0."""
    try:
        value = float(os.environ.get("UTILITYGUARD_PROGRESS_INTERVAL", INTERVAL))
    except ValueError:
        return INTERVAL
    return value if math.isfinite(value) and value > 0 else INTERVAL


class Bar(Protocol):
    """What :func:`progress_bar` returns: rich's ``Progress`` or a :class:`PlainProgress`."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> Any: ...

    def add_task(self, description: str, start: bool = ..., total: float | None = ...,
                 completed: int = ..., visible: bool = ..., **fields: Any) -> Any: ...

    def advance(self, task_id: Any, advance: float = ...) -> None: ...

    def update(self, task_id: Any, *, total: float | None = ..., completed: float | None = ...,
               advance: float | None = ..., description: str | None = ...,
               visible: bool | None = ..., refresh: bool = ..., **fields: Any) -> None: ...


@dataclass
class _Task:
    description: str
    total: float | None
    completed: float
    unit: str
    #: shown after the description (a count within a phase); changing it prints no line
    detail: str = ""


class PlainProgress:
    """The calls of rich's ``Progress`` the commands make (``add_task``, ``advance``,
    ``update``, a context manager), as plain lines on ``out``, from ``every`` seconds after
    the block starts: then a line when a task's description changes, one at most every
    ``every`` seconds (a heartbeat thread prints one when nothing else did), and one when the
    block ends. A task's ``detail`` field (a count within a phase) is shown in the lines but
    prints none itself."""

    def __init__(self, label: str | None, out: IO[str], *, unit: str | None = None,
                 every: float | None = None, clock: Callable[[], float] = time.monotonic,
                 heartbeat: bool = True) -> None:
        self.label, self.out, self.unit = label, out, unit or ""
        self.every = interval() if every is None else every
        self.clock = clock
        self._tasks: dict[int, _Task] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._heartbeat = heartbeat
        self._start = self._last = 0.0
        self._shown = False  # nothing is printed before the block has run ``every`` seconds

    def __enter__(self) -> PlainProgress:
        self._start = self._last = self.clock()
        if self._heartbeat:
            self._thread = threading.Thread(target=self._beat, daemon=True,
                                            name="utilityguard-progress")
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._tasks and self._shown:
                task = self._tasks[max(self._tasks)]
                self._write(f"{self._name(task)}: {'done' if exc[0] is None else 'stopped'}, "
                            f"{self._count(task)} in {self._elapsed()}")

    def add_task(self, description: str, start: bool = True, total: float | None = None,
                 completed: int = 0, visible: bool = True, **fields: Any) -> int:
        with self._lock:
            key = len(self._tasks)
            self._tasks[key] = _Task(description, total, completed, self.unit,
                                     str(fields.get("detail", "")))
            self._say(key)
        return key

    def advance(self, task_id: Any, advance: float = 1) -> None:
        self.update(task_id, advance=advance)

    def update(self, task_id: Any, *, total: float | None = None,
               completed: float | None = None, advance: float | None = None,
               description: str | None = None, visible: bool | None = None,
               refresh: bool = False, **fields: Any) -> None:
        with self._lock:
            task = self._tasks[task_id]
            renamed = description is not None and description != task.description
            if description is not None:
                task.description = description
            if total is not None:
                task.total = total
            if completed is not None:
                task.completed = completed
            if advance is not None:
                task.completed += advance
            if "detail" in fields:
                task.detail = str(fields["detail"])
            if renamed or self.clock() - self._last >= self.every:
                self._say(task_id)

    def _beat(self) -> None:
        while not self._stop.wait(self.every / 2):
            with self._lock:
                if self._tasks and self.clock() - self._last >= self.every:
                    self._say(max(self._tasks))

    def _count(self, task: _Task) -> str:
        done = f"{math.floor(task.completed + 1e-9):d}"
        unit = f" {task.unit}" if task.unit else ""
        return f"{done}/{task.total:g}{unit}" if task.total else f"{done}{unit}"

    def _elapsed(self) -> str:
        return f"{self.clock() - self._start:.0f}s"

    def _say(self, task_id: int) -> None:
        if not self._shown and self.clock() - self._start < self.every:
            return
        self._shown = True
        task = self._tasks[task_id]
        self._write(f"{self._name(task)}: {self._count(task)} ({self._elapsed()})")

    def _name(self, task: _Task) -> str:
        name = task.description if self.label is None else (
            self.label if task.description in ("", self.label) else
            f"{self.label}: {task.description}")
        return name + task.detail

    def _write(self, line: str) -> None:
        self._last = self.clock()
        self.out.write(line + "\n")
        self.out.flush()


def progress_bar(label: str | None = None, *, unit: str | None = None, eta: bool = False,
                 console: Console | None = None, clock: Callable[[], float] | None = None,
                 every: float | None = None) -> Bar:
    """A rich ``Progress`` (use it as a context manager): ``label`` (else each task's
    description), a bar, ``m/n``, ``unit`` (e.g. ``"phases"``), the time elapsed and, with
    ``eta``, the time remaining — when ``console`` (default: stderr) is a terminal; removed
    from the screen when the block ends. Otherwise a :class:`PlainProgress` on the console's
    file (``clock``, ``every``: its time source and interval, for tests)."""
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
    if not out.is_terminal:
        return PlainProgress(label, out.file, unit=unit, clock=clock or time.monotonic,
                             heartbeat=clock is None, every=every)
    class Description(ProgressColumn):
        """The task's description and its ``detail`` field (a count within a phase)."""

        def render(self, task: Any) -> Any:
            from rich.text import Text

            return Text(f"{task.description}{task.fields.get('detail', '')}")

    columns: list[str | ProgressColumn] = [
        TextColumn(label) if label is not None else Description(), BarColumn(),
        MofNCompleteColumn()]
    if unit:
        columns.append(TextColumn(unit))
    columns.append(TimeElapsedColumn())
    if eta:
        columns += [TextColumn("ETA"), TimeRemainingColumn()]
    return Progress(*columns, console=out, transient=True)


__all__ = ["INTERVAL", "Bar", "PlainProgress", "progress_bar"]
