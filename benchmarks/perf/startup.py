"""Start-up cost: ``import guard`` (what a decorator user pays) and ``utilityguard --help``,
each a fresh interpreter, as a ratio to a fresh interpreter importing numpy (which both need).

scikit-learn, scipy and matplotlib must load only when a command needs them; the target is
within 5x of ``import numpy``. Each sample is a whole subprocess, measured side by side with
the yardstick (see :func:`benchmarks.perf._common.median_times`).
"""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks.perf._common import PerfResult, median_times, ratio_result

MAX_RATIO = 5.0
REPEATS = 9


def _python(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())


def _env() -> dict[str, str]:
    # no .pyc writing and no user site: each run starts from the same state
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}


def _help() -> None:
    subprocess.run([sys.executable, "-m", "guard.cli", "--help"], check=True,
                   stdout=subprocess.DEVNULL, env=_env())


def run() -> list[PerfResult]:
    """Median wall time of each start-up, side by side with ``python -c 'import numpy'``."""
    times = median_times({
        "numpy": lambda: _python("import numpy"),
        "guard": lambda: _python("import guard"),
        "help": _help,
    }, repeats=REPEATS)
    ref = "python -c 'import numpy'"
    return [
        ratio_result("start-up: python -c 'import guard'", times["guard"], times["numpy"],
                     max_ratio=MAX_RATIO, reference_name=ref),
        ratio_result("start-up: utilityguard --help", times["help"], times["numpy"],
                     max_ratio=MAX_RATIO, reference_name=ref),
    ]
