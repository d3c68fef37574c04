"""The typed result of :func:`benchmarks.bench.run.run_bench` (what ``results.json`` holds).

Frozen dataclasses: the report, the plots and the CLIs read attributes (``res.settings.signal``,
``res.policies["guard"]``, ``res.sweep.c_r``) that mypy checks. :meth:`BenchResult.to_json`
is the ``results.json`` document: the fields in declaration order, which is the file's key
order. Per-policy metrics, calibration, paired differences and domains stay mappings keyed by
policy, metric or domain name (their keys are data, not a schema).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BenchResult", "BenchSettings", "CostSummary", "Curve", "ResponsesSummary", "Sweep",
           "shown_path"]

#: The directory holding the ``benchmarks`` package: embedded data is shown relative to it.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


def shown_path(file: str) -> str:
    """``file`` as ``report.md`` and ``results.json`` show it: never an absolute path (they
    are shared).

    Embedded data relative to the package root, other files relative to the working
    directory, anything else by its name.

    Examples
    --------
    >>> shown_path(str(PACKAGE_ROOT / "benchmarks" / "data" / "r.jsonl"))
    'benchmarks/data/r.jsonl'
    >>> shown_path("/somewhere/else/replies.jsonl")
    'replies.jsonl'
    >>> shown_path("my/replies.jsonl")
    'my/replies.jsonl'
    """
    path = Path(file)
    if not path.is_absolute():
        return path.as_posix()
    for root in (PACKAGE_ROOT, Path.cwd().resolve()):
        if path.resolve().is_relative_to(root):
            return path.resolve().relative_to(root).as_posix()
    return path.name


@dataclass(frozen=True)
class ResponsesSummary:
    """The response records the bench read."""

    file: str
    sha256: str
    model: str | None
    missing_responses: int  # dataset items without a response
    unmatched_responses: int  # response records whose id is not in the dataset (not used)
    answered: int
    correct: int


@dataclass(frozen=True)
class BenchSettings:
    """How the run was made: signal, cost and probability sources, folds, seed, bootstrap."""

    signal: str
    cost: str
    cost_model: str
    probability: str
    answerability: str
    #: how the guard row's decisions were made (the runtime's Guard.decide)
    decisions: str
    answerability_auc: float | None
    folds: int
    fold_groups: str | None
    seed: int
    bootstrap: int
    seconds: float


@dataclass(frozen=True)
class Sweep:
    """UtilityAUC of every policy over the grid of ``C_R`` values."""

    c_r: list[float]
    utility_auc: dict[str, list[float]]


@dataclass(frozen=True)
class Curve:
    """A policy's utility curve: mean utility against coverage."""

    coverage: list[float]
    utility: list[float]


@dataclass(frozen=True)
class CostSummary:
    true_median: float
    predicted_median: float


@dataclass(frozen=True)
class BenchResult:
    """Everything one bench run produces."""

    c_r: float
    n: int
    responses: ResponsesSummary
    settings: BenchSettings
    #: policy -> metric -> value (with ``<metric>_ci`` intervals); see ``evaluate.METRICS``
    policies: dict[str, dict[str, Any]]
    #: ECE-10 / Brier of the raw and the calibrated probability (``run.calibration_summary``)
    calibration: dict[str, Any]
    sweep: Sweep
    #: the guard minus each baseline (``benchmarks.bench.paired``)
    paired: dict[str, Any]
    #: domain -> policy -> {"n", "contribution", ...}
    domains: dict[str, dict[str, dict[str, float]]]
    curves: dict[str, Curve]
    costs: CostSummary
    #: the guard's budget-welfare frontier P(R_max) and its slope C_R*
    #: (``benchmarks.bench.frontier.frontier_table``)
    frontier: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``results.json`` document (plain dicts and lists, keys in field order); the
        responses file and the cost model as :func:`shown_path` shows them (no absolute path:
        the file is shared)."""
        doc = dataclasses.asdict(self)
        doc["responses"]["file"] = shown_path(self.responses.file)
        doc["settings"]["cost_model"] = shown_path(self.settings.cost_model)
        return doc
