"""The servers the proxy benchmarks compare, each its own process on 127.0.0.1, one worker each.

* ``upstream``: the fast fake upstream (:mod:`benchmarks.perf.fake_upstream`), called directly;
* ``relay``: the bare relay on the guard's stack (:mod:`benchmarks.perf.relay`), the floor;
* ``litellm``: the LiteLLM proxy 1.80.0 (the ``litellm`` extra) with one model routed to the
  fake upstream, no guardrail, access log off; left out (with a note) when not installed;
* ``guard``: ``utilityguard serve --confidence logprobs``, no ``--policy``: the shipped cost
  model with the shipped ``default`` policy's calibrator and answerability classifier (what
  ``serve`` runs when no policy is named);
* ``policy``: ``utilityguard serve --confidence logprobs --policy smollm2`` (what users are
  told to run: cost model, calibrator and answerability classifier).

All of them sit in front of the same upstream process; every one is stopped on exit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.perf.relay import UPSTREAM_ENV
from benchmarks.perf.servers import free_port, wait_until_serving
from utilityguard_base.exceptions import InvalidValueError

#: every configuration, in the order the benchmarks measure them each round
CONFIGS = ("upstream", "relay", "litellm", "guard", "policy")
#: the command-line flags of each guard configuration
GUARD_FLAGS: dict[str, tuple[str, ...]] = {
    "guard": ("--confidence", "logprobs"),
    "policy": ("--confidence", "logprobs", "--policy", "smollm2"),
}
LITELLM_VERSION = "1.80.0"
_QUIET_LOGS = {"version": 1, "disable_existing_loggers": False,
               "loggers": {n: {"level": "WARNING"} for n in
                           ("uvicorn", "uvicorn.error", "uvicorn.access", "LiteLLM",
                            "LiteLLM Proxy", "LiteLLM Router")}}


@dataclass
class Stack:
    """Base URLs (``http://127.0.0.1:PORT/v1``) of the running configurations, their process
    ids (what a sampling profiler attaches to), and why any configuration is missing."""

    urls: dict[str, str] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def litellm_missing() -> str | None:
    """Why the LiteLLM proxy cannot run here (``None`` when it can)."""
    exe = Path(sys.executable).with_name("litellm")
    try:
        from importlib.metadata import version

        found = version("litellm")
    except Exception:
        return f"litellm is not installed (pip install 'utilityguard[litellm]', {LITELLM_VERSION})"
    if not exe.exists():
        return f"the litellm command is not next to {sys.executable}"
    if found != LITELLM_VERSION:
        return f"litellm {found} is installed; the comparison is with {LITELLM_VERSION}"
    return None


def base_env() -> dict[str, str]:
    """This process's environment without any ``UTILITYGUARD_*`` setting (each server is
    configured by its command line only)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}


