"""``utilityguard fit``: fit a policy (cost model, calibrator, answerability model, C_R).

From graded responses (``--data ITEMS --responses REPLIES``): the bench's cross-fitted
evaluation first (the bench's ``guard`` row is a policy fitted per training fold with the same
:func:`guard.policy.fit_policy`), then one policy fitted on all the data, written to ``--out``
with its card. From an audit log (``--from-audit DB``): the labels sent to
``POST /v1/feedback`` (:mod:`guard.policy.from_audit`).
"""

from __future__ import annotations

import argparse
import math
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guard.exceptions import CLIError
from utilityguard_base.options import add_c_r_option, checked_c_r

if TYPE_CHECKING:  # heavy imports (scikit-learn) only when the command runs
    from rich.console import Console

    from benchmarks.bench.data import BenchData
    from benchmarks.bench.result import BenchResult
    from cost_models.datasets import DatasetItem
    from guard.policy import Policy

#: What the card keeps of each bench policy row.
CARD_BASELINES = ("guard", "guard_paper_rule", "model", "model_confidence",
                  "confidence_threshold", "always_refuse", "oracle")
CARD_METRICS = ("utility_auc", "mean_utility", "answer_rate", "ans_acc", "ref_acc", "ece10")



def add_scale_options(p: argparse.ArgumentParser) -> None:
    """``--alpha-scale`` and ``--cost-scale``, the same for ``fit`` and ``bench``."""
    p.add_argument("--alpha-scale", action="store_true",
                   help="recalibrate the answerability classifier's alpha for unseen kinds of "
                        "questions: Platt scaling of its out-of-fold predictions, whole "
                        "sources held out (guard.alpha_scale; five extra classifier fits)")
    p.add_argument("--cost-scale", action="store_true",
                   help="map the guard's price (the costliest segment's E[L]) to E[L | price] "
                        "with a strictly increasing scale fitted on out-of-fold prices of the "
                        "training questions (guard.cost_scale; five extra cost-model refits "
                        "per fit)")

