"""``utilityguard collect``: run a dataset through an OpenAI-compatible endpoint, graded."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from benchmarks.collect import (
    CONFIDENCE_KINDS,
    PROMPT_STYLES,
    CollectSettings,
    check_temperature,
    collect,
    regrade,
    stage_agreement,
)
from benchmarks.grading.model_grader import GraderSettings
from benchmarks.resume import prepare_resume
from cost_models.datasets import load_seed, load_seed_questions, load_utilitybench
from guard.exceptions import CLIError, CollectError
from utilityguard_base.jsonl import read_jsonl
from utilityguard_base.progress import Bar, progress_bar


def register(sub: Any) -> None:
    p = sub.add_parser(
        "collect",
        help="ask a model every question of a dataset and grade the replies",
        description=(
            "Ask every item of DATASET through an OpenAI-compatible endpoint with the "
            "UtilityBench Refusal Hint as system prompt, grade each reply, and append one "
            "response record per item to --out (JSONL). Resumable: a rerun skips ids already "
            "in --out. Rate limits: 429 and 5xx replies, timeouts and refused connections are "
            "retried with exponential backoff that honours retry-after. Grading: rules first; "
            "with --grader-upstream a model grader grades the replies the rules cannot settle (or "
            "all, with --grade-all) and every record says which stage graded it. Model-written "
            "code is executed to grade code items, in a sandbox: CPU-time, wall-time, memory "
            "and file-size limits, no network (a network namespace where available, and an "
            "audit hook refusing sockets, subprocesses and ctypes), a temporary working "
            "directory, and an empty environment (no API keys)."
        ),
    )
    p.add_argument("--data", default="seed",
                   help="dataset (.jsonl/.csv/.parquet) or 'seed' (default: the shipped seed set; "
                        "with --regrade, every seed question, the removed near-duplicates too)")
    p.add_argument("--upstream", action="append", metavar="URL",
                   help="base URL, e.g. http://127.0.0.1:8080/v1; repeat it to spread requests "
                        "over several endpoints serving the same model (required unless "
                        "--regrade)")
    p.add_argument("--model", help="model name sent to the upstream (required unless --regrade)")
    p.add_argument("--concurrency", type=int, default=1, metavar="N",
                   help="requests in flight at once, spread round-robin over the upstreams "
                        "(default 1)")
    p.add_argument("--prompt-style", choices=PROMPT_STYLES, default="chat",
                   help="chat (default): the Refusal Hint as system message to "
                        "/chat/completions, for instruction-tuned models; completion: for a "
                        "base model (no chat template), the hint, two worked examples (one "
                        "answer, one 'I cannot answer.') and 'Question: ... Answer:' as one text "
                        "prompt to /completions, cut at the next 'Question:'")
    p.add_argument("--retries", type=int, default=5, metavar="N",
                   help="attempts per request before giving up (default 5)")
    p.add_argument("--confidence", default="logprobs",
                   help=f"comma list of {', '.join(CONFIDENCE_KINDS)} (default: logprobs)")
    p.add_argument("--samples", type=int, default=4,
                   help="extra samples per item for 'consistency' (default 4)")
    p.add_argument("--temperature", type=float, default=0.0, metavar="T",
                   help="sampling temperature of each reply, 0-2 (default 0: greedy); a "
                        "collection at T > 0 is a sample of the replies a deployment sampling "
                        "at T gets (consistency samples stay at 0.7)")
    p.add_argument("--max-tokens", type=int, default=256, help="max tokens per reply (256)")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request (300)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the upstream API key, if any")
    p.add_argument("--grader-upstream", "--judge-upstream", metavar="URL", action=_Renamed,
                   help="OpenAI-compatible base URL of a model grader: the second grading stage "
                        "(--judge-*: the former names of the --grader-* options, deprecated)")
    p.add_argument("--grader-model", "--judge-model", metavar="NAME", action=_Renamed,
                   help="the grader's model name")
    p.add_argument("--grade-all", "--judge-all", action=_RenamedFlag,
                   help="send every reply to the grader, not only those the rules cannot settle")
    p.add_argument("--grader-api-key-env", "--judge-api-key-env", default=None, metavar="VAR",
                   action=_Renamed, help="environment variable holding the grader's API key "
                                         "(default: --api-key-env)")
    p.add_argument("--out", required=True, type=Path, help="response records (JSONL, appended)")
    p.add_argument("--ptrue-of", type=Path, metavar="RESPONSES",
                   help="do not ask the questions again: for each record of RESPONSES (collected "
                        "from --model), ask the model whether its reply is correct and write "
                        "P(True) (Kadavath et al. 2022; read from the first token's top "
                        "log-probabilities) to --out, one row per record; resumable; uses "
                        "--prompt-style")
    p.add_argument("--regrade", action="store_true",
                   help="do not ask the model: re-grade the records already in --out with the "
                        "current rules (and the grader, if given); replies kept")
    p.set_defaults(func=run)


def _warn_renamed(option: str | None, new: str) -> None:
    if option is not None and option.startswith("--judge-"):
        print(f"utilityguard: warning: {option} is deprecated; use {new}", file=sys.stderr)


class _Renamed(argparse._StoreAction):
    """Stores the value; warns when it came by the option's former ``--judge-*`` name."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        _warn_renamed(option_string, self.option_strings[0])
        super().__call__(parser, namespace, values, option_string)


