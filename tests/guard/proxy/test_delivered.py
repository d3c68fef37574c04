""":class:`guard.proxy.deliver.Delivered`: the decision is recorded once the server has the
response's bytes (the client does not wait for it), and also when sending them fails."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from guard.proxy.deliver import Delivered


def _response(events: list[str]) -> Delivered:
    return Delivered(b'{"ok": true}', media_type="application/json",
                     headers={"x-utilityguard-decision": "answer"},
                     after=lambda: events.append("recorded"))


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def test_recorded_after_the_bytes_are_handed_over() -> None:
    events: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        events.append(message["type"])

    asyncio.run(_response(events)(
        {"type": "http", "method": "POST", "path": "/v1/chat/completions"}, _receive, send))
    assert events == ["http.response.start", "http.response.body", "recorded"]


def test_recorded_when_the_send_fails() -> None:
    events: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        events.append(message["type"])
        if message["type"] == "http.response.body":
            raise OSError("connection reset by peer")

    with pytest.raises(OSError):
        asyncio.run(_response(events)(
            {"type": "http", "method": "POST", "path": "/v1/chat/completions"}, _receive,
            send))
    assert events == ["http.response.start", "http.response.body", "recorded"]
