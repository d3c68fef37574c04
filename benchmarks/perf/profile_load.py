"""Sample the real proxy under the throughput load: ``python -m benchmarks.perf.profile_load``.

Unlike :mod:`benchmarks.perf.profile_request` (cProfile of an in-process proxy, one request
at a time, which slows Python code several-fold), this starts the servers as the proxy
benchmark does (:mod:`benchmarks.perf.stack`: the fake upstream and one ``serve`` process,
``--policy smollm2`` by default, one worker), drives it with the throughput benchmark's
raw-socket client at 32 connections, and samples the serving process from outside with
``py-spy`` (the ``profile`` extra; it stops the process for each sample, which costs it a
little speed but gives whole stacks: with ``--nonblocking`` a quarter of the stacks came back
cut short). The samples are summarized as text: the share of samples in which each
function is on the stack (inclusive) and at its top (own), by file and function. Kept small,
so that it can live in the repository (``benchmarks/perf/results/``) as the record of where
the proxy's CPU goes under load.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.perf.__main__ import load_average
from benchmarks.perf.profile_request import emit
from benchmarks.perf.proxy import CONCURRENCY, throughput
from benchmarks.perf.stack import running

#: functions listed in each table
TOP = 80


def _frame(raw: str) -> str:
    """``function (path:line)`` as ``path:function`` with the environment's prefix dropped."""
    name, _, where = raw.partition(" (")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/lib/python3", "/work/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{path}:{name.strip()}"


def summarize(collapsed: str) -> tuple[int, Counter[str], Counter[str]]:
    """``(samples, inclusive, own)`` from py-spy's raw (collapsed-stack) output."""
    total, inclusive, own = 0, Counter[str](), Counter[str]()
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_frame(f) for f in stack.split(";")]
        total += n
        for f in set(frames):
            inclusive[f] += n
        if frames:
            own[frames[-1]] += n
    return total, inclusive, own


def render(total: int, inclusive: Counter[str], own: Counter[str], head: list[str]) -> str:
    lines = [*head, "", f"{total} samples; share of samples with the function on the stack:"]
    lines += [f"  {n / total:6.1%}  {f}" for f, n in inclusive.most_common(TOP)]
    lines += ["", "share of samples with the function at the top of the stack (own time):"]
    lines += [f"  {n / total:6.1%}  {f}" for f, n in own.most_common(TOP)]
    return "\n".join(lines) + "\n"


def _load(url: str, seconds: float, stop: threading.Event) -> None:
    async def go() -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end and not stop.is_set():
            await throughput(url, CONCURRENCY, 640)

    asyncio.run(go())


def profile(config: str, seconds: float, rate: int) -> tuple[str, list[str]]:
    """py-spy's collapsed stacks of ``config``'s process under load, and the header lines."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed (pip install py-spy)")
    before = load_average()
    with running(("upstream", config)) as stack, tempfile.TemporaryDirectory() as tmp:
        url = f"{stack.urls[config]}/chat/completions"
        asyncio.run(throughput(url, CONCURRENCY, 320))  # warm up
        stop = threading.Event()
        driver = threading.Thread(target=_load, args=(url, seconds + 5, stop), daemon=True)
        driver.start()
        out = Path(tmp) / "stacks.txt"
        try:
            subprocess.run([spy, "record", "--pid", str(stack.pids[config]), "--duration",
                            str(int(seconds)), "--rate", str(rate), "--format", "raw",
                            "--output", str(out)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finally:
            stop.set()
            driver.join(60)
        collapsed = out.read_text(encoding="utf-8")
    head = [f"# py-spy record --rate {rate} of the '{config}' server "
            f"(benchmarks.perf.stack), {seconds:g} s under the throughput load "
            f"({CONCURRENCY} keep-alive connections, raw-socket client)",
            f"# {datetime.now(timezone.utc).isoformat(timespec='seconds')}, load average "
            f"before {before}, after {load_average()}"]
    return collapsed, head


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.profile_load",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="policy",
                        choices=("policy", "guard", "relay", "litellm"),
                        help="the server sampled (benchmarks.perf.stack); default policy")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=int, default=100, help="samples per second")
    parser.add_argument("--out", type=Path, help="write the summary here (default: stdout)")
    parser.add_argument("--stacks", type=Path, help="also keep py-spy's collapsed stacks here")
    args = parser.parse_args(argv)
    collapsed, head = profile(args.config, args.seconds, args.rate)
    if args.stacks is not None:
        args.stacks.write_text(collapsed, encoding="utf-8")
    text = render(*summarize(collapsed), [
        f"# python -m benchmarks.perf.profile_load --config {args.config} "
        f"--seconds {args.seconds:g} --rate {args.rate}", *head])
    emit(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
