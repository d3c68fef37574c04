"""Run the performance benchmarks: ``python -m benchmarks.perf [MODULE ...]``.

Without arguments every module in :data:`MODULES` runs. ``perf-results.json`` holds
``{"run": {date, command, load average before and after, cpus, ...}, "results": [...]}``.
Exit code: 0 when every target is met, 1 when one is missed, 2 for an unknown module name.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.perf._common import PerfResult

#: Modules of ``benchmarks.perf`` that expose ``run() -> list[PerfResult]``.
MODULES: tuple[str, ...] = ("utility_auc_speed", "costs", "annotation", "bench", "proxy", "ttft",
                            "soak", "scale", "startup", "routes", "pricing",
                            "client_floor", "json_encode", "flood")

#: Former module names still accepted on the command line (with a note on stderr).
RENAMED = {"metric": "utility_auc_speed"}

RESULTS_FILE = "perf-results.json"


def format_table(results: Sequence[PerfResult]) -> str:
    """The results as a fixed-width text table."""
    head = f"{'benchmark':<52} {'value':>11} {'reference':>11} {'ratio':>8}  {'ok':<4} target"
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(
            f"{r.name:<52} {r.value:>9.4g} {r.unit:<1} {r.reference:>9.4g} {r.unit:<1} "
            f"{r.ratio:>8.2f}  {'yes' if r.passed else 'NO':<4} {r.target}"
        )
    return "\n".join(lines)


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (``None`` where the platform has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def run_info(names: Sequence[str]) -> dict[str, Any]:
    """When and where the run happened: the figures are ratios, but a loaded machine makes
    them noisy, so the load average is kept with them."""
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": "python -m benchmarks.perf " + " ".join(names),
            "load_average": load_average(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(MODULES)
    for old in set(names) & set(RENAMED):
        print(f"benchmarks.perf: {old!r} is now {RENAMED[old]!r}", file=sys.stderr)
    names = [RENAMED.get(n, n) for n in names]
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(
            f"benchmarks.perf: unknown module(s) {', '.join(unknown)}; "
            f"available: {', '.join(MODULES)}",
            file=sys.stderr,
        )
        return 2
    info = run_info(names)
    results: list[PerfResult] = []
    for name in names:
        module = importlib.import_module(f"benchmarks.perf.{name}")
        results.extend(module.run())
    info["load_average_after"] = load_average()
    print(f"{info['date']}  load average before {info['load_average']}, after "
          f"{info['load_average_after']} ({info['cpus']} cpus)")
    print(format_table(results))
    out = Path.cwd() / RESULTS_FILE
    saved = {"run": info, "results": [r.to_dict() for r in results]}
    out.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"target missed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
