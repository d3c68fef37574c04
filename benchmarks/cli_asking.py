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
    d = s.add_parser(
        "doubt", help="fit the detector's doubt model and choose its rule on the training split",
        description=("Fit the request detector's doubt model (a cost model that has also seen "
                     "the training split's text that asks for nothing, at the floor) and "
                     "choose the weight, `lone` and `lone_price` of the rule that reads it, out "
                     "of fold on the training split alone (about 3 minutes on 2 cores); write "
                     "doubt_model.npz/.json and DOUBT.md into the detector's folder --out and "
                     "the two thresholds into its sidecar, which turns the rule on for a guard "
                     "that loads that folder. Off by default: it lets some terse costly "
                     "statements through (docs/security.md)."))
    d.add_argument("--out", type=Path, required=True,
                   help="a detector's folder, e.g. a copy of the shipped one "
                        "(cost_models/data/request_detector): the rule is on for a guard "
                        "that loads it (--request-detector); off in the shipped one")
    d.add_argument("--weights", default="0.3,1",
                   help="sample weights of the floor's rows to try, comma-separated (0.3,1)")
    d.set_defaults(func=run_doubt)
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


def run_doubt(args: argparse.Namespace) -> int:
    import numpy as np

    from benchmarks.asking import (
        CORPUS,
        PARAPHRASES,
        oof_lookup,
        out_of_fold,
        training_units,
    )
    from benchmarks.asking_doubt import choose_doubt, doubt_card, fit_doubt, floor_sentences
    from benchmarks.progress import phases
    from cost_models.persistence import save_artifact, sha256_file, versions
    from cost_models.request_detector import ARTIFACT, DOUBT, LONE_AT, load_detector
    from guard.asking import Thresholds

    try:
        weights = [float(w) for w in args.weights.split(",") if w.strip()]
    except ValueError:
        raise CLIError(f"--weights: numbers separated by commas, got {args.weights!r}") from None
    if not weights or any(not w > 0 for w in weights):
        raise CLIError("--weights: at least one weight, each > 0")
    out = args.out
    detector = load_detector(out)
    own = Thresholds(*detector.thresholds[:LONE_AT])
    corpus, items = _data()
    paraphrases = [json.loads(x) for x in PARAPHRASES.read_text(encoding="utf-8").splitlines()
                   if x.strip()]
    with phases("asking doubt", 3 + len(weights) * 10) as step:
        step("out-of-fold P(asks)")
        units = training_units(corpus, items)
        lookup = oof_lookup(units, *out_of_fold(units, float(detector.C), 5))
        choice = choose_doubt(corpus, items, paraphrases, lookup, own, weights=weights,
                              progress=step)
        step("final fit")
        model = fit_doubt(corpus, items, paraphrases, choice.weight or weights[0])
    command = " ".join(["utilityguard", "asking", "doubt", *sys.argv[3:]])
    floor_cost = float(np.percentile([float(it["cost"]) for it in items], 5.0))
    meta = {"items": len(items), "paraphrases": len(paraphrases),
            "floor_rows": len(floor_sentences(corpus)), "floor_cost": floor_cost,
            "weight": choice.weight, "lone": choice.lone, "lone_price": choice.lone_price,
            "residual_var": float(model.residual_var_), "corpus_sha256": sha256_file(CORPUS),
            "command": command, "versions": ", ".join(f"{k} {v}" for k, v in versions().items())}
    save_artifact(model, out, name=DOUBT, metadata={"doubt": meta, "grid": choice.grid})
    side = out / f"{ARTIFACT}.json"
    data = json.loads(side.read_text(encoding="utf-8"))
    th = list(data["params"]["thresholds"])[:LONE_AT]
    data["params"]["thresholds"] = th + ([choice.lone, choice.lone_price]
                                         if choice.lone > 0 else [])
    side.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (out / "DOUBT.md").write_text(doubt_card(choice, meta), encoding="utf-8")
    print(f"wrote {out}: weight {choice.weight}, lone {choice.lone}, lone_price "
          f"{choice.lone_price}; training non-request texts below the 25th percentile "
          f"{choice.without['non_request_below']:.1%} without the rule, "
          f"{choice.non_request_below:.1%} with it (out of fold)")
    return 0


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