def start_server(stack: ExitStack, cmd: Sequence[str], env: Mapping[str, str], health: str,
                 cwd: str | None = None, timeout: float = 120.0) -> int:
    """Start ``cmd`` (stopped when ``stack`` closes), wait until ``health`` answers; its pid."""
    proc = subprocess.Popen(list(cmd), env=dict(env), cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    stack.callback(stop)
    wait_until_serving(health, proc, timeout=timeout)
    return proc.pid


#: uvicorn's flags for every server of the benchmarks: loopback only, quiet logs
UVICORN_QUIET = ("--host", "127.0.0.1", "--log-level", "warning", "--no-access-log")


def start_upstream(stack: ExitStack, env: Mapping[str, str], cwd: str | None = None
                   ) -> tuple[str, int]:
    """The fast fake upstream (:mod:`benchmarks.perf.fake_upstream`), stopped when ``stack``
    closes: its ``http://127.0.0.1:PORT/v1`` URL and pid."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    pid = start_server(stack, [sys.executable, "-m", "uvicorn",
                               "benchmarks.perf.fake_upstream:app", "--port", str(port),
                               *UVICORN_QUIET], env, f"{url}/models", cwd=cwd)
    return url, pid


def start_relay(stack: ExitStack, upstream: str, env: Mapping[str, str],
                cwd: str | None = None) -> tuple[str, int]:
    """The bare relay (:mod:`benchmarks.perf.relay`) in front of ``upstream``: its ``.../v1``
    URL and pid."""
    port = free_port()
    pid = start_server(stack, [sys.executable, "-m", "uvicorn", "--factory",
                               "benchmarks.perf.relay:app_from_environment", "--port",
                               str(port), *UVICORN_QUIET], {**env, UPSTREAM_ENV: upstream},
                       f"http://127.0.0.1:{port}/v1/models", cwd=cwd)
    return f"http://127.0.0.1:{port}/v1", pid


def start_guard(stack: ExitStack, upstream: str, flags: Sequence[str], env: Mapping[str, str],
                cwd: str | None = None) -> tuple[str, int]:
    """``python -m guard.cli serve FLAGS`` (one worker; the guard importable from ``cwd`` or
    the install) in front of ``upstream``: its ``.../v1`` URL and pid."""
    port = free_port()
    pid = start_server(stack, [sys.executable, "-m", "guard.cli", "serve", "--upstream",
                               upstream, "--port", str(port), *flags, "--log-level",
                               "warning", "--workers", "1"], env,
                       f"http://127.0.0.1:{port}/healthz", cwd=cwd)
    return f"http://127.0.0.1:{port}/v1", pid


def _litellm(stack: ExitStack, upstream: str, port: int) -> int:
    tmp = tempfile.mkdtemp(prefix="perf-litellm-")
    stack.callback(shutil.rmtree, tmp, True)
    config = {"model_list": [{"model_name": "perf-model", "litellm_params": {
        "model": "openai/perf-model", "api_base": upstream, "api_key": "none"}}]}
    (Path(tmp) / "config.yaml").write_text(json.dumps(config), encoding="utf-8")  # YAML ⊃ JSON
    (Path(tmp) / "logging.json").write_text(json.dumps(_QUIET_LOGS), encoding="utf-8")
    env = {**base_env(), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
           "LITELLM_LOG": "ERROR", "NO_PROXY": "127.0.0.1,localhost"}
    exe = str(Path(sys.executable).with_name("litellm"))
    cmd = [exe, "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port),
           "--num_workers", "1", "--log_config", "logging.json"]
    return start_server(stack, cmd, env, f"http://127.0.0.1:{port}/health/liveliness", cwd=tmp,
                        timeout=180.0)


@contextmanager
def running(configs: Sequence[str] = CONFIGS, guard_env: Mapping[str, str] | None = None
            ) -> Iterator[Stack]:
    """Start ``configs`` (the upstream always), yield their URLs, stop them all on exit;
    ``guard_env`` adds ``UTILITYGUARD_*`` settings to the guard configurations."""
    unknown = set(configs) - set(CONFIGS)
    if unknown:
        raise InvalidValueError(f"unknown configuration(s) {sorted(unknown)}; known: {CONFIGS}")
    out = Stack()
    base = base_env()
    with ExitStack() as stack:
        upstream, out.pids["upstream"] = start_upstream(stack, base)
        out.urls["upstream"] = upstream
        for name in configs:
            if name == "upstream":
                continue
            if name == "relay":
                out.urls[name], out.pids[name] = start_relay(stack, upstream, base)
            elif name == "litellm":
                why = litellm_missing()
                if why is not None:
                    out.skipped[name] = why
                    continue
                port = free_port()
                out.pids[name] = _litellm(stack, upstream, port)
                out.urls[name] = f"http://127.0.0.1:{port}/v1"
            else:
                out.urls[name], out.pids[name] = start_guard(
                    stack, upstream, GUARD_FLAGS[name], {**base, **(guard_env or {})})
        yield out
