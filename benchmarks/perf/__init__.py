"""Performance benchmarks, kept out of the test run: ``python -m benchmarks.perf [MODULE ...]``.

Each module listed in :data:`benchmarks.perf.__main__.MODULES` exposes
``run() -> list[PerfResult]``. Every result is a ratio measured side by side against a
yardstick in the same process (e.g. one ``numpy.argsort``), so targets do not depend on the
speed of the machine. The runner prints a table, writes ``perf-results.json`` to the current
directory and exits with 1 when a target is missed.
"""

from benchmarks.perf._common import PerfResult

__all__ = ["PerfResult"]