class _RenamedFlag(argparse._StoreTrueAction):
    """``store_true``; warns when set by the option's former ``--judge-*`` name."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        _warn_renamed(option_string, self.option_strings[0])
        super().__call__(parser, namespace, values, option_string)


def _grader(args: argparse.Namespace) -> GraderSettings | None:
    if bool(args.grader_upstream) != bool(args.grader_model):
        raise CLIError("--grader-upstream and --grader-model go together")
    if args.grade_all and not args.grader_upstream:
        raise CLIError("--grade-all needs --grader-upstream and --grader-model")
    if not args.grader_upstream:
        return None
    key = os.environ.get(args.grader_api_key_env or args.api_key_env) or None
    return GraderSettings(upstream=args.grader_upstream, model=args.grader_model,
                         grade_all=args.grade_all, api_key=key)


def _bar(label: str) -> Bar:
    return progress_bar(label, eta=True)


def _report_stages(out: Path) -> None:
    records = read_jsonl(out, CollectError)
    agree, graded = stage_agreement(records)
    if graded:
        print(f"the model grader graded {graded} of {len(records)} records; it agreed with the "
              f"rules on {agree} ({agree / graded:.1%})")


def _run_ptrue(args: argparse.Namespace, items: list[Any]) -> int:
    from benchmarks.ptrue_collect import run_ptrue

    if not args.ptrue_of.exists():
        raise CLIError(f"{args.ptrue_of}: no such response file")
    if len(args.upstream) != 1:
        raise CLIError("--ptrue-of takes one --upstream")
    wanted = {it.id for it in items}
    total = sum(1 for r in read_jsonl(args.ptrue_of) if str(r.get("id")) in wanted)
    already = len(prepare_resume(args.out) & wanted)
    with _bar("P(True)") as bar:
        task = bar.add_task("ptrue", total=total, completed=already)
        try:
            n = run_ptrue(items, args.ptrue_of, args.out, upstream=args.upstream[0],
                          model=args.model, style=args.prompt_style,
                          api_key=os.environ.get(args.api_key_env) or None,
                          timeout=args.timeout, retries=args.retries,
                          on_done=lambda _r: bar.advance(task))
        except CollectError as exc:
            raise CLIError(f"{exc} (rows written so far are kept in {args.out})") from None
    print(f"wrote {n} new P(True) rows to {args.out} ({already} were already there)")
    return 0


def run(args: argparse.Namespace) -> int:
    kinds = tuple(k.strip() for k in args.confidence.split(",") if k.strip())
    bad = [k for k in kinds if k not in CONFIDENCE_KINDS]
    if bad:
        raise CLIError(
            f"--confidence: unknown {', '.join(bad)}; allowed: {', '.join(CONFIDENCE_KINDS)}"
        )
    if args.concurrency < 1 or args.retries < 1:
        raise CLIError("--concurrency and --retries must be at least 1")
    try:
        check_temperature(args.temperature)
    except ValueError as exc:  # the option's name before the one check's message
        raise CLIError(f"--{exc}") from None
    grader = _grader(args)
    if args.data == "seed":  # records collected before the deduplication refer to every question
        items = load_seed_questions() if args.regrade else load_seed()
    else:
        items = load_utilitybench(args.data, require_cost=False)
    if args.regrade:
        if not args.out.exists():
            raise CLIError(f"{args.out}: no such file to re-grade")
        total = len(read_jsonl(args.out, CollectError))
        with _bar("regrade") as bar:
            task = bar.add_task("regrade", total=total)
            try:
                n, changed = regrade(items, args.out, grader, concurrency=args.concurrency,
                                     on_done=lambda _r: bar.advance(task))
            except CollectError as exc:
                raise CLIError(str(exc)) from None  # nothing was written
        print(f"re-graded {n} records in {args.out}; {changed} changed")
        _report_stages(args.out)
        return 0
    if not args.upstream or not args.model:
        raise CLIError("--upstream and --model are required (unless --regrade)")
    if args.ptrue_of is not None:
        return _run_ptrue(args, items)
    if args.limit is not None:
        items = items[: args.limit]
    settings = CollectSettings(
        upstream=args.upstream, model=args.model, confidence=kinds, max_tokens=args.max_tokens,
        samples=args.samples if "consistency" in kinds else 0,
        api_key=os.environ.get(args.api_key_env) or None, timeout=args.timeout,
        retries=args.retries, concurrency=args.concurrency, prompt_style=args.prompt_style,
        grader=grader, temperature=args.temperature,
    )
    already = len(prepare_resume(args.out) & {it.id for it in items})
    with _bar("collect") as bar:
        task = bar.add_task("collect", total=len(items), completed=already)
        try:
            n = asyncio.run(collect(items, settings, args.out,
                                    on_done=lambda _r: bar.advance(task)))
        except CollectError as exc:
            raise CLIError(f"{exc} (records written so far are kept in {args.out})") from None
    print(f"wrote {n} new records to {args.out} ({already} were already there)")
    _report_stages(args.out)
    return 0
