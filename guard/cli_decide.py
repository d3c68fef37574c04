"""``utilityguard decide``: what the guard would decide for a question, without any model.

A dry run of the rule ``answer iff p >= (L - C_R) / (1 + L)``: the cost ``L`` of a wrong
answer to QUESTION (from the cost model, or ``--cost``), the threshold, and — given ``--p``,
the probability that an answer would be correct — the decision. No model is asked and nothing
is sent anywhere::

    $ utilityguard decide "What is the maximum daily dose of acetaminophen for an adult?" --p 0.7
    cost 34.3822 (cost model), C_R 2, threshold 0.915212: p 0.7 -> refuse

Without ``--p`` it prints the threshold and what it means (``any p answers`` when it is <= 0).
``--json`` prints one JSON object per question.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from guard.exceptions import CLIError
from policies.options import add_c_r_option, argument, checked_c_r
from policies.validation import check_cost, check_probability


def _probability(text: str) -> float:
    return argument(check_probability, text)


def _positive(text: str) -> float:
    return argument(check_cost, text)


def register(sub: Any) -> None:
    """Add the ``decide`` subcommand to the ``utilityguard`` parser."""
    p = sub.add_parser(
        "decide", help="the cost, threshold and decision for a question (a dry run, no model)",
        description=(
            "Price a wrong answer to QUESTION with the cost model (or take --cost), compute the "
            "threshold p >= (L - C_R) / (1 + L), and with --p say whether the guard would "
            "deliver an answer that is correct with probability p. No model is asked."))
    p.add_argument("questions", nargs="+", metavar="QUESTION", help="the question(s)")
    p.add_argument("--p", type=_probability, default=None,
                   help="probability that the answer would be correct (omit: threshold only)")
    add_c_r_option(p)
    p.add_argument("--cost", type=_positive, default=None,
                   help="the cost L of a wrong answer, instead of the cost model's prediction")
    p.add_argument("--alpha", type=_probability, default=1.0,
                   help="P(answerable); 1 (default) is the paper's rule")
    p.add_argument("--cost-model", type=Path, default=None,
                   help="cost model directory (default: the shipped model)")
    p.add_argument("--trust", action="store_true",
                   help="load a cost model whose integrity check fails (your own files only)")
    p.add_argument("--json", action="store_true", help="one JSON object per question")
    p.set_defaults(func=run)


def dry_run(question: str, args: argparse.Namespace, predict: Any) -> dict[str, Any]:
    """The dry-run decision for one question (``predict(question) -> L`` when no --cost)."""
    from policies import answer_threshold, should_answer

    cost = args.cost if args.cost is not None else predict(question)
    threshold = float(answer_threshold(cost, args.c_r, alpha=args.alpha))
    decision = None
    if args.p is not None:
        answers = bool(should_answer(args.p, cost, args.c_r, alpha=args.alpha))
        decision = "answer" if answers else "refuse"
    return {"question": question, "cost": round(cost, 6),
            "cost_source": "caller" if args.cost is not None else "model", "c_r": args.c_r,
            "alpha": args.alpha, "threshold": round(threshold, 6), "p": args.p,
            "decision": decision, "dry_run": True}


def _line(row: dict[str, Any]) -> str:
    source = "given" if row["cost_source"] == "caller" else "cost model"
    alpha = f", alpha {row['alpha']:g}" if row["alpha"] != 1.0 else ""
    head = (f"cost {row['cost']:g} ({source}), C_R {row['c_r']:g}{alpha}, "
            f"threshold {row['threshold']:g}")
    if row["decision"] is not None:
        return f"{head}: p {row['p']:g} -> {row['decision']}"
    if row["threshold"] <= 0.0:
        return f"{head}: any p answers"
    if row["threshold"] > 1.0:
        return f"{head}: no p answers"
    return f"{head}: answer iff p >= {row['threshold']:g}"


def run(args: argparse.Namespace) -> int:
    """Print the dry-run decision of every question."""
    from guard.core import Guard

    checked_c_r(args.c_r)
    model = None
    if args.cost is None and args.cost_model is not None:
        from cost_models import load_model

        model = load_model(args.cost_model, trust=args.trust)  # errors: one line (ValueError)
    guard = Guard(model, c_r=args.c_r)
    for question in args.questions:
        if not question.strip():
            raise CLIError("QUESTION must not be empty")
        row = dry_run(question, args, guard.predict_cost)
        if args.json:
            print(json.dumps(row))
        else:
            print(_line(row) if len(args.questions) == 1 else f"{question}: {_line(row)}")
    return 0
