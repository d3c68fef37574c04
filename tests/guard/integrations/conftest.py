"""Fixtures of the integration tests: the proxy tests' fake OpenAI upstream, served on
127.0.0.1 (a conftest is not importable, so its module is loaded from its file)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.helpers import stop_process

_PROXY_CONFTEST = Path(__file__).parents[1] / "proxy" / "conftest.py"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("utilityguard_test_fakes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fakes = _load(_PROXY_CONFTEST)


@pytest.fixture(scope="session")
def answer() -> str:
    """What the fake upstream answers."""
    return str(fakes.ANSWER)


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Any, Any]]:
    """The fake OpenAI upstream ``(fake, served)``; its keywords are listed in the proxy
    tests' conftest."""
    fake = fakes.FakeUpstream()
    served = fakes.Served(fake.app())
    yield fake, served
    served.stop()


@pytest.fixture(scope="session")
def keyword_cost_model() -> Any:
    """The proxy tests' fake cost model: ``dose`` -> 20, ``cheap`` -> 0.5, otherwise 4."""
    return fakes.KeywordCost()


class Process:
    """A server process on 127.0.0.1 started by a test; stopped (then killed) at teardown."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: Path, port: int,
                 ready_path: str, timeout: float = 120.0) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = cwd / "server.log"
        with self.log.open("wb") as out:
            base = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
            self.proc = subprocess.Popen(argv, cwd=cwd, env={**base, **env}, stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log.read_text()[-4000:]}")
            try:
                if httpx.get(self.url + ready_path, timeout=1.0).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server did not start:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture(scope="module")
def start_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """``start(argv, env, files, ready_path)``: write ``files`` into a fresh directory, run
    ``argv`` there on a free port (``{port}`` in argv is replaced), wait until
    ``ready_path`` answers; every process is stopped at teardown."""
    started: list[Process] = []

    def start(argv: list[str], env: Mapping[str, str], files: Mapping[str, str],
              ready_path: str) -> Process:
        cwd = tmp_path_factory.mktemp("server")
        port = fakes.free_port()
        for name, text in files.items():
            (cwd / name).write_text(text.replace("{port}", str(port)))
        proc = Process([a.replace("{port}", str(port)) for a in argv], env, cwd, port,
                       ready_path)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def python_bin(name: str) -> str:
    """A console script of the running interpreter's environment."""
    return str(Path(sys.executable).with_name(name))
