"""The medium findings of issue 20, each against a real proxy on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from guard.refusal_detection import DEFAULT_REFUSAL_TEXT

METRICS_KEY = "sk-metrics-9"
ADMIN = "sk-admin-9"


def test_a_lone_surrogate_is_priced_not_a_500(start_proxy: Callable[..., Any]) -> None:
    from cost_models import load_default

    proxy = start_proxy(cost_model=load_default())
    body = b'{"model": "m", "messages": [{"role": "user", "content": "\\ud800 x sure"}]}'
    r = httpx.post(proxy.url + "/v1/chat/completions", content=body, timeout=30,
                   headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert float(r.headers["x-utilityguard-cost"]) > 0


def test_deeply_nested_admin_reload_is_400(start_proxy: Callable[..., Any]) -> None:
    proxy = start_proxy(policy="smollm2", admin_api_key=ADMIN)
    r = httpx.post(proxy.url + "/admin/reload", content=b"[" * 100_000 + b"]" * 100_000,
                   headers={"authorization": f"Bearer {ADMIN}"}, timeout=30)
    assert r.status_code == 400, r.text


def test_a_refused_reply_keeps_only_the_allow_listed_envelope(client: Any) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "dose unsure"}])
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    body = raw.http_response.json()
    assert body["choices"][0]["message"]["content"] == DEFAULT_REFUSAL_TEXT
    assert "system_fingerprint" not in body and "service_tier" not in body  # the upstream's


def test_readyz_answers_while_the_request_pool_is_busy(start_proxy: Callable[..., Any],
                                                        tmp_path: Path) -> None:
    """Every pooled connection held by slow requests: readiness has its own client, so it
    still says ready (it used to wait for a pooled connection and answer 503); and it does
    not show where the audit database lives."""
    db = tmp_path / "secret-place" / "audit.db"
    db.parent.mkdir()
    proxy = start_proxy(max_connections=2, pool_timeout=5.0, read_timeout=10.0,
                        audit_path=db)

    async def main() -> tuple[list[int], httpx.Response]:
        async with httpx.AsyncClient(base_url=proxy.url, timeout=30) as c:
            slow = [asyncio.create_task(c.post("/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "sleep sure"}]}))
                for _ in range(4)]
            await asyncio.sleep(0.5)  # the two pooled connections are taken
            ready = await c.get("/readyz")
            return [r.status_code for r in await asyncio.gather(*slow)], ready

    codes, ready = asyncio.run(main())
    assert ready.status_code == 200, ready.text
    assert ready.json()["status"] == "ready"
    assert "secret-place" not in ready.text and str(db) not in ready.text
    assert codes.count(200) >= 2  # the slow requests were really in flight


def test_metrics_can_require_a_key(start_proxy: Callable[..., Any]) -> None:
    proxy = start_proxy(metrics_api_key=METRICS_KEY)
    assert httpx.get(proxy.url + "/metrics", timeout=10).status_code == 401
    r = httpx.get(proxy.url + "/metrics", timeout=10,
                  headers={"authorization": f"Bearer {METRICS_KEY}"})
    assert r.status_code == 200 and "utilityguard" in r.text
    open_proxy = start_proxy()  # the default: open, as before
    assert httpx.get(open_proxy.url + "/metrics", timeout=10).status_code == 200


def _port_free(port: int) -> bool:
    with socket.socket() as s:  # as a restarted server binds (SO_REUSEADDR)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_workers_die_when_the_parent_is_sigkilled(upstream: Any, serve_process: Any) -> None:
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--log-level", "warning",
                            "--workers", "2"], timeout=120)
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
    os.kill(served.proc.pid, signal.SIGKILL)
    served.proc.wait(timeout=10)
    if served.proc.stdout is not None:  # nothing will read it now
        served.proc.stdout.close()
    deadline = time.monotonic() + 60  # the workers shut down gracefully (SIGTERM)
    while not _port_free(served.port):
        if time.monotonic() > deadline:
            pytest.fail("the workers kept the port after their parent was SIGKILLed")
        time.sleep(0.5)
