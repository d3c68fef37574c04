"""Agreement between two gradings of the same replies: overall and per answer type, and the
precision of "correct" (of the replies the grader credits, the share the reading credits too).

Used to measure the rules against the gold sample graded by reading
(``python -m benchmarks.grading.agreement tests/benchmarks/data/gold_grades.jsonl``) and the
rules against the second-stage model grader (``collect --grader-upstream``), and one reading
against another (``--against``: how far two readers agree, the ceiling a grader can be held to).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.grading import grade
from utilityguard_base.jsonl import read_jsonl

Outcome = tuple[bool, bool | None]


@dataclass
class Agreement:
    """How many of ``total`` gradings agree (``answered`` and ``correct`` both equal), and,
    per group, how many replies the first grading credits (``credited[group] = [right,
    credited]``: of those it grades correct, how many the second — the reading — grades
    correct too)."""

    agree: int = 0
    total: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)
    credited: dict[str, list[int]] = field(default_factory=dict)

    def add(self, key: str, answer_type: str, a: Outcome, b: Outcome) -> None:
        """Count one reply graded ``a`` by the grader measured and ``b`` by the reading."""
        same = a == b
        self.agree += same
        self.total += 1
        cell = self.by_type.setdefault(answer_type, [0, 0])
        cell[0] += same
        cell[1] += 1
        cred = self.credited.setdefault(answer_type, [0, 0])
        if a == (True, True):
            cred[0] += b == (True, True)
            cred[1] += 1
        if not same:
            self.disagreements.append(key)

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else float("nan")

    def precision(self, group: str | None = None) -> tuple[int, int]:
        """``(right, credited)``: of the replies the grader grades correct (in ``group``, or
        in all), how many the reading grades correct."""
        cells = [self.credited.get(group, [0, 0])] if group else list(self.credited.values())
        return sum(c[0] for c in cells), sum(c[1] for c in cells)

    def table(self, label: str = "answer type") -> str:
        """A Markdown table: one row per group (answer type unless grouped otherwise), then
        all, each with its agreement and the precision of "correct", with Wilson 95%
        intervals."""
        rows = [f"| {label} | agree | records | agreement | 95% interval | credited | "
                "right | precision of correct | 95% interval |",
                "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"]

        def cells(a: int, n: int, right: int, cred: int) -> str:
            lo, hi = wilson(a, n)
            out = f"{a} | {n} | {a / n:.1%} | {lo:.1%}-{hi:.1%} | {cred} | {right} | "
            if not cred:
                return out + "- | - |"
            plo, phi = wilson(right, cred)
            return out + f"{right / cred:.1%} | {plo:.1%}-{phi:.1%} |"

        for kind in sorted(self.by_type):
            a, n = self.by_type[kind]
            rows.append(f"| {kind} | " + cells(a, n, *self.precision(kind)))
        rows.append("| **all** | " + cells(self.agree, self.total, *self.precision()))
        return "\n".join(rows)


def wilson(agree: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if total <= 0:
        return float("nan"), float("nan")
    p = agree / total
    den = 1 + z * z / total
    mid = (p + z * z / (2 * total)) / den
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def read_gold(path: Path) -> list[dict[str, Any]]:
    """The gold records (one JSON object a line: ``id``, the item's ``question``,
    ``reference``, ``answer_type``, ``answerable``, ``domain``, the ``response``, and the
    grade written by reading: ``answered``, ``correct``, ``note``)."""
    return read_jsonl(path)


def rules_vs_gold(gold: Iterable[dict[str, Any]], by: Sequence[str] = ("answer_type",)
                  ) -> Agreement:
    """Grade every gold reply with the rules and compare with the grade written by reading.
    Each gold record carries its item (``question``, ``reference``, ``answer_type``,
    ``answerable``), so the sample does not depend on a dataset that may change. Rows are
    grouped by the record fields ``by`` (joined with ``/``)."""
    out = Agreement()
    for rec in gold:
        key = "/".join(str(rec.get(f)) for f in by)
        out.add(f"{rec.get('model', '')}:{rec['id']}", key, rule_outcome(rec), read_outcome(rec))
    return out


def rule_outcome(rec: dict[str, Any]) -> Outcome:
    """``(answered, correct)`` of the rule grader on a gold record's reply."""
    g = grade(rec, str(rec["response"]))
    return g.answered, g.correct


