"""``utilityguard asking``: train and measure the request detector (what a request asks)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from guard.exceptions import CLIError

#: Where ``asking train`` writes by default: the shipped detector's folder.
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "cost_models" / "data" / "request_detector"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "asking", help="train or measure the request detector (what a request asks)",
        description=(
            "The guard prices only the text of a request that asks for something: a persona, "
            "rules, greetings, thanks and assistant boilerplate add nothing (docs/concepts.md). "
            "`train` fits the request detector on the training split of the corpus "
            "cost_models/data/asking and the seed questions and chooses its thresholds out of "
            "fold on that split alone; `eval` measures the guard on the held-out split."))
    s = p.add_subparsers(dest="asking_command", metavar="{train,eval}")
    s.required = True
    t = s.add_parser("train", help="fit the detector and choose its thresholds (about a minute)")
    t.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help="the folder to write (default: the shipped detector's)")
    t.add_argument("--C", type=float, default=10.0,
                   help="inverse regularization of the logistic regression (10)")
    t.add_argument("--folds", type=int, default=5, help="folds of the out-of-fold fit (5)")
    t.set_defaults(func=run_train)
    e = s.add_parser("eval", help="the shipped guard on the held-out split")
    e.add_argument("--split", choices=("test", "fresh", "train"), default="test",
                   help="the corpus split to measure (test: held out, never fitted or tuned on; "
                        "fresh: the fifth held-out split, fixed 2026-12-03 22:30 UTC, measured "
                        "once per rule it tests: the corpus card)")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.set_defaults(func=run_eval)


def _data() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from benchmarks.asking import read_corpus
    from cost_models.datasets import seed_path

    items = [json.loads(line) for line in Path(seed_path()).read_text(
        encoding="utf-8").splitlines() if line.strip()]
    return read_corpus(), items


def run_train(args: argparse.Namespace) -> int:
    from benchmarks.asking import CORPUS, train_detector
    from benchmarks.progress import phases
    from cost_models.persistence import sha256_file
    from cost_models.request_detector import save_detector

    if args.C <= 0 or args.folds < 2:
        raise CLIError("--C must be > 0 and --folds >= 2")
    corpus, items = _data()
    with phases("asking train", 4) as step:
        model, report = train_detector(corpus, items, C=args.C, folds=args.folds,
                                       progress=step)
    command = " ".join(["utilityguard", "asking", "train", *sys.argv[3:]])
    meta = {**report, "corpus_sha256": sha256_file(CORPUS), "command": command}
    save_detector(model, args.out, meta)
    from benchmarks.asking_card import detector_card

    (args.out / "README.md").write_text(detector_card(meta), encoding="utf-8")
    print(f"wrote {args.out}: thresholds {report['thresholds']}, out-of-fold AUC "
          f"{report['oof_auc']:.3f}, training non-request texts below the 25th percentile "
          f"{report['train_non_request_below_p25']:.1%}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from benchmarks.asking import evaluate
    from guard import Guard

    corpus, items = _data()
    result = evaluate(Guard(), corpus, items, args.split)
    if args.json:
        print(json.dumps(result.__dict__, indent=2))
    else:
        print(f"split: {args.split}")
        print("\n".join(result.lines()))
    return 0
