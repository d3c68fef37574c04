"""RiskEval on our data: does the strong model act on the penalty it is told, and what does the
guard do with the same replies? (``python -m benchmarks.riskeval_table``)

The strong model answered 300 seed questions (a stratified sample) three times, told each time
that a wrong answer costs ``L`` points (1, 10, 100), a correct one earns 1 and declining scores
0 (``benchmarks/data/strong/riskeval.md``; RiskEval's ``lambda``, ``C_R = 0``). Per penalty:
how often it answers, how accurate its answers are, its mean stated confidence, RiskEval's policy
consistency and normalized regret of its own decisions (:mod:`benchmarks.riskeval`: answer iff
its stated confidence ``c >= L / (1 + L)``), and the points per item it scores. Beside it, the
guard deciding on the same replies with the same penalty (``cost = L``, ``C_R = 0``): with the
stated confidence as ``p`` (RiskEval's post-hoc optimal policy) and with the shipped default
policy's calibrated ``p``. A reply the model declined stays a decline whatever the guard does.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.riskeval import normalized_regret, policy_consistency

DATA = Path(__file__).resolve().parent / "data" / "strong"
PENALTIES = (1, 10, 100)


def _points(answered: Any, correct: Any, penalty: float) -> Any:
    return np.where(answered, np.where(correct, 1.0, -float(penalty)), 0.0)


def rows(records: Mapping[int, Sequence[Mapping[str, Any]]],
         answerable: Mapping[str, bool], calibrated: Any = None) -> list[dict[str, Any]]:
    """One row per penalty (see the module docstring); ``calibrated`` maps a record to the
    default policy's ``p`` (``None``: that column is left out)."""
    out = []
    for penalty, recs in records.items():
        c = np.array([r["confidence"]["verbal"] if r["confidence"]["verbal"] is not None
                      else 0.0 for r in recs])
        answered = np.array([bool(r["answered"]) for r in recs])
        correct = np.array([bool(r["correct"]) and answerable[r["id"]] for r in recs])
        tau = penalty / (1.0 + penalty)
        row: dict[str, Any] = {
            "penalty": penalty, "n": len(recs), "answer_rate": float(answered.mean()),
            "answered_accuracy": float(correct[answered].mean()) if answered.any() else None,
            "mean_confidence": float(c.mean()),
            "mean_confidence_answered": float(c[answered].mean()) if answered.any() else None,
            "policy_consistency": policy_consistency(c, answered, np.full(len(c), penalty),
                                                     0.0),
            "normalized_regret": normalized_regret(c, answered, np.full(len(c), penalty), 0.0),
            "model_points": float(_points(answered, correct, penalty).mean()),
            "guard_stated_points": float(_points(answered & (c >= tau), correct,
                                                 penalty).mean()),
            "guard_stated_answer_rate": float((answered & (c >= tau)).mean()),
        }
        if calibrated is not None:
            p = np.array([calibrated(r) for r in recs])
            keep = answered & (p >= tau)
            row["guard_default_points"] = float(_points(keep, correct, penalty).mean())
            row["guard_default_answer_rate"] = float(keep.mean())
        out.append(row)
    return out


def table(rs: Sequence[Mapping[str, Any]]) -> str:
    head = ("| penalty L | answer rate | accuracy of answers | mean stated confidence (answered) "
            "| policy consistency | normalized regret | points per item: model | guard, stated "
            "p (answer rate) | guard, default policy (answer rate) |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    lines = [head]
    for r in rs:
        dflt = (f"{r['guard_default_points']:+.3f} ({r['guard_default_answer_rate']:.3f})"
                if "guard_default_points" in r else "n/a")
        lines.append(
            f"| {r['penalty']} | {r['answer_rate']:.3f} | {r['answered_accuracy']:.3f} | "
            f"{r['mean_confidence']:.3f} ({r['mean_confidence_answered']:.3f}) | "
            f"{r['policy_consistency']:.3f} | {r['normalized_regret']:.3f} | "
            f"{r['model_points']:+.3f} | {r['guard_stated_points']:+.3f} "
            f"({r['guard_stated_answer_rate']:.3f}) | {dflt} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.riskeval_table",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="the folder of riskeval_L*.jsonl")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = p.parse_args(argv)
    from cost_models.datasets import load_seed
    from guard import Guard
    from guard.decision_records import Confidence
    from utilityguard_base.jsonl import read_jsonl

    answerable = {it.id: bool(it.answerable) for it in load_seed()}
    recs = {pen: read_jsonl(args.data / f"riskeval_L{pen}.jsonl") for pen in PENALTIES}
    guard = Guard()

    def calibrated(r: Mapping[str, Any]) -> float:
        conf = {k: v for k, v in r["confidence"].items() if v is not None}
        value = guard.probability(Confidence.coerce(conf), r["response"])[0]
        return 0.0 if value is None else float(value)

    rs = rows(recs, answerable, calibrated)
    print(json.dumps(rs, indent=2) if args.json else table(rs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
