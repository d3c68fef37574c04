"""``utilityguard bench``: UtilityAUC of a model's responses with and without the guard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from benchmarks.bench.data import shipped_response_files
from benchmarks.bench.result import BenchResult
from benchmarks.cli_fit import add_scale_options
from cost_models.datasets import load_seed, load_utilitybench
from guard.decision_records import REPLY_SIGNALS
from guard.exceptions import CLIError
from utilityguard_base.options import add_c_r_option, checked_c_r


def register(sub: Any) -> None:
    p = sub.add_parser(
        "bench", help="measure the guard's UtilityAUC gain over the raw model",
        description=(
            "Evaluate policies (raw model, model by confidence, guard, guard with true costs, "
            "best cost-blind confidence threshold, always refuse, oracle) on the same graded "
            "responses: UtilityAUC and the paper's metrics with bootstrap intervals, a C_R "
            "sweep, a per-domain breakdown; results.json, report.md and PNG plots in --out. "
            "Without arguments: the shipped seed set and every shipped model's responses "
            "(several models: one table with a row per model and policy, like the paper's "
            "Table 1)."),
    )
    p.add_argument("--data", default="seed", help="dataset with costs, or 'seed' (default)")
    p.add_argument("--responses", type=Path, action="append", default=None,
                   help="graded response records; repeat it for several models (one table, a "
                        "row per model and policy; each model's outputs in --out/<model>/). "
                        "Default: every shipped model's responses on the seed set")
    add_c_r_option(p)
    p.add_argument("--cost-model", type=Path, default=None,
                   help="cost model dir (default: shipped)")
    p.add_argument("--calibrator", type=Path, default=None,
                   help="calibrator dir (default: fit one per training fold)")
    p.add_argument("--policy", default=None, metavar="PATH_OR_NAME",
                   help="score this fitted policy (a folder from `utilityguard fit`, or a shipped "
                        "name such as smollm2) as is on --data/--responses: the guard row is "
                        "its decisions, nothing of it is refitted (how a policy does on "
                        "questions it was not fitted on); the baselines are cross-fitted as usual")
    p.add_argument("--signal", default=None, help="confidence signal (default: logprob_mean)")
    p.add_argument("--multi-signal", default=None, metavar="SIGNALS",
                   help="comma list of signals (e.g. logprob_mean,logprob_low10,ptrue): the "
                        "guard's calibrator is a multi-signal one on them and on the replies' "
                        "text features (hedges, requests for details, false-premise notes); "
                        "a signal a reply lacks is left out, not guessed")
    add_scale_options(p)
    p.add_argument("--holdout-sources", default=None, metavar="SOURCES",
                   help="unseen kinds of questions: fit a policy on the items of every other "
                        "source and score it as is on these (comma list of item sources; "
                        "'growth' = the eight growth styles); one result per --responses")
    p.add_argument("--pool", action="store_true",
                   help="with --holdout-sources: the calibrator from every given model's "
                        "replies (the default policy's recipe), not only the scored model's")
    p.add_argument("--leave-one-model-out", action="store_true",
                   help="unseen model: with several --responses (default: every shipped "
                        "model), score each model with its own cross-fitted policy and with "
                        "one whose calibrator was fitted on the other models' replies only")
    p.add_argument("--contexts", action="store_true",
                   help="as users send it: each item wrapped in held-out system prompts, "
                        "harmless turns before it and the collection's own prompt, decided by "
                        "each shipped policy (or --policy) on each model's replies; per "
                        "context: answer rate, mean utility, the share of the bare question's "
                        "gain kept, the price ratio (docs/bench.md)")
    p.add_argument("--context", action="append", default=None, metavar="NAME",
                   help="with --contexts: run only this context (its name, or a part of it "
                        "only one name holds: 'product', '2 harmless'); repeat it for "
                        "several. Default: every context")
    p.add_argument("--explain", type=int, default=0, metavar="N",
                   help="with --contexts: after the table, for each row whose decisions differ "
                        "from the bare question's, the N texts that most often set the "
                        "wrapped price there (where each sits, how many decisions it "
                        "changed; whole in contexts.json). Default 0: none")
    p.add_argument("--declared", action="store_true",
                   help="with --contexts: the contexts' system prompts and tool definitions "
                        "are declared as the application's own, as `serve --trusted-prompts` "
                        "and `--trusted-tools` do (a deployment's figure); without it they are "
                        "priced as a client's")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (5)")
    p.add_argument("--group-folds", action="store_true",
                   help="hold out whole sources in each fold: everything fitted is scored on "
                        "sources it never saw (stricter than random folds)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (1000)")
    p.add_argument("--paired-full-sweep", action="store_true",
                   help="paired differences (guard minus each baseline, paired bootstrap) at "
                        "every C_R of the sweep (65 values; slower), not only at the paper's "
                        "C_R points and --c-r")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--trust", action="store_true", help="skip artifact integrity checks")
    p.add_argument("--out", type=Path, default=Path("bench-out"), help="output dir (bench-out)")
    p.set_defaults(func=run)


def _checked_options(args: argparse.Namespace) -> list[str] | None:
    """Reject option combinations ``bench`` cannot run (a :class:`CLIError` each); the
    ``--multi-signal`` signals, or ``None``."""
    checked_c_r(args.c_r)
    if args.folds < 2 or args.bootstrap < 0:
        raise CLIError("--folds must be >= 2 and --bootstrap >= 0")
    if args.responses is None and args.data != "seed":
        raise CLIError("--responses is required with --data (the shipped responses are for "
                       "the seed set)")
    multi = ([x.strip() for x in args.multi_signal.split(",") if x.strip()]
             if args.multi_signal else None)
    bad = [x for x in multi or [] if x not in REPLY_SIGNALS]
    if bad:
        raise CLIError(f"--multi-signal: unknown {', '.join(bad)}; allowed: "
                       f"{', '.join(REPLY_SIGNALS)}")
    if args.policy and (args.cost_scale or args.alpha_scale):
        raise CLIError("--policy brings its own scales (or none): drop --cost-scale / "
                       "--alpha-scale")
    if (args.context or args.declared or args.explain) and not args.contexts:
        raise CLIError("--context, --declared and --explain go with --contexts")
    if args.explain < 0:
        raise CLIError("--explain must be >= 0")
    if args.pool and not args.holdout_sources:
        raise CLIError("--pool goes with --holdout-sources")
    if (args.holdout_sources or args.leave_one_model_out) and (
            args.policy or args.calibrator or args.cost_model):
        raise CLIError("--holdout-sources / --leave-one-model-out fit their own policies: "
                       "drop --policy / --calibrator / --cost-model")
    return multi


def run(args: argparse.Namespace) -> int:
    # lazy: the bench loads scikit-learn (and rich its console); --help does not need them
    from rich.console import Console

    from benchmarks.bench.report import (
        models_frontier_markdown,
        models_markdown,
        models_table,
        print_table,
        write_outputs,
    )
    from benchmarks.bench.run import run_bench
    from benchmarks.progress import BENCH_PHASES, phases

    multi = _checked_options(args)
    items = load_seed() if args.data == "seed" else load_utilitybench(args.data)
    files: list[Path] = args.responses or shipped_response_files()
    if args.contexts:
        return run_contexts_cli(args, items, files)
    if args.holdout_sources or args.leave_one_model_out:
        return run_unseen(args, items, files, multi)
    runs = []
    for k, responses in enumerate(files):
        name = f"bench {responses.parent.name} ({k + 1}/{len(files)})" if len(files) > 1 \
            else "bench"
        with phases(name, BENCH_PHASES) as progress:
            runs.append(run_bench(
                items, responses, c_r=args.c_r, cost_model=args.cost_model,
                calibrator=args.calibrator, signal=args.signal, folds=args.folds,
                n_boot=args.bootstrap, seed=args.seed, trust=args.trust,
                group_folds=args.group_folds, paired_full=args.paired_full_sweep,
                policy=args.policy, multi=multi, cost_scale=args.cost_scale,
                alpha_scale=args.alpha_scale,
                progress=progress))
    out_console = Console()
    if not out_console.is_terminal:  # piped or logged: rich would squeeze the table into 80
        out_console = Console(width=140)
    if len(runs) > 1:
        out_console.print(models_table(runs))
    else:
        print_table(runs[0], out_console)
    for results in runs:
        r = results.responses
        print(f"{r.model}: {results.n} items with a response "
              f"({r.missing_responses} dataset items without one; "
              f"{r.unmatched_responses} responses for ids not in the dataset, not used)")
        out = args.out if len(runs) == 1 else args.out / _slug(results, runs)
        plots = write_outputs(results, out, plots=not args.no_plots)
        if plots:
            note = f" and {len(plots)} plots"
        else:
            note = " (no plots)" if args.no_plots else " (no plots: install utilityguard[bench])"
        print(f"wrote {out / 'results.json'}, {out / 'report.md'}" + note)
    if len(runs) > 1:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "models.md").write_text(models_markdown(runs) + "\n", encoding="utf-8")
        (args.out / "frontier.md").write_text(
            "# Budget-welfare frontier at the paper's prices\n\n"
            + models_frontier_markdown(runs) + "\n", encoding="utf-8")
        if not args.no_plots:
            from benchmarks.bench.frontier import plot_frontier

            plot_frontier({_model_label_of(r): r.frontier for r in runs if r.frontier},
                          args.out / "budget_frontier.png")
        print(f"wrote {args.out / 'models.md'}, {args.out / 'frontier.md'}")
    return 0


def run_unseen(args: argparse.Namespace, items: list[Any], files: list[Path],
               multi: list[str] | None) -> int:
    """``--holdout-sources`` / ``--leave-one-model-out``: the unseen table and results."""
    import json

    from benchmarks.bench.unseen import (
        holdout_sources,
        leave_one_model_out,
        markdown,
        parse_sources,
        unseen_row,
    )
    from benchmarks.progress import BENCH_PHASES, phases

    total = (len(files) * (2 + BENCH_PHASES) if args.holdout_sources else 0) + (
        2 * len(files) * BENCH_PHASES if args.leave_one_model_out else 0)
    rows, results = [], {}
    with phases("bench (unseen)", total) as say:
        if args.holdout_sources:
            sources = parse_sources(args.holdout_sources, items)
            label = "held-out sources" + (" (pooled calibrator)" if args.pool else "")
            for r in holdout_sources(items, files, sources, c_r=args.c_r, signal=args.signal,
                                     multi=multi, pool=args.pool, n_boot=args.bootstrap,
                                     seed=args.seed, progress=say,
                                     cost_scale=args.cost_scale, alpha_scale=args.alpha_scale):
                rows.append(unseen_row(label, r))
                results[f"{r.responses.model}/holdout"] = r.to_json()
        if args.leave_one_model_out:
            for own, left in leave_one_model_out(items, files, c_r=args.c_r,
                                                  signal=args.signal, multi=multi,
                                                  folds=args.folds,
                                                  group_folds=args.group_folds,
                                                  n_boot=args.bootstrap, seed=args.seed,
                                                  progress=say, cost_scale=args.cost_scale,
                                                  alpha_scale=args.alpha_scale):
                folds = "grouped folds" if args.group_folds else "random folds"
                rows.append(unseen_row(f"own policy, {folds}", own))
                rows.append(unseen_row(f"other models' calibrator, {folds}", left))
                results[f"{own.responses.model}/own"] = own.to_json()
                results[f"{own.responses.model}/left_out"] = left.to_json()
    table = markdown(rows)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "unseen.md").write_text(table + "\n", encoding="utf-8")
    (args.out / "unseen.json").write_text(json.dumps(results, indent=1, default=str) + "\n",
                                          encoding="utf-8")
    print(f"wrote {args.out / 'unseen.md'}, {args.out / 'unseen.json'}")
    return 0


def _model_label_of(results: BenchResult) -> str:
    return str(results.responses.model or Path(results.responses.file).parent.name)


def _slug(results: BenchResult, runs: list[BenchResult]) -> str:
    """A directory name per model: the model name (made safe), else the file's folder."""
    name = str(results.responses.model or Path(results.responses.file).parent.name)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    names = [str(r.responses.model) for r in runs]
    return safe if names.count(name) == 1 else f"{safe}-{runs.index(results) + 1}"


