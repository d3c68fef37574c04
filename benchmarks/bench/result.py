"""The typed result of :func:`benchmarks.bench.run.run_bench` (what ``results.json`` holds).

Typed dictionaries, so the report, the plots and ``results.json`` read the same keys and mypy
checks every one of them; ``json.dumps(result)`` writes the file as is.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["BenchResult", "BenchSettings", "CostSummary", "Curve", "ResponsesSummary", "Sweep"]


class ResponsesSummary(TypedDict):
    """The response records the bench read."""

    file: str
    sha256: str
    model: str | None
    missing_responses: int  # dataset items without a response
    unmatched_responses: int  # response records whose id is not in the dataset (not used)
    answered: int
    correct: int


class BenchSettings(TypedDict):
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


class Sweep(TypedDict):
    """UtilityAUC of every policy over the grid of ``C_R`` values."""

    c_r: list[float]
    utility_auc: dict[str, list[float]]


class Curve(TypedDict):
    """A policy's utility curve: mean utility against coverage."""

    coverage: list[float]
    utility: list[float]


class CostSummary(TypedDict):
    true_median: float
    predicted_median: float


class BenchResult(TypedDict):
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
