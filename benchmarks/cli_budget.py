"""``utilityguard budget``: the ``C_R`` that holds a follow-up budget on recorded traffic."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from guard.exceptions import CLIError

DEFAULT_C_R_MAX = 1000.0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "budget", help="the C_R that keeps unnecessary refusals within a follow-up budget",
        description=(
            "An unnecessary refusal leaves an answerable request for someone to follow up; "
            "give the capacity you have as a budget (--rate 0.05: at most 5% of answerable "
            "requests refused; or --count 50 --per 1000 requests) and this finds the price "
            "C_R* of an unnecessary refusal at which the policy's decisions use exactly that "
            "budget: the smallest C_R whose refusals fit (bisection on C_R; the refusal count "
            "falls as C_R grows), with the randomized decision at the boundary the linear "
            "program allows. C_R* is the shadow price of the budget: the welfare one more "
            "allowed unnecessary refusal would buy. Prints C_R*, the realised "
            "unnecessary-refusal rate, mean utility and answer rate with bootstrap intervals. "
            "Unnecessary refusals are counted with answerability labels where the items have "
            "them and estimated as sum(alpha) over the refused items where not (the output "
            "says which)."),
        epilog="example: utilityguard budget --rate 0.05 --json")
    src = p.add_argument_group("traffic (default: the shipped SmolLM2 responses on the seed set)")
    src.add_argument("--policy", default=None, metavar="PATH_OR_NAME",
                     help="the policy that decides (a folder from `utilityguard fit` or a shipped "
                          "name; default: the shipped default policy, else smollm2)")
    src.add_argument("--responses", type=Path, default=None,
                     help="graded response records (JSONL) to decide on")
    src.add_argument("--data", default="seed",
                     help="the dataset the responses answer, with labels and costs ('seed')")
    src.add_argument("--audit", default=None, metavar="PATH_OR_URL",
                     help="the proxy's audit log instead (SQLite path or postgresql:// URL): its "
                          "decisions as made, labelled by POST /v1/feedback where they are")
    b = p.add_argument_group("budget (one of)")
    b.add_argument("--rate", type=float, default=None,
                   help="at most this fraction of answerable requests refused (0.05)")
    b.add_argument("--count", type=float, default=None,
                   help="at most this many unnecessary refusals per --per requests")
    b.add_argument("--per", type=float, default=None, help="requests the --count is per (1000)")
    p.add_argument("--c-r-max", type=float, default=DEFAULT_C_R_MAX,
                   help=f"the largest C_R searched; a budget not met there is reported "
                        f"infeasible ({DEFAULT_C_R_MAX:g})")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples (200)")
    p.add_argument("--seed", type=int, default=0, help="random seed (0)")
    p.add_argument("--frontier", action="store_true",
                   help="also print the budget-welfare frontier P(R_max) and its slope C_R*")
    p.add_argument("--plot", type=Path, default=None,
                   help="write the frontier as a PNG here (needs utilityguard[bench])")
    p.add_argument("--trust", action="store_true", help="skip artifact integrity checks")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _target(args: argparse.Namespace) -> Any:
    from benchmarks.budget import Target

    if args.rate is None and args.count is None:
        raise CLIError("give the budget: --rate R (at most R of the answerable requests "
                       "refused, e.g. --rate 0.05) or --count K --per N (at most K "
                       "unnecessary refusals per N requests)")
    if args.rate is not None and args.count is not None:
        raise CLIError("give the budget as --rate R (of answerable requests) or as "
                       "--count K --per N (requests), not both")
    if args.rate is not None:
        if not (math.isfinite(args.rate) and 0 <= args.rate <= 1):
            raise CLIError(f"--rate must be a fraction in [0, 1], got {args.rate}")
        if args.per is not None:
            raise CLIError("--per goes with --count, not --rate")
        return Target(rate=args.rate)
    if args.per is None or not (math.isfinite(args.per) and args.per > 0):
        raise CLIError("--count needs --per N, a number of requests > 0")
    if not (math.isfinite(args.count) and 0 <= args.count <= args.per):
        raise CLIError(f"--count must be in [0, --per], got {args.count}")
    return Target(count=args.count, per=args.per)


def _items(args: argparse.Namespace, progress: Any = None) -> Any:
    from benchmarks.bench.data import shipped_responses
    from benchmarks.budget import default_policy, items_from_audit, items_from_responses
    from cost_models.datasets import load_seed, load_utilitybench

    if args.audit is not None:
        if args.responses is not None or args.policy is not None:
            raise CLIError("--audit holds the decisions as made: drop --responses / --policy")
        return items_from_audit(args.audit)
    if args.data != "seed" and args.responses is None:
        raise CLIError("--responses is required with --data (the shipped responses are for "
                       "the seed set)")
    items = load_seed() if args.data == "seed" else load_utilitybench(args.data)
    return items_from_responses(items, args.responses or shipped_responses(),
                                args.policy or default_policy(), trust=args.trust,
                                progress=progress)


def run(args: argparse.Namespace) -> int:
    from benchmarks.budget import bootstrap, solve, summary
    from benchmarks.progress import phases

    target = _target(args)
    if not (math.isfinite(args.c_r_max) and args.c_r_max > 0):
        raise CLIError(f"--c-r-max must be a finite number > 0, got {args.c_r_max}")
    if args.bootstrap < 0:
        raise CLIError("--bootstrap must be >= 0")
    with phases("budget", 2) as step:
        step("deciding")
        items = _items(args, step.tick)
        out = {"source": items.source, "counting": items.counting,
               "target": target.describe(),
               **summary(items, solve(items, target, c_r_max=args.c_r_max))}
        step("bootstrap")
        out["ci95"] = bootstrap(items, target, c_r_max=args.c_r_max, n_boot=args.bootstrap,
                                seed=args.seed, progress=step.tick)
    out["bootstrap"] = args.bootstrap
    if args.frontier or args.plot:
        from benchmarks.bench.frontier import frontier_table

        out["frontier"] = frontier_table(items.p, items.cost, items.alpha,
                                         value_answer=items.value_answer,
                                         value_refuse=items.value_refuse, weight=items.weight)
        if args.plot:
            from benchmarks.bench.frontier import plot_frontier

            plot_frontier({items.source: out["frontier"]}, args.plot)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print(out, frontier=args.frontier)
    return 0


def _ci(out: dict[str, Any], key: str, digits: int = 4) -> str:
    ci = out["ci95"].get(key)
    return f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]" if ci else ""


def _print(out: dict[str, Any], *, frontier: bool) -> None:
    rate = out["unnecessary_refusal_rate"]
    print(f"{out['source']}; budget: {out['target']} (R_max = {out['budget']:.2f} unnecessary "
          f"refusals of {out['answerable']:.1f} answerable requests)")
    print(f"unnecessary refusals {out['counting']}")
    if not out["feasible"]:
        print(f"infeasible: even C_R = {out['c_r']:g} refuses {out['unnecessary_refusals']:.1f} "
              "answerable requests (the model's own refusals and hopeless answers); raise the "
              "budget or --c-r-max")
    elif not out["binding"]:
        print("the budget is not binding: at C_R = 0 the policy already refuses fewer "
              "answerable requests than it allows (price 0)")
    print(f"C_R*                       {out['c_r']:.4f}{_ci(out, 'c_r')}")
    print(f"unnecessary refusals       {out['unnecessary_refusals']:.1f} of "
          f"{out['answerable']:.1f} answerable")
    if rate is not None:
        print(f"unnecessary-refusal rate   {rate:.4f}{_ci(out, 'unnecessary_refusal_rate')}")
    print(f"mean utility               {out['mean_utility']:.4f}{_ci(out, 'mean_utility')}")
    print(f"answer rate                {out['answer_rate']:.4f}{_ci(out, 'answer_rate')}")
    if out["boundary_refuse_probability"] > 0:
        r = out["randomized"]
        print(f"randomized at the boundary: refuse {out['boundary_items']} boundary item(s) "
              f"with probability {out['boundary_refuse_probability']:.3f} -> expected "
              f"{r['unnecessary_refusals']:.2f} unnecessary refusals, mean utility "
              f"{r['mean_utility']:.4f}")
    print(f"(95% bootstrap intervals over {out['bootstrap']} resamples of items)")
    if frontier:
        from benchmarks.bench.frontier import frontier_markdown

        print()
        print(frontier_markdown(out["frontier"]))
