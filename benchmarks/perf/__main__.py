"""Run the performance benchmarks: ``python -m benchmarks.perf [MODULE ...]``.

Without arguments every module in :data:`MODULES` runs. Exit code: 0 when every target is met,
1 when one is missed, 2 for an unknown module name.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.perf._common import PerfResult

#: Modules of ``benchmarks.perf`` that expose ``run() -> list[PerfResult]``.
MODULES: tuple[str, ...] = ("metric", "costs", "annotation", "bench", "proxy", "ttft", "soak",
                            "scale", "startup", "pricing")

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


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv) or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(
            f"benchmarks.perf: unknown module(s) {', '.join(unknown)}; "
            f"available: {', '.join(MODULES)}",
            file=sys.stderr,
        )
        return 2
    results: list[PerfResult] = []
    for name in names:
        module = importlib.import_module(f"benchmarks.perf.{name}")
        results.extend(module.run())
    print(format_table(results))
    out = Path.cwd() / RESULTS_FILE
    out.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    failed = [r.name for r in results if not r.passed]
    if failed:
        print(f"target missed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
