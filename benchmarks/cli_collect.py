"""``utilityguard collect``: run a dataset through an OpenAI-compatible endpoint, graded."""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from benchmarks.collect import (
    CONFIDENCE_KINDS,
    CollectError,
    CollectSettings,
    collect,
    done_ids,
    regrade,
)
from cost_models.datasets import load_seed, load_utilitybench
from guard.cli import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "collect",
        help="ask a model every question of a dataset and grade the replies",
        description=(
            "Ask every item of DATASET through an OpenAI-compatible endpoint with the "
            "UtilityBench Refusal Hint as system prompt, grade each reply, and append one "
            "response record per item to --out (JSONL). Resumable: a rerun skips ids already "
            "in --out. Model-written code is executed to grade code items, in a sandbox: CPU-time, "
            "wall-time, memory and file-size limits, no network (a network namespace where "
            "available, and an audit hook refusing sockets, subprocesses and ctypes), a "
            "temporary working directory, and an empty environment (no API keys)."
        ),
    )
    p.add_argument("--data", default="seed",
                   help="dataset (.jsonl/.csv/.parquet) or 'seed' (default: the shipped seed set)")
    p.add_argument("--upstream", help="base URL, e.g. http://127.0.0.1:8080/v1 (required "
                                       "unless --regrade)")
    p.add_argument("--model", help="model name sent to the upstream (required unless --regrade)")
    p.add_argument("--confidence", default="logprobs",
                   help=f"comma list of {', '.join(CONFIDENCE_KINDS)} (default: logprobs)")
    p.add_argument("--samples", type=int, default=4,
                   help="extra samples per item for 'consistency' (default 4)")
    p.add_argument("--max-tokens", type=int, default=256, help="max tokens per reply (256)")
    p.add_argument("--limit", type=int, default=None, help="only the first N items")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request (300)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the upstream API key, if any")
    p.add_argument("--out", required=True, type=Path, help="response records (JSONL, appended)")
    p.add_argument("--regrade", action="store_true",
                   help="do not ask the model: re-grade the records already in --out with the "
                        "current grader (replies kept, answered/correct recomputed)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    kinds = tuple(k.strip() for k in args.confidence.split(",") if k.strip())
    bad = [k for k in kinds if k not in CONFIDENCE_KINDS]
    if bad:
        raise CLIError(
            f"--confidence: unknown {', '.join(bad)}; allowed: {', '.join(CONFIDENCE_KINDS)}"
        )
    items = load_seed() if args.data == "seed" else load_utilitybench(args.data, require_cost=False)
    if args.regrade:
        if not args.out.exists():
            raise CLIError(f"{args.out}: no such file to re-grade")
        try:
            n, changed = regrade(items, args.out)
        except CollectError as exc:  # not a ValueError: would be a traceback
            raise CLIError(str(exc)) from None
        print(f"re-graded {n} records in {args.out}; {changed} changed")
        return 0
    if not args.upstream or not args.model:
        raise CLIError("--upstream and --model are required (unless --regrade)")
    if args.limit is not None:
        items = items[: args.limit]
    settings = CollectSettings(
        upstream=args.upstream, model=args.model, confidence=kinds, max_tokens=args.max_tokens,
        samples=args.samples if "consistency" in kinds else 0,
        api_key=os.environ.get(args.api_key_env) or None, timeout=args.timeout,
    )
    already = len(done_ids(args.out) & {it.id for it in items})
    with Progress(TextColumn("collect"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn()) as bar:
        task = bar.add_task("collect", total=len(items), completed=already)
        try:
            n = asyncio.run(collect(items, settings, args.out,
                                    on_done=lambda _r: bar.advance(task)))
        except CollectError as exc:
            raise CLIError(f"{exc} (records written so far are kept in {args.out})") from None
    print(f"wrote {n} new records to {args.out} ({already} were already there)")
    return 0