def register(sub: Any) -> None:
    p = sub.add_parser(
        "fit", help="fit a decision policy (calibrator, answerability, cost) for the guard",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Fit the policy Guard.from_policy / serve --policy load: a calibrator for the\n"
            "confidence signal, an answerability classifier, the cost model and a default\n"
            "C_R. Prints the cross-fitted evaluation (the bench's protocol: each item decided\n"
            "by a policy fitted without it), then fits on all data and writes DIR with its\n"
            "card (policy.json + README.md).\n\n"
            "--from-audit DB refits from your own traffic instead: the calibrator from the\n"
            "'correct' labels sent to POST /v1/feedback, and the answerability and cost models\n"
            "from 'answerable' / 'cost' labels when the proxy recorded the query text\n"
            "(serve --audit-queries), blended with the seed data (--data), never labels\n"
            "alone. With too few labels it refuses and says how many. No client steers it:\n"
            "labels a client sent on its own decisions count only with --accept-self-labels,\n"
            "a refit whose labels come mostly from one key is refused (--max-key-share), and\n"
            "one that answers costly questions its base refuses is not written\n"
            "(--accept-drift): the shipped reference questions, your own --drift-set, the\n"
            "audit log's costly questions and the labelled questions themselves."),
        epilog="example: utilityguard fit --data seed --out my-policy --c-r 2 --group-folds",
    )
    p.add_argument("--data", default="seed",
                   help="dataset with costs, or 'seed' (default); with --from-audit, the data "
                        "the labels are blended with")
    p.add_argument("--responses", type=Path, action="append", default=None,
                   help="graded response records (default with --data seed: the shipped "
                        "SmolLM2 responses); repeat it to pool several models' replies: the "
                        "calibrator is fitted on all of them (how the shipped 'default' policy "
                        "is made), the evaluation is leave-one-model-out")
    p.add_argument("--multi-signal", default=None, metavar="SIGNALS",
                   help="comma list of signals: a multi-signal calibrator on them and the "
                        "replies' text features instead of a single-signal one")
    add_scale_options(p)
    p.add_argument("--from-audit", default=None, metavar="PATH_OR_URL",
                   help="refit from the decisions labelled through POST /v1/feedback in this "
                        "audit log, a SQLite path or a postgresql:// URL (instead of --data / "
                        "--responses)")
    p.add_argument("--base", default=None, metavar="PATH_OR_NAME",
                   help="--from-audit: take the parts without enough labels from this policy "
                        "(default: alpha = 1 and the shipped cost model)")
    p.add_argument("--min-labels", type=int, default=50,
                   help="--from-audit: labels each refit part needs, at least (50)")
    p.add_argument("--accept-drift", action="store_true",
                   help="--from-audit: write the policy even when it answers costly questions "
                        "its base refuses (they are printed and recorded in the card)")
    p.add_argument("--accept-self-labels", action="store_true",
                   help="--from-audit: also learn from labels a client sent on its own "
                        "decisions (off: a client grading its own answers is left out; every "
                        "label of a proxy without keys is one)")
    p.add_argument("--max-key-share", type=float, default=0.5, metavar="S",
                   help="--from-audit: refuse a refit when more than this share of its labels "
                        "comes from one labeller key (default 0.5; 1 for a single trusted "
                        "labelling key)")
    p.add_argument("--drift-set", type=Path, action="append", default=None, metavar="FILE",
                   help="--from-audit: also check drift on these costly questions (JSONL with "
                        "a 'question' field, or one question a line); keep it private, unlike "
                        "the shipped reference set (repeatable)")
    p.add_argument("--out", type=Path, required=True, help="the policy directory to write")
    p.add_argument("--name", default=None, help="the policy's name (default: --out's name)")
    add_c_r_option(p, "default C_R of the policy")
    p.add_argument("--signal", default=None, help="confidence signal (default: logprob_mean)")
    p.add_argument("--cost-model", type=Path, default=None,
                   help="cost model dir (default: the shipped one, referenced by sha256)")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (5)")
    p.add_argument("--group-folds", action="store_true",
                   help="evaluate on folds that hold out whole sources (unseen kinds of "
                        "questions)")
    p.add_argument("--bootstrap", type=int, default=200,
                   help="bootstrap resamples of the evaluation (200)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument("--trust", action="store_true", help="skip artifact integrity checks")
    p.set_defaults(func=run)


def _items(data: str) -> list[DatasetItem]:
    from cost_models.datasets import load_seed, load_utilitybench

    return load_seed() if data == "seed" else load_utilitybench(data)


def _plain(v: Any) -> Any:
    """``v`` with NaN as ``None`` (policy.json is strict JSON)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def evaluation_card(results: BenchResult, group_folds: bool) -> dict[str, Any]:
    """The cross-fitted figures a policy card keeps (NaN written as null)."""
    s = results.settings
    card: dict[str, Any] = _plain({
        "protocol": (f"{s.folds}-fold cross-fitting"
                     + (", whole sources held out per fold" if group_folds else "")
                     + f", seed {s.seed}; {s.bootstrap} bootstrap resamples"),
        "c_r": results.c_r, "n": results.n,
        "policies": {name: {k: results.policies[name].get(k) for k in
                            (*CARD_METRICS, "utility_auc_ci", "mean_utility_ci")}
                     for name in CARD_BASELINES if name in results.policies},
        "calibration": results.calibration,
        "answerability_auc": s.answerability_auc,
    })
    return card


def _training_data(source: str, data: BenchData) -> dict[str, Any]:
    """The card's training-data fields: where the items came from, how many, their hash."""
    from cost_models.persistence import sha256_rows

    rows = zip(data.ids, data.questions, data.answerable, data.cost, strict=True)
    return {"data": "the shipped seed set (cost_models/data/seed)" if source == "seed"
            else shown(Path(source)) if Path(source).exists() else str(source), "n": data.n,
            "data_sha256": sha256_rows([(i, q, bool(a), float(c)) for i, q, a, c in rows])}


def fit_from_data(args: argparse.Namespace, console: Console) -> tuple[Policy, dict[str, Any]]:
    from benchmarks.bench.crossfit import choose_signal, training_set
    from benchmarks.bench.data import load_bench, shipped_responses
    from benchmarks.bench.report import print_table
    from benchmarks.bench.run import run_bench
    from benchmarks.progress import BENCH_PHASES, phases
    from cost_models.model_io import default_model_dir, load_model
    from guard.policy import fit_policy

    items = _items(args.data)
    if args.responses and len(args.responses) > 1:
        return fit_pooled(args, items, console)
    responses = args.responses[0] if args.responses else (
        shipped_responses() if args.data == "seed" else None)
    if responses is None:
        raise CLIError("--responses is required with --data (the shipped responses are for "
                       "the seed set)")
    with phases("fit: cross-fitted evaluation", BENCH_PHASES) as progress:
        results = run_bench(items, responses, c_r=args.c_r, cost_model=args.cost_model,
                            signal=args.signal, folds=args.folds, n_boot=args.bootstrap,
                            multi=_multi(args), cost_scale=args.cost_scale,
                            alpha_scale=args.alpha_scale,
                            seed=args.seed, trust=args.trust, group_folds=args.group_folds,
                            progress=progress)
    print_table(results, console)
    cal = results.calibration
    if cal.get("n"):
        console.print(f"calibration of {cal['signal']} (out of fold, {cal['n']} answered): "
                      f"ECE-10 {cal['ece_before']:.4f} -> {cal['ece_after']:.4f}, "
                      f"Brier {cal['brier_before']:.4f} -> {cal['brier_after']:.4f}")
    data = load_bench(items, responses)
    source = {it.id: it.source for it in items}
    multi = _multi(args)
    signal = choose_signal(data, args.signal, among=multi)
    model_dir = args.cost_model or default_model_dir()
    model = load_model(model_dir, trust=args.trust)
    shipped = args.cost_model is None or Path(args.cost_model).resolve() == \
        default_model_dir().resolve()
    ref = {"source": "shipped-default"} if shipped else None
    name = args.name or args.out.resolve().name
    with phases("fit", 1) as progress:
        progress("fitting on all data")
        policy = fit_policy(training_set(data, signal, [source[i] for i in data.ids]),
                            signal=signal, c_r=args.c_r, name=name, cost_model=model,
                            cost_model_ref=ref, multi=multi, cost_scale=args.cost_scale,
                            alpha_scale=args.alpha_scale)
    card = {
        "training": {
            **_training_data(args.data, data),
            "responses": "the shipped SmolLM2-135M-Instruct responses "
                         "(benchmarks/data/smollm2/responses.jsonl)"
            if args.responses is None else ", ".join(shown(f) for f in args.responses),
            "responses_sha256": data.responses_sha256, "model": data.model,
        },
        "evaluation": evaluation_card(results, args.group_folds),
    }
    return policy, card


def _multi(args: argparse.Namespace) -> list[str] | None:
    from guard.decision_records import REPLY_SIGNALS

    spec = getattr(args, "multi_signal", None)
    if not spec:
        return None
    out = [x.strip() for x in spec.split(",") if x.strip()]
    bad = [x for x in out if x not in REPLY_SIGNALS]
    if bad:
        raise CLIError(f"--multi-signal: unknown {', '.join(bad)}; allowed: "
                       f"{', '.join(REPLY_SIGNALS)}")
    return out


def fit_pooled(args: argparse.Namespace, items: list[DatasetItem], console: Console
               ) -> tuple[Policy, dict[str, Any]]:
    """Several models' responses: the calibrator pooled over all their replies, the cost and
    answerability models question-only; evaluated leave-one-model-out (each model scored
    with a calibrator fitted on the other models' replies only, folds of the items)."""
    from benchmarks.bench.crossfit import choose_signal, pooled_rows, training_set
    from benchmarks.bench.data import load_bench
    from benchmarks.bench.unseen import leave_one_model_out
    from benchmarks.progress import BENCH_PHASES, phases
    from cost_models.model_io import default_model_dir, load_model
    from guard.policy import fit_policy
    from guard.policy.fit import fit_calibrator, fit_multi_calibrator

    if args.cost_model is not None:
        raise CLIError("a pooled policy uses the shipped cost model (question-only); drop "
                       "--cost-model")
    multi = _multi(args)
    files: list[Path] = args.responses
    with phases("fit: leave-one-model-out evaluation",
                2 * len(files) * BENCH_PHASES) as progress:  # own and others', per model
        pairs = leave_one_model_out(items, files, c_r=args.c_r, signal=args.signal,
                                    multi=multi, folds=args.folds,
                                    group_folds=args.group_folds, n_boot=args.bootstrap,
                                    seed=args.seed, cost_scale=args.cost_scale,
                                    alpha_scale=args.alpha_scale, progress=progress)
    data = [load_bench(items, f) for f in files]
    signal = choose_signal(data[0], args.signal, among=multi)
    source = {it.id: it.source for it in items}
    first = data[0]
    with phases("fit", 1) as progress:
        progress("fitting on all data")
        rows = pooled_rows(data, set(first.ids), signal)
        cal = fit_multi_calibrator(rows, multi) if multi else fit_calibrator(rows, signal)
        signal = cal.signal  # a multi-signal calibrator's first signal
        policy = fit_policy(training_set(first, signal, [source[i] for i in first.ids]),
                            signal=signal, c_r=args.c_r,
                            name=args.name or args.out.resolve().name,
                            cost_model=load_model(default_model_dir(), trust=args.trust),
                            cost_model_ref={"source": "shipped-default"}, calibrator=cal,
                            cost_scale=args.cost_scale, alpha_scale=args.alpha_scale)
    evaluation = {}
    for own, left in pairs:
        model = str(own.responses.model)
        evaluation[model] = {"own_policy": evaluation_card(own, args.group_folds),
                             "left_out": evaluation_card(left, args.group_folds)}
        for tag, r in (("own policy", own), ("other models' calibrator", left)):
            sh = r.paired["oracle_share"]
            evaluation[model][tag.replace(" ", "_").replace("'", "") + "_share"] = sh
            console.print(f"{model}, {tag}: guard mean utility "
                          f"{r.policies['guard']['mean_utility']:.3f}, always refuse "
                          f"{r.policies['always_refuse']['mean_utility']:.3f}, share of the "
                          f"oracle's gain {sh['share']:.3f}")
    card = {
        "training": {
            **_training_data(args.data, first),
            "responses": ", ".join(shown(f) for f in files),
            "responses_sha256": {str(d.model): d.responses_sha256 for d in data},
            "model": "pooled: " + ", ".join(str(d.model) for d in data),
            "parts": (f"cost model: the shipped default (question-only); answerability: "
                      f"fitted on the {first.n} questions (question-only); calibrator of "
                      f"{', '.join(multi) if multi else signal}: fitted on every listed "
                      f"model's answered replies pooled ({rows.n} rows)"),
        },
        "evaluation": {"protocol": "leave one model out: per model, "
                       f"{args.folds}-fold cross-fitting"
                       + (" (whole sources held out)" if args.group_folds else "")
                       + ", once with its own calibrator and once with a calibrator fitted "
                       "on the other models' replies only; seed "
                       f"{args.seed}, {args.bootstrap} bootstrap resamples",
                       "models": evaluation},
    }
    return policy, card


def shown(f: Path) -> str:
    from benchmarks.bench.result import shown_path

    return shown_path(str(f.resolve()))


def shown_words(argv: list[str]) -> list[str]:
    """The command's words as a card shows them: a database URL's password masked
    (:func:`guard.policy.from_audit.shown`), an absolute path (``/tmp/x/r.jsonl``,
    ``--out=/tmp/x/p``) as :func:`benchmarks.bench.result.shown_path` shows it (the card is
    shared; the fitting machine's directories are not its business)."""
    from benchmarks.bench.result import shown_path
    from guard.policy.from_audit import shown as masked

    out = []
    for word in argv:
        flag, eq, value = word.partition("=") if word.startswith("--") else ("", "", word)
        value = shown_path(value) if Path(value).is_absolute() else masked(value)
        out.append(f"{flag}{eq}{value}")
    return out


def _fit_from_audit(args: argparse.Namespace, console: Console
                    ) -> tuple[Policy, dict[str, Any]]:
    from guard.policy import load_policy
    from guard.policy.from_audit import fit_from_audit

    if args.min_labels < 6:
        raise CLIError("--min-labels must be >= 6")
    if not 0.0 < args.max_key_share <= 1.0:
        raise CLIError(f"--max-key-share must be in (0, 1], got {args.max_key_share}")
    base = load_policy(args.base, trust=args.trust) if args.base else None
    policy, card = fit_from_audit(args.from_audit, c_r=args.c_r, signal=args.signal,
                                  name=args.name or args.out.resolve().name, base=base,
                                  min_labels=args.min_labels,
                                  accept_self_labels=args.accept_self_labels,
                                  max_key_share=args.max_key_share, blend=_items(args.data))
    cal = card["evaluation"]["calibration"]
    console.print(f"calibration of {cal['signal']} (out of fold, {cal['n']} labelled answers): "
                  f"ECE-10 {cal['ece_before']:.4f} -> {cal['ece_after']:.4f}, "
                  f"Brier {cal['brier_before']:.4f} -> {cal['brier_after']:.4f}")
    for part, how in card["training"]["parts"].items():
        console.print(f"{part}: {how}")
    prov = card["training"]["label_provenance"]
    console.print(f"labels by key: {prov['by_key']} ({prov['by_deciding_key']} from the key "
                  f"that made the decision, {prov['by_other_keys']} from labeller keys; "
                  f"{prov['left_out']} left out)")
    card["training"]["drift_accepted"] = _check_drift(args, policy, base, console)
    return policy, card


def drift_sets(args: argparse.Namespace, base: Any) -> dict[str, list[str]]:
    """The questions a refit is compared with its base on, by set (see guard.policy.drift)."""
    from guard.policy.drift import costly, reference_questions
    from guard.policy.from_audit import shown, trusted_labels
    from guard.proxy.audit import DECISIONS, read_rows
    from guard.proxy.feedback import labelled_decisions
    from utilityguard_base.jsonl import read_jsonl

    sets = {"high-cost reference questions": reference_questions()}
    for path in args.drift_set or []:
        if path.suffix in (".jsonl", ".json"):
            qs = [str(row["question"]) for row in read_jsonl(path) if row.get("question")]
        else:
            qs = [line.strip() for line in path.read_text().splitlines() if line.strip()]
        sets[f"questions of {path}"] = qs
    queries = [str(r["query"]) for r in read_rows(args.from_audit, DECISIONS) if r["query"]]
    sets["costly questions of the audit log"] = costly(base, queries)
    labelled = trusted_labels(labelled_decisions(args.from_audit),
                              accept_self_labels=args.accept_self_labels,
                              max_key_share=args.max_key_share, db=shown(args.from_audit))
    sets["labelled questions"] = costly(base, [str(r["query"]) for r in labelled
                                              if r["query"]])
    return sets


def _check_drift(args: argparse.Namespace, policy: Any, base: Any, console: Console
                 ) -> list[str]:
    """Refuse a refit that answers costly questions its base refuses (unless
    ``--accept-drift``, which prints them); the questions accepted so."""
    from guard.core import Guard
    from guard.policy.drift import drift_report

    base_guard = Guard.from_policy(base) if base is not None else \
        Guard(c_r=args.c_r, signal=policy.signal)
    sets = drift_sets(args, base_guard)
    report = drift_report(Guard.from_policy(policy), base_guard, policy.signal, sets)
    checked = ", ".join(f"{len(report[n])} of the {len(qs)} {n}" for n, qs in sets.items() if qs)
    drift = [q for qs in report.values() for q in qs]
    if not drift:
        console.print(f"drift: none ({checked}) is answered where the base refuses it")
        return []
    listed = "\n".join(f"  - [{n}] {q}" for n, qs in report.items() for q in qs)
    if not args.accept_drift:
        raise CLIError(f"the refit policy answers questions that its base refuses (forged or "
                       f"mistaken labels?): {checked}; not written. Pass --accept-drift to "
                       f"write it anyway.\n{listed}")
    console.print(f"drift accepted (--accept-drift): the refit answers questions its base "
                  f"refuses: {checked}:\n{listed}")
    return list(dict.fromkeys(drift))


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from guard.policy import save_policy

    checked_c_r(args.c_r)
    if args.folds < 2 or args.bootstrap < 0:
        raise CLIError("--folds must be >= 2 and --bootstrap >= 0")
    console = Console(stderr=False, width=None if Console().is_terminal else 140)
    if args.from_audit is not None:
        policy, card = _fit_from_audit(args, console)
    else:
        policy, card = fit_from_data(args, console)
    # the command as run: a database URL's password masked, an absolute path as shown_path
    # shows it (the card is shared with the policy)
    card["command"] = "utilityguard " + shlex.join(
        shown_words(getattr(args, "argv", None) or ["fit"]))
    path = save_policy(policy, args.out, card=card)
    console.print(f"wrote {path.parent} (policy {policy.label}; "
                  f"Guard.from_policy({str(path.parent)!r}), serve --policy {path.parent})")
    return 0
