"""Helpers shared by the tests (import as ``from tests.helpers import ...``): running the
``utilityguard`` command in-process and reading its one-line errors. Local servers (free
ports, waiting until a server answers) are in :mod:`benchmarks.perf.servers`. Headless
Chromium for the tests that render HTML (the audit report, the docs site): :func:`chromium`,
:func:`run_chromium`."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from guard.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``utilityguard *argv`` run in this process."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    """The one line of a user error (fails on a traceback or several lines)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("utilityguard: error: ")
    return lines[0]


#: set by .ci/run: a missing service (PostgreSQL, Chromium) fails its tests instead of skipping
REQUIRE_SERVICES = os.environ.get("UTILITYGUARD_TEST_REQUIRE_SERVICES") == "1"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")


def chromium() -> str:
    """The Chromium executable; skips the test when there is none (fails under
    ``UTILITYGUARD_TEST_REQUIRE_SERVICES=1``)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        reason = "chromium is not installed (apt-get install chromium, or make services)"
        if REQUIRE_SERVICES:
            pytest.fail(reason + " (UTILITYGUARD_TEST_REQUIRE_SERVICES=1)")
        pytest.skip(reason)
    return exe


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with ``args`` (``--dump-dom URL``, ``--screenshot=PNG URL``), in a
    fresh profile, no network services of its own."""
    with tempfile.TemporaryDirectory(prefix="utilityguard-chromium-") as profile:
        return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               *args], capture_output=True, text=True, timeout=180,
                              check=False)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a server process a test started (wait 20 s), then kill it (wait 5 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
