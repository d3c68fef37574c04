"""An upstream's cookies are never kept. The proxy's upstream client is shared by every caller,
so a ``Set-Cookie`` in one reply, kept and sent again with the next request, would carry one
client's upstream session to another client. Checked on both upstream transports (httpx's own
and, with the ``fast-upstream`` extra, aiohttp's): the httpx client above either holds the jar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from guard.proxy import aio_transport
from tests.guard.proxy.conftest import Served

COMPLETION = {"id": "c-1", "object": "chat.completion", "created": 0, "model": "m",
              "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                           "message": {"role": "assistant", "content": "4"}}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


@pytest.fixture
def cookie_upstream() -> Iterator[tuple[Served, list[str | None]]]:
    """An upstream that sets a session cookie on every reply and records the Cookie header
    of every request it receives."""
    seen: list[str | None] = []

    async def chat(request: Request) -> JSONResponse:
        await request.body()
        seen.append(request.headers.get("cookie"))
        return JSONResponse(COMPLETION, headers={
            "set-cookie": "session=alice-secret; Path=/; Max-Age=3600"})

    served = Served(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]))
    yield served, seen
    served.stop()


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_a_cookie_an_upstream_sets_is_never_sent_upstream_again(
        transport: str, monkeypatch: pytest.MonkeyPatch, cookie_upstream: Any,
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI]) -> None:
    if transport == "aiohttp" and not aio_transport.available():
        pytest.skip("aiohttp is not installed (the fast-upstream extra) or not in use")
    if transport == "httpx":
        monkeypatch.setattr(aio_transport, "available", lambda: False)
    upstream, seen = cookie_upstream
    client = make_client(start_proxy(upstream.url))
    for who in ("alice", "bob", "carol"):
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"{who}: what is 2 + 2?"}])
    assert seen == [None, None, None]
