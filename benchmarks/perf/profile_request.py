"""Profile the guard proxy's request path: ``python -m benchmarks.perf.profile_request``.

The fake upstream runs in its own process; the proxy (``--confidence logprobs --policy
smollm2`` by default, as users run it) runs in this process under :mod:`cProfile`, served by
uvicorn; a client process sends ``--requests`` chat completions one at a time. The profile
of the proxy's process during those requests (start-up and warm-up excluded) is written as
text: the functions with the most cumulative and the most own time, and the time per request
spent in each stage of interest. Kept small, so that it can live in the repository
(``benchmarks/perf/profiles/``) as the record of where a request's time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import httpx
import uvicorn

from benchmarks.perf.__main__ import load_average
from benchmarks.perf.proxy import BODY
from benchmarks.perf.servers import free_ports, wait_until_serving
from guard.proxy import create_app
from guard.settings import Settings

#: functions whose cumulative time per request the profile states on its own
STAGES = {
    "price (cost, alpha)": "price",
    "cost model, one text": "_cost_one",
    "cost model, every segment": "costliest",
    "answerability": "predict_alpha",
    "embedding (wordllama)": "embed",
    "decide": "decide_reply",
    "parse the request": "parse_chat_request",
    "upstream exchange": "forward",
    "deliver": "deliver",
    "the response body": "chat_delivery",
    "audit / metrics": "record",
}


#: ``--early``: a dripped stream whose cost the client gives, below C_R (every p answers), so
#: the proxy relays it as it arrives (what the TTFT benchmark times)
EARLY_BODY = {"model": "perf-model", "stream": True, "messages": [
    {"role": "user", "content": "perf-drip: what is the capital of France?"}]}
EARLY_HEADERS = {"x-utilityguard-cost": "0.5"}


def _client(url: str, n: int, stream: bool, early: bool = False) -> None:
    async def go() -> None:
        async with httpx.AsyncClient(timeout=30.0) as client:
            for _ in range(n):
                body = EARLY_BODY if early else {**BODY, "stream": True} if stream else BODY
                r = await client.post(url, json=body, headers=EARLY_HEADERS if early else None)
                r.raise_for_status()
                if early and r.headers.get("x-utilityguard-stream") != "early":
                    raise RuntimeError("the proxy did not stream the request early")

    asyncio.run(go())


def _new_loop() -> asyncio.AbstractEventLoop:
    try:  # what uvicorn serves with where it is installed
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def profile(requests: int, policy: str | None, stream: bool, early: bool = False
            ) -> tuple[pstats.Stats, float]:
    """Profile ``requests`` requests through an in-process proxy; ``(stats, wall seconds)``.

    The proxy serves in this (the main) thread, the client runs in another; the profiler is
    switched on and off from inside the proxy's event loop, so it records the proxy's thread
    only, and only while the measured requests run."""
    up_port, px_port = free_ports(2)
    upstream = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "benchmarks.perf.fake_upstream:app", "--host",
         "127.0.0.1", "--port", str(up_port), "--log-level", "warning", "--no-access-log"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(f"http://127.0.0.1:{up_port}/v1/models", upstream)
        settings = Settings(_env_file=None,  # type: ignore[call-arg]
                            upstream=f"http://127.0.0.1:{up_port}/v1",
                            confidence="logprobs", policy=policy,
                            allow_client_overrides=early)
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=px_port,
                                log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        prof = cProfile.Profile()
        loops: list[asyncio.AbstractEventLoop] = []
        wall: list[float] = []
        url = f"http://127.0.0.1:{px_port}/v1/chat/completions"

        def drive() -> None:
            try:
                wait_until_serving(f"http://127.0.0.1:{px_port}/healthz", upstream)
                _client(url, 50, stream, early)  # warm up
                loops[0].call_soon_threadsafe(prof.enable)
                time.sleep(0.05)
                t0 = time.perf_counter()
                _client(url, requests, stream, early)
                wall.append(time.perf_counter() - t0)
                loops[0].call_soon_threadsafe(prof.disable)
                time.sleep(0.05)
            finally:
                server.should_exit = True

        async def serve() -> None:
            loops.append(asyncio.get_running_loop())
            await server.serve()

        client = threading.Thread(target=drive, daemon=True)
        client.start()
        loop = _new_loop()
        try:
            loop.run_until_complete(serve())
        finally:
            loop.close()
        client.join(15)
        if not wall:
            raise RuntimeError("the profiled requests did not complete")
        return pstats.Stats(prof), wall[0]
    finally:
        upstream.terminate()
        upstream.wait(15)


def _stage_times(stats: pstats.Stats, requests: int) -> list[str]:
    """Microseconds per request of each function in :data:`STAGES` (cumulative)."""
    table = stats.stats  # type: ignore[attr-defined]
    lines = []
    for label, func in STAGES.items():
        cum = sum(v[3] for (path, _, name), v in table.items()
                  if name == func and ("/guard/" in path or "/cost_models/" in path))
        lines.append(f"  {label:<28} {cum / requests * 1e6:9.0f} us")
    return lines


def render(stats: pstats.Stats, wall: float, requests: int, args: Sequence[str]) -> str:
    """The profile as text: the header, the stages, the top functions."""
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    head = [f"# python -m benchmarks.perf.profile_request {' '.join(args)}".rstrip(),
            f"# {datetime.now(timezone.utc).isoformat(timespec='seconds')}, load average "
            f"{load_average()}; {requests} requests, one at a time, in {wall:.2f} s wall "
            f"(client and upstream included: {wall / requests * 1e3:.2f} ms per request)",
            "# cProfile of the proxy's thread only; profiling slows Python code several-fold,",
            "# so read the shares, not the absolute times", "",
            "time per request in the proxy, by stage (cumulative, profiled):",
            *_stage_times(stats, requests), ""]
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(25)
    body = out.getvalue()
    for prefix in (str(Path(sys.prefix)) + "/lib/", str(Path(__file__).resolve().parents[2]) + "/"):
        body = body.replace(prefix, "")
    return "\n".join(head) + "\n" + body


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.profile_request",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--policy", default="smollm2",
                        help="the policy served (NONE: no policy); default smollm2")
    parser.add_argument("--stream", action="store_true", help="streaming requests")
    parser.add_argument("--early", action="store_true",
                        help="dripped streams relayed as they arrive (cost given below C_R)")
    parser.add_argument("--out", type=Path, help="write the profile here (default: stdout)")
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(raw)
    policy = None if args.policy.upper() == "NONE" else args.policy
    stats, wall = profile(args.requests, policy, args.stream, args.early)
    shown = [a for a in raw if not a.startswith("--out") and a != str(args.out)]
    text = render(stats, wall, args.requests, shown)
    emit(text, args.out)
    return 0


def emit(text: str, out: Path | None) -> None:
    """Print ``text``, or write it to ``out`` (its folder made) and say so (shared with
    ``profile_load``)."""
    if out is None:
        print(text)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
