"""The stand-in upstream and the real guard proxy that ``<!-- docs-test: proxy -->`` blocks
talk to: ``benchmarks.perf.fake_upstream`` (a fixed reply with token logprobs — simulated, not
a model) and ``utilityguard serve`` in front of it, both on 127.0.0.1, started once for the
session when a proxy block runs and stopped at its end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.perf.servers import ServerError, free_ports, wait_until_serving
from tests.helpers import stop_process


class Server:
    """A server process on 127.0.0.1; :meth:`stop` terminates it (then kills it)."""

    def __init__(self, argv: list[str], log: Path, ready: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
        self.log = log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_until_serving(ready, self.proc, timeout=90.0, log=log)
        except ServerError as exc:
            self.stop()
            pytest.fail(f"could not start {argv[2:5]}: {exc}")

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture(scope="session")
def docs_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``{docs address: real address}`` for the proxy (8787) and its upstream (8080)."""
    from tests.docs.blocks import PROXY_ADDRESS, UPSTREAM_ADDRESS

    logs = tmp_path_factory.mktemp("docs-proxy")
    up_port, proxy_port = free_ports(2)
    upstream = Server([sys.executable, "-m", "uvicorn", "benchmarks.perf.fake_upstream:app",
                       "--host", "127.0.0.1", "--port", str(up_port), "--log-level", "warning"],
                      logs / "upstream.log", f"http://127.0.0.1:{up_port}/v1/models")
    proxy = Server([sys.executable, "-m", "guard.cli", "serve", "--upstream",
                    f"http://127.0.0.1:{up_port}/v1", "--port", str(proxy_port),
                    "--confidence", "logprobs", "--log-level", "warning"],
                   logs / "proxy.log", f"http://127.0.0.1:{proxy_port}/healthz")
    try:
        yield {PROXY_ADDRESS: f"127.0.0.1:{proxy_port}", UPSTREAM_ADDRESS: f"127.0.0.1:{up_port}"}
    finally:
        proxy.stop()
        upstream.stop()