def run_contexts_cli(args: argparse.Namespace, items: list[Any], files: list[Path]) -> int:
    """``bench --contexts``: the contexts protocol (:mod:`benchmarks.bench.contexts`), its
    table printed and its rows in ``--out/contexts.json``."""
    import json

    from benchmarks.asking import read_corpus
    from benchmarks.bench.contexts import (
        contexts,
        declared,
        explained,
        run_contexts,
        select,
        table,
    )
    from benchmarks.bench.data import load_bench
    from guard.policy import load_policy

    if args.holdout_sources or args.leave_one_model_out:
        raise CLIError("--contexts runs its own protocol: drop --holdout-sources / "
                       "--leave-one-model-out")
    corpus = read_corpus()
    try:
        ctxs = select(contexts(corpus, seed=args.seed), args.context)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    names = [args.policy] if args.policy else ["default", "smollm2"]
    policies = [load_policy(n, trust=args.trust) for n in names]
    models = [load_bench(items, f) for f in files]
    total = len(policies) * len(models) * (len(ctxs) + 1)
    done = 0

    def step(msg: str) -> None:
        nonlocal done
        done += 1
        print(f"[{done}/{total}] {msg}", file=sys.stderr, flush=True)

    rows = run_contexts(policies, models, ctxs, args.c_r, bootstrap=args.bootstrap,
                        seed=args.seed, progress=step,
                        asking=declared(corpus) if args.declared else None,
                        explain=args.explain)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "contexts.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("System prompts and tool definitions declared as the application's own "
          "(--trusted-prompts, --trusted-tools); the turns and the question priced as a "
          "client's." if args.declared else
          "Everything priced as a client's (no prompt or tool declared; --declared for a "
          "deployment that declares its own).")
    print(table(rows))
    if args.explain:
        print()
        print(explained(rows) or "No decision differs from the bare question's.")
    return 0
