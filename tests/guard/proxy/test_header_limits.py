"""Request heads are bounded (issue 36, item 5): a real ``utilityguard serve`` process.

Three unauthenticated 200 MB headers took a proxy from 327 to 700 MB of memory before its
401s. Now a head over ``--max-header-bytes`` (or with more than ``--max-headers`` headers) is
answered 431 in the OpenAI envelope and the connection closed, before authentication; a
client still sending a huge header is cut off after the bound plus one read, so the server's
memory does not follow it.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

KEY = "sk-head-1"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    return {**env, "UTILITYGUARD_API_KEYS": KEY}


def _raw(url: str, head: bytes, *, send_more: int = 0) -> tuple[int, bytes]:
    """Send ``head`` (then up to ``send_more`` bytes of one endless header) and read the
    response: ``(status, body)``; 0 when the server closed without one."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(head)
        sent, chunk = 0, b"x" * 65536
        try:
            while sent < send_more:
                s.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed on us: what it answered is still readable
        data = b""
        try:
            while part := s.recv(65536):
                data += part
        except ConnectionResetError:
            pass
    if not data:
        return 0, b""
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


@pytest.fixture
def serve(serve_process: Callable[..., Any], upstream: Any) -> Callable[..., Any]:
    def start(*args: str) -> Any:
        return serve_process(["--upstream", upstream[1].url + "/v1", *args], env=_env())
    return start


def test_a_huge_header_is_431_before_authentication(serve: Callable[..., Any]) -> None:
    served = serve()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + \
        b"\r\n\r\n"
    status, body = _raw(served.url, head)
    assert status == 431
    err = json.loads(body)["error"]
    assert err["code"] == "request_header_too_large" and "--max-header-bytes" in err["message"]


def test_too_many_headers_is_431(serve: Callable[..., Any]) -> None:
    served = serve("--max-headers", "20")
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(25)) + b"\r\n"
    status, body = _raw(served.url, head)
    assert status == 431 and b"--max-headers" in body
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(15)) + b"Connection: close\r\n\r\n"
    assert _raw(served.url, ok)[0] == 200


def test_the_bound_is_configurable_and_ordinary_requests_pass(serve: Callable[..., Any]
                                                              ) -> None:
    served = serve("--max-header-bytes", "4096")
    with httpx.Client(base_url=served.url, timeout=20) as c:
        fine = c.post("/v1/chat/completions", headers={"authorization": f"Bearer {KEY}",
                                                       "x-pad": "p" * 3000},
                      json={"model": "m", "messages": [{"role": "user", "content": "sure"}]})
        assert fine.status_code == 200, fine.text
        big = c.post("/v1/chat/completions", headers={"authorization": f"Bearer {KEY}",
                                                      "x-pad": "p" * 5000},
                     json={"model": "m", "messages": [{"role": "user", "content": "sure"}]})
        assert big.status_code == 431
        assert c.get("/healthz").status_code == 200  # the server serves on


def test_an_endless_header_does_not_grow_the_server(serve: Callable[..., Any]) -> None:
    """Three clients each streaming a 64 MB header: each is cut off near the bound, and the
    server's resident memory grows by far less than what they sent."""
    served = serve()
    before = _rss_kib(served.proc.pid)
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Endless: "
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(
        _raw(served.url, head, send_more=64 * 1024 * 1024)[0])) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    grown_kib = _rss_kib(served.proc.pid) - before
    assert results == [431] * 3
    assert grown_kib < 32 * 1024, f"the server grew by {grown_kib} KiB"
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
