"""Running model-written code to grade a code item, with limits.

The reply's code and the item's assert tests run in a separate Python process:

* **time**: a CPU-time limit (``RLIMIT_CPU``) and a wall-clock limit; the whole process group is
  killed when either is hit;
* **memory**: an address-space limit (``RLIMIT_AS``, default 512 MiB); no core files; files it
  writes are capped at 8 MiB each and it may open at most 64;
* **no network**: the process runs in a new network namespace with no interfaces
  (``unshare -rn``) when the machine allows one, and in every case under an audit hook that
  refuses sockets, new processes (``subprocess``, ``os.system``, ``fork``, ``exec``) and
  ``ctypes``, which Python code cannot remove;
* **files**: the working directory is a fresh temporary directory, deleted afterwards; Python
  runs isolated (``-I``: no user site, no ``PYTHON*`` variables, no current-directory imports);
* **environment**: nothing is inherited: the process gets ``PATH``, ``LANG`` and ``HOME`` (the
  temporary directory) only, so API keys in the caller's environment are out of its reach.

A run is correct iff it reaches the end of the tests (a per-run token printed last) and exits 0.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from guard.answers import extract_code


@dataclass(frozen=True)
class Limits:
    """Resource limits of one code run."""

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_bytes: int = 512 * 1024 * 1024
    file_bytes: int = 8 * 1024 * 1024
    open_files: int = 64


DEFAULT_LIMITS = Limits()

# The candidate runs as a module, not as ``__main__`` (an ``if __name__ == "__main__":`` block
# of the reply, e.g. one reading input(), must not run), then the tests in its namespace; an
# exit during either is a failure (a ``sys.exit(0)`` must not skip the tests), and only a run
# that reaches the end prints the per-run token.
_RUNNER = """\
import sys

_DENIED = ("socket.", "subprocess.", "os.system", "os.exec", "os.fork", "os.forkpty",
           "os.posix_spawn", "os.spawn", "os.kill", "ctypes.", "pty.", "os.putenv")

def _guard(event, args):
    if event.startswith(_DENIED):
        raise PermissionError(f"sandbox: {event} is not allowed")

sys.addaudithook(_guard)
ns = {"__name__": "candidate"}
try:
    for name in ("candidate.py", "tests.py"):
        with open(name, encoding="utf-8") as f:
            exec(compile(f.read(), name, "exec"), ns)
except SystemExit:
    sys.exit(3)
print("\\n" + TOKEN)  # on a line of its own, whatever the candidate printed
"""


@functools.cache
def network_namespace() -> bool:
    """Whether ``unshare -rn`` can start a process without network here (probed once)."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _limit(limits: Limits) -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


#: How a code run ended: it passed, it failed (an assert, an error, an exit, a denied call),
#: the CPU-time limit stopped it (``SIGXCPU``, or ``SIGKILL`` at the hard limit), or the
#: wall-clock limit did.
Outcome = Literal["passed", "failed", "cpu_limit", "wall_limit"]
_CPU_SIGNALS = (signal.SIGXCPU, signal.SIGKILL)


def run_code(reply: str, tests: Sequence[str], limits: Limits = DEFAULT_LIMITS) -> bool:
    """Whether the code in ``reply`` passes ``tests`` under ``limits`` (module docstring)."""
    return run_code_outcome(reply, tests, limits) == "passed"


def run_code_outcome(reply: str, tests: Sequence[str],
                     limits: Limits = DEFAULT_LIMITS) -> Outcome:
    """How the code in ``reply`` ran against ``tests`` under ``limits`` (:data:`Outcome`)."""
    token = secrets.token_hex(16)
    files = {"candidate.py": extract_code(reply) + "\n", "tests.py": "\n".join(tests) + "\n",
             "run.py": _RUNNER.replace("TOKEN", repr(token))}
    with tempfile.TemporaryDirectory(prefix="utilityguard-code-") as tmp:
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
        cmd = [sys.executable, "-I", "run.py"]
        if network_namespace():
            cmd = [str(shutil.which("unshare")), "-rn", *cmd]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": tmp}
        out_path = os.path.join(tmp, "stdout.txt")  # a file: RLIMIT_FSIZE caps its size
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(
                cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=functools.partial(_limit, limits),
            )
            try:
                proc.wait(timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return "wall_limit"
        with open(out_path, "rb") as f:
            f.seek(max(0, os.path.getsize(out_path) - 4096))
            tail = f.read().splitlines()[-1:]
    code = proc.returncode
    if any(code in (-sig, 128 + sig) for sig in _CPU_SIGNALS):  # 128 + n: through unshare
        return "cpu_limit"
    return "passed" if code == 0 and token.encode() in tail else "failed"
