"""The bare relay (the floor of ``make perf``): the upstream's bytes, as they are, both ways.

Real servers on 127.0.0.1: the fake upstream and the relay in front of it, each under uvicorn
in a thread; the relay must send the client's body upstream unchanged and answer the
upstream's body, status and content type unchanged (non-streaming and streaming), with the
guard's client settings.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from benchmarks.perf import fake_upstream
from benchmarks.perf.relay import client_for, create_relay
from guard.settings import Settings
from tests.guard.proxy.conftest import Served

ASK = {"model": "perf-model", "messages": [{"role": "user", "content": "capital?"}]}


@pytest.fixture(scope="module")
def relay() -> Iterator[str]:
    upstream = Served(fake_upstream.app)
    served = Served(create_relay(upstream.url + "/v1"))
    try:
        yield served.url
    finally:
        served.stop()
        upstream.stop()


def test_a_completion_comes_back_byte_for_byte(relay: str) -> None:
    r = httpx.post(relay + "/v1/chat/completions", json=ASK, timeout=10.0)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.content == fake_upstream.COMPLETION


def test_a_stream_comes_back_byte_for_byte(relay: str) -> None:
    with httpx.stream("POST", relay + "/v1/chat/completions", json={**ASK, "stream": True},
                      timeout=10.0) as r:
        body = b"".join(r.iter_bytes())
        assert r.headers["content-type"].startswith("text/event-stream")
    assert body == fake_upstream.STREAM


def test_the_upstream_status_is_relayed(relay: str) -> None:
    ask: dict[str, Any] = {**ASK, "messages": [{"role": "user", "content": "perf-fail"}]}
    r = httpx.post(relay + "/v1/chat/completions", json=ask, timeout=10.0)
    assert r.status_code == 503 and r.content == fake_upstream.FAILURE


def test_the_client_is_configured_as_the_guard_proxy_configures_its_own() -> None:
    s = Settings(_env_file=None)
    client = client_for("http://127.0.0.1:9/v1")
    assert str(client.base_url) == "http://127.0.0.1:9/v1/"
    assert client.timeout == httpx.Timeout(s.read_timeout, connect=s.connect_timeout,
                                           pool=s.pool_timeout)
    assert client._trust_env is False
