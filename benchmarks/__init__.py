"""Offline evaluation of utilityguard: UtilityAUC and the metrics it is compared with.

* :mod:`benchmarks.utility_auc` — UtilityAUC, the raw area and its references, the utility
  curve, the ``C_R`` sweep (UtilityBench Section 3, Appendix B);
* :mod:`benchmarks.table` — the paper's Table 1 columns;
* :mod:`benchmarks.selective` — AURC, eAURC, cost-weighted AURC, AUARC (Appendix C.2.4-C.2.6);
* ECE and Brier score, re-exported from :mod:`guard.calibration.scoring`;
* :mod:`benchmarks.riskeval` — RiskEval's policy consistency and normalized regret.

Importing this package loads numpy only (no I/O, no optional dependencies).
"""

from benchmarks.riskeval import inconsistent_decisions, normalized_regret, policy_consistency
from benchmarks.selective import auarc, aurc, cw_aurc, eaurc
from benchmarks.table import Table1Row, table1
from benchmarks.utility_auc import (
    UtilityArea,
    best_area_above_base,
    utility_area,
    utility_auc,
    utility_auc_sweep,
    utility_curve,
    worst_gains,
)
from guard.calibration.scoring import brier, ece

__all__ = [
    "Table1Row",
    "UtilityArea",
    "auarc",
    "aurc",
    "best_area_above_base",
    "brier",
    "cw_aurc",
    "eaurc",
    "ece",
    "inconsistent_decisions",
    "normalized_regret",
    "policy_consistency",
    "table1",
    "utility_area",
    "utility_auc",
    "utility_auc_sweep",
    "utility_curve",
    "worst_gains",
]
