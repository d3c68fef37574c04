"""``utilityguard metric FILE``: UtilityAUC and the paper's Table 1 columns of a records file."""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

from benchmarks.table import table1
from cost_models.datasets import DatasetError, read_rows
from guard.cli import CLIError


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
    p.add_argument("--c-r", type=float, default=2.0, help="price of an unnecessary refusal (2)")
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


def _bool_field(value: Any, where: str, *, nullable: bool = False) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in (0, 1) and not isinstance(value, float):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in {"true", "false", "1", "0"}:
        return value.strip().lower() in {"true", "1"}
    missing = value is None or value == "" or (isinstance(value, float) and math.isnan(value))
    if nullable and missing:
        return None
    raise CLIError(f"{where}: expected true/false, got {value!r}")


def _float_field(value: Any, where: str) -> float:
    if isinstance(value, bool) or value is None or value == "":
        raise CLIError(f"{where}: expected a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise CLIError(f"{where}: expected a number, got {value!r}") from None
    if math.isnan(x):
        raise CLIError(f"{where}: NaN is not allowed")
    return x


def parse_records(path: Path, score_field: str | None) -> dict[str, list[Any]]:
    try:
        rows = read_rows(path)
    except DatasetError as exc:
        raise CLIError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise CLIError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except (ValueError, OSError, csv.Error) as exc:  # e.g. pyarrow's ArrowInvalid, a directory
        detail = " ".join(str(exc).split())  # one line
        raise CLIError(f"{path}: cannot read records: {detail}") from None
    if not rows:
        raise CLIError(f"{path}: no records")
    fields = ("answerable", "answered", "correct", "cost", "score")
    cols: dict[str, list[Any]] = {k: [] for k in fields}
    for n, row in enumerate(rows, start=1):
        at = f"{path}, row {n}"
        for name in ("answerable", "answered", "cost"):
            if name not in row:
                raise CLIError(f"{at}: missing field '{name}'")
        a = _bool_field(row["answerable"], f"{at}, field 'answerable'")
        d = _bool_field(row["answered"], f"{at}, field 'answered'")
        c = _bool_field(row.get("correct"), f"{at}, field 'correct'", nullable=True)
        if a and d and c is None:
            raise CLIError(f"{at}, field 'correct': required for an answered, answerable item")
        cost = _float_field(row["cost"], f"{at}, field 'cost'")
        if not math.isfinite(cost) or cost <= 0:
            raise CLIError(f"{at}, field 'cost': must be a finite number > 0, got {row['cost']!r}")
        cols["answerable"].append(a)
        cols["answered"].append(d)
        cols["correct"].append(c)
        cols["cost"].append(cost)
        if score_field:
            raw = _get(row, score_field)
            if raw is None:
                raise CLIError(f"{at}: missing field '{score_field}' (--score)")
            cols["score"].append(_float_field(raw, f"{at}, field '{score_field}'"))
    return cols


def run(args: argparse.Namespace) -> int:
    if not math.isfinite(args.c_r) or args.c_r < 0:
        raise CLIError(f"--c-r must be a finite number >= 0, got {args.c_r}")
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
