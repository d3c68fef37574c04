"""The shared chat client: error translation, retries, retry-after, backoff."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from guard.exceptions import (
    UnusableReply,
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from utilityguard_base import upstream
from utilityguard_base.upstream import SyncChatClient, backoff, retry_after

OK = {"choices": [{"message": {"content": "hi"}}]}


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waited: list[float] = []
    monkeypatch.setattr(upstream.time, "sleep", waited.append)
    monkeypatch.setattr(upstream.random, "random", lambda: 0.0)
    return waited


@pytest.fixture
def client(queued_transport: Any) -> Callable[..., SyncChatClient]:
    def make(responses: list[httpx.Response | Exception], seen: list[httpx.Request],
             **kw: Any) -> SyncChatClient:
        return SyncChatClient("http://up.test/v1", transport=queued_transport(responses, seen),
                              **kw)
    return make


def test_retry_after_seconds_and_http_dates() -> None:
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "-3"}) == 0.0
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (retry_after({"retry-after": future}) or 0) <= 31
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_backoff_doubles_is_capped_and_prefers_retry_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream.random, "random", lambda: 1.0)  # the most jitter: +25%
    assert [backoff(k, {}, base=0.5, cap=60) for k in range(3)] == [0.625, 1.25, 2.5]
    assert backoff(20, {}, base=0.5, cap=60) == 60
    assert backoff(0, {"retry-after": "4"}, base=0.5, cap=60) == 4.0
    assert backoff(0, {"retry-after": "400"}, base=0.5, cap=60) == 60


def test_429_is_retried_after_the_time_the_endpoint_asks(
        client: Any, sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []
    c = client([httpx.Response(429, headers={"retry-after": "3"}, json={}),
                 httpx.Response(200, json=OK)], seen)
    assert c.complete({"model": "m"}) == OK
    assert len(seen) == 2 and sleeps == [3.0]
    assert json.loads(seen[0].content) == {"model": "m"}


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried_with_backoff(
        client: Any, sleeps: list[float], status: int) -> None:
    seen: list[httpx.Request] = []
    c = client([httpx.Response(status)] * 3, seen, retries=3)
    with pytest.raises(UpstreamStatusError) as err:
        c.complete({})
    assert err.value.status == status and len(seen) == 3 and sleeps == [0.25, 0.5]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(
        client: Any, sleeps: list[float], status: int) -> None:
    seen: list[httpx.Request] = []
    c = client([httpx.Response(status, text="nope")], seen)
    with pytest.raises(UpstreamStatusError, match=f"HTTP {status}: nope"):
        c.complete({})
    assert len(seen) == 1 and sleeps == []


@pytest.mark.parametrize(("exc", "kind"), [
    (httpx.ConnectError("refused"), UpstreamUnavailable),
    (httpx.ReadTimeout("slow"), UpstreamTimeout),
])
def test_transport_errors_are_translated_and_retried(
        client: Any, sleeps: list[float], exc: Exception,
                                                     kind: type[UpstreamError]) -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(kind, match=r"up\.test"):
        client([exc, exc], seen, retries=2).complete({})
    assert len(seen) == 2 and sleeps == [0.25]


def test_a_rejected_reply_is_retried_within_the_same_budget(
        client: Any, sleeps: list[float]) -> None:
    seen: list[httpx.Request] = []

    def check(data: dict[str, object]) -> None:
        if data.get("bad"):
            raise UnusableReply("bad reply")

    c = client([httpx.Response(200, json={"bad": 1}), httpx.Response(200, text="not json"),
                 httpx.Response(200, json=OK)], seen, retries=3)
    assert c.complete({}, check=check) == OK
    assert len(seen) == 3


def test_the_api_key_is_sent_and_never_in_an_error() -> None:
    seen: list[httpx.Request] = []
    c = SyncChatClient("http://up.test/v1", api_key="sk-secret-1",
                       transport=httpx.MockTransport(
                           lambda r: seen.append(r) or httpx.Response(401, text="denied")))  # type: ignore[func-returns-value]
    with pytest.raises(UpstreamStatusError) as err:
        c.complete({})
    assert seen[0].headers["authorization"] == "Bearer sk-secret-1"
    assert "sk-secret-1" not in str(err.value) and c.name == "http://up.test/v1"


def test_retries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="retries must be >= 1"):
        SyncChatClient("http://up.test/v1", retries=0)
