"""``utilityguard cost train|eval|predict``: consequence-cost models from the command line."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cost_models.datasets import DatasetItem, load_seed, load_utilitybench
from cost_models.kinds import KINDS
from cost_models.persistence import sha256_rows
from policies import answer_threshold
from utilityguard_base.exceptions import InvalidValueError
from utilityguard_base.options import add_c_r_option


def register(sub: Any) -> None:
    p = sub.add_parser("cost", help="train, evaluate and query consequence-cost models")
    s = p.add_subparsers(dest="step", metavar="STEP", required=True)

    def data_args(q: argparse.ArgumentParser) -> None:
        q.add_argument("--data", required=True,
                       help="'seed', a .parquet/.jsonl/.csv path, or hf:leiqf/UtilityBench")
        q.add_argument("--text-col", help="column holding the question text")
        q.add_argument("--cost-col", help="column holding the cost L")
        q.add_argument("--answerable-col", help="column holding answerability (if named oddly)")

    t = s.add_parser("train", help="select by grouped CV and train a cost model",
                     description="Train a text -> E[L] regressor. Hyperparameters are chosen by "
                                 "cross-validation grouped by --group-col (unseen sources), and "
                                 "the model card reports the CV metrics. Without that column, "
                                 "or with fewer distinct values than --folds, the folds are "
                                 "shuffled KFold instead: the command prints so and the card "
                                 "records it.")
    data_args(t)
    t.add_argument("--group-col", default="source", help="CV groups (default: source)")
    t.add_argument("--kind", default="affix-ridge", choices=KINDS, help="model kind")
    t.add_argument("--compare", default="char-ridge",
                   help="comma list of other kinds to score for the card ('' for none)")
    t.add_argument("--folds", type=int, default=5, help="CV folds (5)")
    t.add_argument("--paraphrases", type=Path, default=None,
                   help="JSONL of other phrasings of training questions ({\"text\", \"of\": "
                        "item id}), trained on at their items' costs and never scored; in a CV "
                        "fold only with their item (e.g. cost_models/data/asking/"
                        "paraphrases.jsonl: requests phrased as instructions)")
    add_c_r_option(t, "C_R for decision agreement")
    t.add_argument("--out", type=Path, required=True, help="model directory to write")
    t.set_defaults(func=run_train)

    e = s.add_parser("eval", help="evaluate a model on labelled data")
    data_args(e)
    e.add_argument("--model", type=Path, default=None, help="model directory (default: shipped)")
    add_c_r_option(e, "C_R for decision agreement")
    e.add_argument("--trust", action="store_true", help="skip the artifact integrity check")
    e.set_defaults(func=run_eval)

    q = s.add_parser("predict", help="predict E[L] for questions (JSON lines)")
    q.add_argument("questions", nargs="*", help="questions (default: one per line on stdin)")
    q.add_argument("--model", type=Path, default=None, help="model directory (default: shipped)")
    add_c_r_option(q, "C_R for the answer threshold")
    q.add_argument("--level", type=float, default=0.8, help="interval level (0.8)")
    q.add_argument("--trust", action="store_true", help="skip the artifact integrity check")
    q.set_defaults(func=run_predict)


def _columns(args: argparse.Namespace) -> dict[str, str] | None:
    cols = {k: v for k, v in (("question", args.text_col), ("cost", args.cost_col),
                              ("answerable", args.answerable_col)) if v}
    return cols or None


def _load(args: argparse.Namespace) -> list[DatasetItem]:
    if args.data == "seed":
        return load_seed()
    cols = _columns(args)
    if cols and "answerable" not in cols:
        # answerability is not needed to train a cost model: let it default when absent
        try:
            return load_utilitybench(args.data, cols)
        except ValueError as exc:
            # only a layout without any answerability column falls back (not a bad value)
            if "cannot map required field(s) answerable" not in str(exc):
                raise
        from cost_models.datasets import items_from_rows, read_rows

        rows = [{**r, "_answerable": True} for r in read_rows(args.data)]
        return items_from_rows(rows, origin=args.data,
                               columns={**cols, "answerable": "_answerable"})
    return load_utilitybench(args.data, cols)


def _paraphrases(path: Path | None, ids: list[str]) -> Any:
    """The paraphrases in ``path`` as :class:`~cost_models.regressor.Paraphrases` over the
    training items ``ids`` (an id not among them is an error naming it)."""
    from cost_models.regressor import Paraphrases
    from utilityguard_base.jsonl import read_jsonl

    if path is None:
        return Paraphrases([], [])
    index = {i: k for k, i in enumerate(ids)}
    texts, of = [], []
    for row in read_jsonl(path):
        if not isinstance(row.get("text"), str) or row.get("of") not in index:
            raise InvalidValueError(f"{path}: a paraphrase needs a 'text' and the id of a "
                                    f"training item in 'of'; got {str(row)[:120]}")
        texts.append(row["text"])
        of.append(index[row["of"]])
    return Paraphrases(texts, of)


def run_train(args: argparse.Namespace) -> int:
    # lazy: scikit-learn loads only when a command needs it, so --help stays light
    from cost_models.model_io import save_model
    from cost_models.training import RIDGE_GRID, select_and_train

    items = _load(args)
    if len(items) < 4 * args.folds:
        raise InvalidValueError(f"{args.data}: {len(items)} items are too few to train with "
                         f"{args.folds}-fold CV")
    texts = [it.question for it in items]
    cost = np.array([it.cost for it in items], dtype=np.float64)
    extra = [it.model_dump() for it in items]
    if not any(args.group_col in d for d in extra):  # not silently grouped by source instead
        raise InvalidValueError(f"--group-col {args.group_col}: no such field (a mapped column "
                                f"goes by its contract name); fields: {', '.join(extra[0])}")
    # a missing value is missing, not silently another field; the contract's default source
    # "unknown" means the data had no source column
    missing = {None, ""} | ({"unknown"} if args.group_col == "source" else set())
    values = [d.get(args.group_col) for d in extra]
    groups: list[str] | None = [str(v) if v not in missing else "(missing)" for v in values]
    no_column = all(v in missing for v in values)
    if no_column:
        groups = None
    compare = [k.strip() for k in args.compare.split(",") if k.strip()]
    bad = [k for k in compare if k not in KINDS]
    if bad:
        raise InvalidValueError(
            f"--compare: unknown kind(s) {', '.join(bad)}; allowed: {', '.join(KINDS)}"
        )
    ids_of = [it.id for it in items]
    paraphrases = _paraphrases(args.paraphrases, ids_of)
    n_ridge = len(RIDGE_GRID) if args.kind.endswith("ridge") else 1
    total = args.folds * (n_ridge + 1 + len([k for k in compare if k != args.kind]))
    from utilityguard_base.progress import progress_bar

    with progress_bar("train (CV folds)") as bar:
        task = bar.add_task("cv", total=total)
        model, report = select_and_train(texts, cost, groups, kind=args.kind, compare=compare,
                                         cv=args.folds, c_r=args.c_r, group_name=args.group_col,
                                         on_fold=lambda: bar.advance(task),
                                         paraphrases=paraphrases)
    if no_column:
        report.scheme = (f"shuffled {args.folds}-fold KFold, NOT grouped: the data has no "
                         f"{args.group_col!r} column")
    meta = {
        "kind": model.kind, "ridge": model.ridge, "residual_var": model.residual_var_,
        "n_train": len(items), "data": args.data, "group_col": args.group_col,
        "cv_folds": args.folds, "c_r": args.c_r, "cv": report.to_dict(),
        # the scored rows only: the bench recognizes a model trained on its items by this
        # hash (and then refits it per fold instead of scoring it in sample)
        "training_data_sha256": sha256_rows(
            [(t, float(c)) for t, c in zip(texts, cost, strict=True)]
        ),
        "paraphrases": len(paraphrases.texts),
        "paraphrases_sha256": sha256_rows(
            [(t, ids_of[k]) for t, k in zip(paraphrases.texts, paraphrases.of, strict=True)]
        ) if paraphrases.texts else None,
        "data_description": ("the utilityguard seed set (not UtilityBench's published values)"
                             if args.data == "seed" else f"{args.data}"),
        "command": "utilityguard " + " ".join(
            shlex.quote(a) for a in getattr(args, "argv", sys.argv[1:])
        ),
    }
    save_model(model, args.out, meta)
    sel = report.selected
    print(f"cv: {report.scheme}")
    if not report.grouped:
        print(f"utilityguard: warning: cross-validation was not grouped by {args.group_col}: "
              "the scores are optimistic for unseen sources", file=sys.stderr)
    label = "grouped-CV" if report.grouped else "shuffled-CV"
    print(f"{model.kind} ridge={model.ridge}: {label} Spearman {sel.spearman:.3f}, "
          f"MAE(log L) {sel.mae_log:.3f}, decision agreement {sel.decision_agreement:.3f}, "
          f"decision regret {sel.decision_regret:.3f}")
    print(f"wrote {args.out}")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from scipy.stats import spearmanr

    from cost_models.model_io import default_model_dir, load_model
    from cost_models.training import decision_agreement, decision_regret

    model = load_model(args.model or default_model_dir(), trust=args.trust)
    items = _load(args)
    texts = [it.question for it in items]
    cost = np.array([it.cost for it in items], dtype=np.float64)
    mu = model.predict_log(texts)
    result = {
        "n": len(items), "spearman": float(spearmanr(mu, np.log(cost)).statistic),
        "mae_log": float(np.mean(np.abs(mu - np.log(cost)))),
        "decision_agreement": decision_agreement(model.predict(texts), cost, args.c_r),
        "decision_regret": decision_regret(model.predict(texts), cost, args.c_r),
        "c_r": args.c_r,
    }
    print(json.dumps(result))
    return 0


def run_predict(args: argparse.Namespace) -> int:
    from cost_models.model_io import default_model_dir, load_model

    model = load_model(args.model or default_model_dir(), trust=args.trust)
    questions = args.questions or [line.rstrip("\n") for line in sys.stdin if line.strip()]
    if not questions:
        raise InvalidValueError("give questions as arguments or one per line on stdin")
    cost = model.predict(questions)
    lo, hi = model.predict_interval(questions, level=args.level)
    thr = np.atleast_1d(answer_threshold(cost, args.c_r))
    for q, c, a, b, t in zip(questions, cost, lo, hi, thr, strict=False):
        print(json.dumps({"question": q, "cost": round(float(c), 6),
                          "interval": [round(float(a), 6), round(float(b), 6)],
                          "level": args.level, "c_r": args.c_r,
                          "threshold": round(float(t), 6)}))
    return 0
