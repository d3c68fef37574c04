"""``python -m benchmarks.signals_cv``: what each confidence signal adds, by grouped CV.

For each shipped model's responses on the seed set, ``P(correct)`` of the answered replies is
predicted out of fold (5 folds, whole sources held out) by a single-signal calibrator and by
multi-signal calibrators with more signals, and scored by ROC AUC and Brier. With ``ptrue``
(the rows whose P(True) was collected, ``ptrue.jsonl``), every calibrator is scored on those
rows only, so the comparison is on the same replies, and the raw signals' own AUC (nothing
fitted) is shown beside them.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from benchmarks.bench.data import BenchData, load_bench, shipped_response_files
from cost_models.datasets import load_seed
from guard.calibration import Calibrator
from guard.calibration.multi import MultiSignalCalibrator, feature_rows
from guard.calibration.scoring import brier

#: (label, signals, reply features); ``None`` signals: the single-signal logprob_mean calibrator
VARIANTS: tuple[tuple[str, tuple[str, ...] | None, bool], ...] = (
    ("logprob_mean (single-signal calibrator)", None, False),
    ("logprob_mean + logprob_low10", ("logprob_mean", "logprob_low10"), False),
    ("logprob_mean + logprob_low10 + reply features", ("logprob_mean", "logprob_low10"), True),
    ("reply features only", (), True),
)
PTRUE_VARIANTS: tuple[tuple[str, tuple[str, ...] | None, bool], ...] = (
    ("ptrue only", ("ptrue",), False),
    ("logprob_mean + ptrue", ("logprob_mean", "ptrue"), False),
    ("logprob_mean + logprob_low10 + ptrue + reply features",
     ("logprob_mean", "logprob_low10", "ptrue"), True),
)


def oof(d: BenchData, rows: np.ndarray, groups: np.ndarray, signals: Sequence[str] | None,
        reply: bool, seed: int = 0) -> np.ndarray:
    """Out-of-fold P(correct) of ``rows``."""
    y = d.answerable & d.correct
    p = np.full(d.n, np.nan)
    k = min(5, len(set(groups[rows].tolist())))
    for tr, te in GroupKFold(k, shuffle=True, random_state=seed).split(rows, groups=groups[rows]):
        tr, te = rows[tr], rows[te]
        if signals is None:
            x = d.signals["logprob_mean"]
            p[te] = Calibrator(method="auto").fit(x[tr], y[tr]).predict(x[te])
        else:
            X = feature_rows(d.signals, d.texts, signals)
            cal = MultiSignalCalibrator(signals=tuple(signals), reply_features=reply,
                                        min_rows=30, min_class=5)
            p[te] = cal.fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
    return p


def table(files: Sequence[Path]) -> str:
    items = load_seed()
    src = {it.id: it.source for it in items}
    out = ["| model | rows | calibrator | AUC | Brier |", "| --- | --- | --- | --- | --- |"]
    for f in files:
        d = load_bench(items, f)
        g = np.array([src[i] for i in d.ids], dtype=object)
        y = d.answerable & d.correct
        sets = [(np.flatnonzero(d.answered), VARIANTS)]
        have = d.answered & np.isfinite(d.signals["ptrue"])
        if have.sum() >= 40 and 0 < y[have].sum() < have.sum():
            # the same rows with and without ptrue: what it adds to each calibrator
            sets.append((np.flatnonzero(have), VARIANTS[:1] + VARIANTS[2:3] + PTRUE_VARIANTS))
        if len(sets) > 1:  # the raw signals rank the replies with nothing fitted
            rows = sets[1][0]
            for sig in ("logprob_mean", "ptrue"):
                x = d.signals[sig][rows]
                out.append(f"| {d.model} | {len(rows)} | raw {sig} (nothing fitted) | "
                           f"{roc_auc_score(y[rows], x):.3f} | n/a |")
        for rows, variants in sets:
            for label, sigs, reply in variants:
                p = oof(d, rows, g, sigs, reply)
                out.append(f"| {d.model} | {len(rows)} | {label} | "
                           f"{roc_auc_score(y[rows], p[rows]):.3f} | "
                           f"{brier(p[rows], y[rows]):.4f} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.signals_cv", description=__doc__)
    ap.add_argument("--responses", type=Path, action="append", default=None,
                    help="responses files (default: every shipped model's)")
    args = ap.parse_args(argv)
    print(table(args.responses or shipped_response_files()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
