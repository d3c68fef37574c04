"""Agreement between two gradings of the same replies: overall and per answer type.

Used to measure the rules against the gold sample graded by reading
(``python -m benchmarks.grading.agreement tests/benchmarks/data/gold_grades.jsonl``) and the
rules against the second-stage judge (``collect --judge-upstream``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.grading import grade

Outcome = tuple[bool, bool | None]


@dataclass
class Agreement:
    """How many of ``total`` gradings agree (``answered`` and ``correct`` both equal)."""

    agree: int = 0
    total: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)

    def add(self, key: str, answer_type: str, a: Outcome, b: Outcome) -> None:
        same = a == b
        self.agree += same
        self.total += 1
        cell = self.by_type.setdefault(answer_type, [0, 0])
        cell[0] += same
        cell[1] += 1
        if not same:
            self.disagreements.append(key)

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else float("nan")

    def table(self) -> str:
        """A Markdown table: one row per answer type, then all."""
        rows = ["| answer type | agree | records | agreement |", "| --- | ---: | ---: | ---: |"]
        for kind in sorted(self.by_type):
            a, n = self.by_type[kind]
            rows.append(f"| {kind} | {a} | {n} | {a / n:.1%} |")
        rows.append(f"| **all** | {self.agree} | {self.total} | {self.rate:.1%} |")
        return "\n".join(rows)


def read_gold(path: Path) -> list[dict[str, Any]]:
    """The gold records (one JSON object a line: ``id``, the item's ``question``,
    ``reference``, ``answer_type``, ``answerable``, ``domain``, the ``response``, and the
    grade written by reading: ``answered``, ``correct``, ``note``)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def rules_vs_gold(gold: Iterable[dict[str, Any]]) -> Agreement:
    """Grade every gold reply with the rules and compare with the grade written by reading.
    Each gold record carries its item (``question``, ``reference``, ``answer_type``,
    ``answerable``), so the sample does not depend on a dataset that may change."""
    out = Agreement()
    for rec in gold:
        g = grade(rec, str(rec["response"]))
        want = (bool(rec["answered"]), None if rec["correct"] is None else bool(rec["correct"]))
        out.add(str(rec["id"]), str(rec["answer_type"]), (g.answered, g.correct), want)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.grading.agreement",
        description="Agreement of the rule grader with grades written by reading.")
    p.add_argument("gold", type=Path, help="gold grades (JSONL)")
    args = p.parse_args(argv)
    result = rules_vs_gold(read_gold(args.gold))
    print(result.table())
    print("disagreements:", ", ".join(result.disagreements) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
