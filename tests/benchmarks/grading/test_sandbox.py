"""Model-written code runs under limits: hostile candidates fail safely, controls pass."""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading import sandbox
from benchmarks.grading.sandbox import Limits, run_code, run_code_outcome

FAST = Limits(wall_s=20.0, cpu_s=2)


def _candidate(body: str) -> str:
    return "```python\n" + body + "\n```"


def test_a_well_behaved_candidate_passes() -> None:
    assert run_code(_candidate("def f():\n    return 41 + 1"), ["assert f() == 42"], FAST)


def test_an_infinite_loop_is_stopped_by_the_cpu_limit() -> None:
    loop = _candidate("def f():\n    while True:\n        pass\nf()")
    # the 1 s CPU limit stops it, not the 60 s wall limit (said by how it ended, not timed)
    assert run_code_outcome(loop, ["assert True"], Limits(wall_s=60.0, cpu_s=1)) == "cpu_limit"


def test_a_sleeping_candidate_is_stopped_by_the_wall_limit() -> None:
    # sleeping uses no CPU time: only the wall limit can stop it
    outcome = run_code_outcome(_candidate("import time\ntime.sleep(60)"), ["assert True"],
                               Limits(wall_s=2.0, cpu_s=10))
    assert outcome == "wall_limit"


def test_a_memory_bomb_fails() -> None:
    bomb = "blocks = []\nfor _ in range(64):\n    blocks.append(bytearray(256 * 1024 * 1024))"
    assert run_code(_candidate(bomb), ["assert len(blocks) == 64"], FAST) is False
    # the control: a modest allocation is fine
    assert run_code(_candidate("b = bytearray(16 * 1024 * 1024)"), ["assert len(b) > 0"], FAST)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on 127.0.0.1 that records what any client sends; stops by itself."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                got.append(conn.recv(100) or b"connected")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join(timeout=5)
    srv.close()


def test_a_network_attempt_fails(listener: tuple[int, list[bytes]]) -> None:
    port, got = listener
    body = (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "s.sendall(b'leak')\nreached = True")
    assert run_code(_candidate(body), ["assert reached"], FAST) is False
    time.sleep(0.5)
    assert got == []  # nothing reached the server


def test_the_caller_s_secrets_are_not_in_its_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sandbox-test-secret")
    steal = "import os\nkey = os.environ.get('OPENAI_API_KEY')"
    assert run_code(_candidate(steal), ["assert key == 'sk-sandbox-test-secret'"], FAST) is False
    assert run_code(_candidate(steal), ["assert key is None"], FAST) is True  # it did run


@pytest.mark.parametrize("body", [
    pytest.param("import os\nos.system('true')", id="os-system"),
    pytest.param("import subprocess\nsubprocess.run(['true'])", id="subprocess"),
    pytest.param("import os\npid = os.fork()", id="fork"),
    pytest.param("import ctypes\nctypes.CDLL(None)", id="ctypes"),
])
def test_new_processes_and_ctypes_are_refused(body: str) -> None:
    assert run_code(_candidate(body), ["assert True"], FAST) is False
    assert run_code(_candidate("x = 1"), ["assert True"], FAST) is True  # the control


def test_the_working_directory_is_temporary_and_removed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = tempfile.TemporaryDirectory

    def recording(*args: Any, **kwargs: Any) -> Any:
        d = real(*args, **kwargs)
        made.append(d.name)
        return d

    monkeypatch.setattr(sandbox.tempfile, "TemporaryDirectory", recording)
    body = "import os\nhere = os.getcwd()\nopen('left-behind.txt', 'w').write('x')"
    checks = ["import os\nassert os.path.basename(here).startswith('utilityguard-code-')",
              "assert os.path.exists('left-behind.txt')"]
    assert run_code(_candidate(body), checks, FAST) is True
    assert len(made) == 1 and Path(made[0]).name.startswith("utilityguard-code-")
    assert not Path(made[0]).exists()
