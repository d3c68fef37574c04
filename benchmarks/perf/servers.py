"""Local servers for the performance benchmarks and the tests: a free port on 127.0.0.1 and
waiting until a started server answers (one home for both; the tests import them too)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from utilityguard_base.exceptions import ServerError

__all__ = ["ServerError", "free_port", "free_ports", "refusing_port", "wait_until_serving"]


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports on 127.0.0.1: each stays bound until all are drawn, so two
    calls of :func:`free_port` in a row cannot hand the same number to two servers."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


@contextmanager
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections for as long as the block runs: bound but
    never listening, so no server started meanwhile (not even one whose own :func:`free_port`
    drew the same number) can take it, and a connection to it is refused, never accepted."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def wait_until_serving(url: str, proc: subprocess.Popen[bytes], *, timeout: float = 60.0,
                       log: Path | None = None, poll: float = 0.2) -> None:
    """Return once ``GET url`` answers with a status below 500; :class:`ServerError` when
    ``proc`` exits first or ``timeout`` seconds pass (with the end of ``log``, if given)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ServerError(f"server for {url} exited with {proc.returncode}{_tail(log)}")
        try:
            if httpx.get(url, timeout=2.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise ServerError(f"{url} did not answer in {timeout:.0f} s{_tail(log)}")
        time.sleep(poll)


def _tail(log: Path | None) -> str:
    if log is None or not log.exists():
        return ""
    return ":\n" + log.read_text(errors="replace")[-3000:]