def read_outcome(rec: dict[str, Any]) -> Outcome:
    """``(answered, correct)`` as a reading graded the record."""
    return bool(rec["answered"]), None if rec["correct"] is None else bool(rec["correct"])


def reading_vs_gold(gold: Iterable[dict[str, Any]], other: Iterable[dict[str, Any]],
                    by: Sequence[str] = ("answer_type",)) -> Agreement:
    """Compare the gold grades with another reading of the same records (``id``, ``model``,
    ``answered``, ``correct``), keyed by (``id``, ``model``); grouped as :func:`rules_vs_gold`.
    A gold record the other reading lacks is a :class:`ValueError`: an agreement over a subset
    would not say so."""
    seen = {(r["id"], r.get("model")): read_outcome(r) for r in other}
    out = Agreement()
    for rec in gold:
        theirs = seen.get((rec["id"], rec.get("model")))
        if theirs is None:
            raise ValueError(f"the other reading has no grade for {rec.get('model')}:{rec['id']}")
        key = "/".join(str(rec.get(f)) for f in by)
        out.add(f"{rec.get('model', '')}:{rec['id']}", key, theirs, read_outcome(rec))
    return out


def weighted_agreement(gold: Iterable[dict[str, Any]], strata: Iterable[dict[str, Any]]
                       ) -> dict[str, float]:
    """Per model, the rules' agreement over all the replies a stratified sample was drawn
    from: each stratum's agreement weighted by its ``share`` of the model's replies
    (``strata``: ``id``, ``model``, ``stratum``, ``share``, as the sample's selection script
    writes them). A sample that over-draws some strata (credited replies, to measure the
    precision of "correct") says by this what a random sample would have."""
    of = {(r["id"], r["model"]): r for r in strata}
    cells: dict[str, dict[str, list[float]]] = {}
    for rec in gold:
        s = of.get((rec["id"], rec.get("model")))
        if s is None:
            raise ValueError(f"no stratum for {rec.get('model')}:{rec['id']}")
        c = cells.setdefault(s["model"], {}).setdefault(s["stratum"], [0, 0, float(s["share"])])
        c[0] += rule_outcome(rec) == read_outcome(rec)
        c[1] += 1
    return {m: sum(a / n * w for a, n, w in by.values()) / sum(w for _, _, w in by.values())
            for m, by in cells.items()}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.grading.agreement",
        description="Agreement of the rule grader (or, with --against, of a second reading) "
                    "with grades written by reading.")
    p.add_argument("gold", type=Path, help="gold grades (JSONL)")
    p.add_argument("--by", default="answer_type",
                   help="record fields to group rows by, comma-separated (answer_type; "
                        "e.g. model or model,style)")
    p.add_argument("--split", help="only the records of this split (tune or test)")
    p.add_argument("--against", type=Path, metavar="READING",
                   help="compare with this second reading of the same records (JSONL: id, "
                        "model, answered, correct) instead of the rules")
    p.add_argument("--no-list", action="store_true",
                   help="print the table only, not which records disagree (to measure a test "
                        "half without seeing the records the rules miss)")
    p.add_argument("--strata", type=Path, metavar="FILE",
                   help="the sample's strata (JSONL: id, model, stratum, share): also print "
                        "each model's agreement with the strata weighted by their shares")
    args = p.parse_args(argv)
    gold = [r for r in read_gold(args.gold) if args.split is None or r.get("split") == args.split]
    by = [f.strip() for f in args.by.split(",") if f.strip()]
    try:
        result = (rules_vs_gold(gold, by) if args.against is None
                  else reading_vs_gold(gold, read_gold(args.against), by))
    except ValueError as exc:
        p.error(str(exc))
    print(result.table(", ".join(by)))
    if args.strata is not None:
        try:
            weighted = weighted_agreement(gold, read_jsonl(args.strata))
        except ValueError as exc:
            p.error(str(exc))
        print("agreement over each model's replies (strata weighted by their shares): "
              + ", ".join(f"{m} {v:.1%}" for m, v in sorted(weighted.items())))
    if not args.no_list:
        print("disagreements:", ", ".join(result.disagreements) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
