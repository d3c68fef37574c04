"""``utilityguard metric FILE``: UtilityAUC and the paper's Table 1 columns of a records file."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from benchmarks.table import table1
from cost_models.datasets import parse_float
from guard.exceptions import CLIError
from guard.response_records import read_response_records
from utilityguard_base.exceptions import InvalidValueError
from utilityguard_base.options import add_c_r_option, checked_c_r


def register(sub: Any) -> None:
    p = sub.add_parser(
        "metric",
        help="UtilityAUC, Ans. Acc, Ref. Acc and Answer Rate of a records file",
        description=(
            "Read records (JSONL, CSV or parquet) that merge a dataset item and a response "
            "record — fields answerable, answered, correct, cost, and optionally a score — and "
            "print UtilityAUC with the paper's Table 1 columns. Without --score the paper's "
            "binary protocol is used (answered = 1, refused = 0)."
        ),
    )
    p.add_argument("file", type=Path, help="records file (.jsonl, .csv or .parquet)")
    add_c_r_option(p)
    p.add_argument("--score", default=None,
                   help="field to order responses by, dotted for nested (confidence.logprob_mean)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _get(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted ``path``, or None.

    A column literally named ``path`` wins (CSV headers such as ``confidence.logprob_mean``);
    otherwise each part descends into a nested object, and a JSON object stored as a string
    (how a nested field looks in a CSV cell) is parsed on the way.
    """
    if path in row:
        return row[path]
    cur: Any = row
    for part in path.split("."):
        if isinstance(cur, str) and cur.strip().startswith("{"):
            try:
                cur = json.loads(cur)
            except json.JSONDecodeError:
                return None
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _float_field(value: Any, where: str) -> float:
    try:
        x = parse_float(value)
    except InvalidValueError as exc:
        raise CLIError(f"{where}: {exc}") from None
    if x is None:
        raise CLIError(f"{where}: expected a number, got {value!r}")
    return x


def parse_records(path: Path, score_field: str | None) -> dict[str, list[Any]]:
    """The metric's columns from the response records of ``path`` (each must carry the
    dataset fields ``answerable`` and ``cost``)."""
    records = read_response_records(path)
    fields = ("answerable", "answered", "correct", "cost", "score")
    cols: dict[str, list[Any]] = {k: [] for k in fields}
    for n, rec in enumerate(records, start=1):
        at = f"{path}, row {n}"
        if rec.answerable is None:
            raise CLIError(f"{at}: missing field 'answerable'")
        if rec.cost is None:
            raise CLIError(f"{at}: missing field 'cost'")
        if rec.answerable and rec.answered and rec.correct is None:
            raise CLIError(f"{at}, field 'correct': required for an answered, answerable item")
        cols["answerable"].append(rec.answerable)
        cols["answered"].append(rec.answered)
        cols["correct"].append(rec.correct)
        cols["cost"].append(rec.cost)
        if score_field:
            raw = _get(rec.model_dump(), score_field)
            if raw is None:
                raise CLIError(f"{at}: missing field '{score_field}' (--score)")
            cols["score"].append(_float_field(raw, f"{at}, field '{score_field}'"))
    return cols


def run(args: argparse.Namespace) -> int:
    checked_c_r(args.c_r)
    cols = parse_records(args.file, args.score)
    row = table1(cols["answerable"], cols["answered"], cols["correct"], cols["cost"],
                 cols["score"] if args.score else None, c_r=args.c_r)
    result = {"file": str(args.file), "c_r": args.c_r,
              "score": args.score or "binary (answered=1, refused=0)", **row.to_dict()}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.file}  (n = {row.n}, C_R = {args.c_r:g}, score = {result['score']})")
    print(f"  UtilityAUC   {row.utility_auc:.4f}")
    for label, v in (("Ans. Acc", row.ans_acc), ("Ref. Acc", row.ref_acc),
                     ("Answer Rate", row.answer_rate)):
        print(f"  {label:<12} {'n/a' if math.isnan(v) else f'{100 * v:.2f}%'}")
    return 0
