"""The proxy on either upstream transport (httpx's own, and aiohttp's with the
``fast-upstream`` extra): a reply's header line is bounded alike on both, and the start-up log
names the transport in use."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from guard.proxy import aio_transport, create_app
from guard.settings import Settings
from tests.guard.proxy.conftest import KeywordCost, Served
from tests.guard.proxy.test_upstream_cookies import COMPLETION

TRANSPORTS = ["httpx", "aiohttp"]


def _use(transport: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if transport == "aiohttp" and not aio_transport.available():
        pytest.skip("aiohttp is not installed (the fast-upstream extra) or not in use")
    if transport == "httpx":
        monkeypatch.setattr(aio_transport, "available", lambda: False)


@pytest.fixture
def long_header_upstream() -> Iterator[Served]:
    """An upstream whose chat replies carry an ``x-big`` header as long as the request's
    ``header_size`` field says (the proxy forwards a body's unknown fields)."""
    async def chat(request: Request) -> JSONResponse:
        size = int((await request.json())["header_size"])
        return JSONResponse(COMPLETION, headers={"x-big": "a" * size})

    served = Served(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]))
    yield served
    served.stop()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_long_upstream_header_line_passes_and_an_over_long_one_is_a_clear_502(
        transport: str, monkeypatch: pytest.MonkeyPatch, long_header_upstream: Served,
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI]) -> None:
    _use(transport, monkeypatch)
    client = make_client(start_proxy(long_header_upstream.url))

    def ask(size: int) -> Any:
        return client.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "what is 2 + 2?"}],
            extra_body={"header_size": size})

    # over aiohttp's default 8,190: read and decided (no logprobs in the reply: refused)
    assert ask(50_000).headers["x-utilityguard-decision"] == "refuse"
    with pytest.raises(openai.APIStatusError) as info:
        ask(200_000)  # over the 100 kB limit
    assert info.value.status_code == 502
    assert info.value.body["code"] == "upstream_unavailable"
    message = info.value.body["message"]
    assert message.startswith("cannot reach the upstream at ")
    assert "\n" not in message and "Traceback" not in message and len(message) < 500


@pytest.mark.parametrize(("transport", "said"), [
    ("httpx", "upstream client: httpx's own transport (install utilityguard[fast-upstream] "
              "for aiohttp)"),
    ("aiohttp", "upstream client: aiohttp connections (fast-upstream extra)")])
def test_the_start_up_log_names_the_upstream_transport(
        transport: str, said: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, start_proxy: Callable[..., Served]) -> None:
    _use(transport, monkeypatch)
    caplog.set_level(logging.INFO, logger="guard.proxy")
    start_proxy().stop()
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("guard.proxy")]
    assert said in lines
    assert sum(line.startswith("upstream client: ") for line in lines) == 1


def test_the_start_up_log_names_an_injected_transport(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="guard.proxy")
    settings = Settings(_env_file=None, upstream="http://upstream.test/v1", policy="none")
    app = create_app(settings, httpx.MockTransport(lambda r: httpx.Response(200)),
                     cost_model=KeywordCost())
    with TestClient(app):
        pass
    assert "upstream client: the transport given to create_app (MockTransport)" in [
        r.getMessage() for r in caplog.records]
