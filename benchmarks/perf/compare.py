"""Two checkouts of the proxy side by side in one run: ``python -m benchmarks.perf.compare
--before DIR``.

A change's effect on latency is only readable when "before" and "after" are measured in the
same rounds on the same machine: these machines are shared and their speed drifts between
runs. This starts the fast fake upstream, the bare relay, and ``serve --confidence logprobs
--policy smollm2`` twice, once with the code of ``--before`` (a checkout, e.g. made with
``git worktree add /tmp/before REV``) and once with this checkout, each its own process
(one worker) with ``PYTHONPATH`` set to its checkout, and measures them in rotated rounds
with the proxy benchmark's client (:func:`benchmarks.perf.proxy.latencies`): the added p50
(median minus the upstream's median) of each, non-streaming and streaming, and the ratios
after / before and each / the bare relay. Throughput is not measured here (``python -m
benchmarks.perf proxy`` does). Results go to stdout and, with ``--out``, to a JSON file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from benchmarks.perf.proxy import ROUNDS_C1, added_p50, latencies
from benchmarks.perf.stack import GUARD_FLAGS, base_env, start_guard, start_relay, start_upstream


def _env(pythonpath: str) -> dict[str, str]:
    return {**base_env(), "PYTHONPATH": pythonpath}


@contextmanager
def servers(before: Path, after: Path) -> Iterator[dict[str, str]]:
    """The upstream, the relay and the two proxies (both serving what users are told to
    run, :data:`benchmarks.perf.stack.GUARD_FLAGS` ``policy``), stopped on exit: their chat
    URLs."""
    here = str(after)
    with ExitStack() as stack:
        upstream, _ = start_upstream(stack, _env(here), cwd=here)
        urls = {"upstream": upstream, "relay": start_relay(stack, upstream, _env(here),
                                                           cwd=here)[0]}
        for name, checkout in (("before", before), ("after", after)):
            urls[name] = start_guard(stack, upstream, GUARD_FLAGS["policy"],
                                     _env(str(checkout)), cwd=str(checkout))[0]
        yield {n: f"{u}/chat/completions" for n, u in urls.items()}


def compare(before: Path, after: Path, rounds: int = ROUNDS_C1) -> dict[str, Any]:
    out: dict[str, Any] = {"before": str(before), "after": str(after), "rounds": rounds}
    with servers(before, after) as urls:
        for stream in (False, True):
            a = added_p50(asyncio.run(latencies(urls, stream, rounds)))
            out["streaming" if stream else "non-streaming"] = {
                "added_p50_ms": {n: round(v * 1000, 3) for n, v in a.items()},
                "after / before": round(a["after"] / a["before"], 3),
                "before / relay": round(a["before"] / a["relay"], 3),
                "after / relay": round(a["after"] / a["relay"], 3)}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True,
                        help="a checkout of the code to compare with (e.g. a git worktree)")
    parser.add_argument("--rounds", type=int, default=ROUNDS_C1,
                        help=f"rotated rounds per kind of request (default {ROUNDS_C1})")
    parser.add_argument("--out", type=Path, help="also write the figures here (JSON)")
    args = parser.parse_args(argv)
    if not (args.before / "guard" / "cli.py").is_file():
        print(f"error: {args.before} is not a utilityguard checkout (no guard/cli.py)",
              file=sys.stderr)
        return 2
    result = compare(args.before.resolve(), Path(__file__).resolve().parents[2], args.rounds)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
