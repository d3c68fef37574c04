"""Helpers shared by the tests (import as ``from tests.helpers import ...``): running the
``utilityguard`` command in-process and reading its one-line errors. Local servers (free
ports, waiting until a server answers) are in :mod:`benchmarks.perf.servers`."""

from __future__ import annotations

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
