"""Shared pieces of the performance benchmarks: the result record and side-by-side timing."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from utilityguard_base.exceptions import InvalidValueError


@dataclass(frozen=True)
class PerfResult:
    """One measured ratio and whether it meets its target.

    ``value`` is the measured quantity (e.g. the median time of the operation under test),
    ``reference`` the same quantity for the yardstick measured in the same run, and
    ``ratio = value / reference``; ``target`` says in words what ``passed`` checked.
    """

    name: str
    value: float
    unit: str
    reference: float
    ratio: float
    target: str
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def median_times(
    funcs: Mapping[str, Callable[[], object]], *, repeats: int, warmup: int = 1
) -> dict[str, float]:
    """Median wall time (seconds) of each function, measured side by side.

    Each round runs every function once, in turn, so a slow phase of the machine (another
    process, frequency scaling) hits all of them alike; the median drops outliers.
    """
    if repeats < 1:
        raise InvalidValueError(f"repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        for f in funcs.values():
            f()
    samples: dict[str, list[float]] = {k: [] for k in funcs}
    for _ in range(repeats):
        for k, f in funcs.items():
            t0 = time.perf_counter()
            f()
            samples[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in samples.items()}


def ratio_result(
    name: str, value: float, reference: float, *, max_ratio: float, reference_name: str
) -> PerfResult:
    """A time ratio ``value / reference`` that passes when it is ``<= max_ratio``."""
    ratio = value / reference
    return PerfResult(
        name=name,
        value=value,
        unit="s",
        reference=reference,
        ratio=ratio,
        target=f"ratio <= {max_ratio:g} (reference: {reference_name})",
        passed=ratio <= max_ratio,
    )
