"""The proxy's upstream client path (:class:`guard.proxy.pool.Upstream`): the URL a path is
sent to, kept per path, is the one httpx's client merges for that path (the cache bounded);
a request handed straight to the transport (:meth:`~guard.proxy.pool.Upstream.sent`) is the
one the client's ``send`` would have sent, and only a client whose layers above the
transport do nothing is bypassed."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from guard.proxy.pool import URL_CACHE, Upstream, direct_ok
from utilityguard_base.upstream import cookieless

PATHS = ["chat/completions", "responses", "embeddings", "models", "models/gpt-4o",
         "models/a%2Fb", "files?purpose=x&limit=2", "/chat/completions", "a/../b"]


@pytest.mark.parametrize("base", ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/",
                                  "https://api.example.test/openai/v1"])
def test_the_kept_url_is_the_clients_own(base: str) -> None:
    client = httpx.AsyncClient(base_url=base)
    up = Upstream(client)
    for path in PATHS:
        expected = str(client.build_request("POST", path).url)
        assert str(up.url(path)) == expected
        assert str(up.url(path)) == expected  # kept: the same on the second request
        request = client.build_request("POST", up.url(path), content=b"{}")
        assert str(request.url) == expected
    asyncio.run(client.aclose())


def test_the_cache_is_bounded() -> None:
    client = httpx.AsyncClient(base_url="http://127.0.0.1:8080/v1")
    up = Upstream(client)
    for k in range(URL_CACHE * 3):
        assert str(up.url(f"models/m{k}")) == f"http://127.0.0.1:8080/v1/models/m{k}"
    assert len(up._urls) == URL_CACHE
    asyncio.run(client.aclose())


def _recording() -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True}, headers={"set-cookie": "s=1; Path=/"})

    return seen, httpx.MockTransport(handler)


def _client(transport: httpx.AsyncBaseTransport, **kwargs: object) -> httpx.AsyncClient:
    base = {"base_url": "http://127.0.0.1:8080/v1/", "trust_env": False,
            "cookies": cookieless(), "transport": transport, **kwargs}
    return httpx.AsyncClient(**base)  # type: ignore[arg-type]


def test_a_request_handed_to_the_transport_is_the_one_the_client_would_send() -> None:
    """The same request through the client's ``send`` and straight to its transport: the
    transport receives the same method, URL, headers and body, and the reply is the same."""
    async def go() -> None:
        seen, transport = _recording()
        for direct in (None, transport):
            client = _client(transport)
            up = Upstream(client, transport=direct)
            assert (up._direct is not None) == (direct is not None)
            got = await up.chat({"model": "m", "messages": []}, {"authorization": "Bearer k"})
            assert got == {"ok": True}
            assert len(client.cookies.jar) == 0  # neither path keeps the reply's cookie
            await client.aclose()
        via_client, direct_ = seen
        assert (via_client.method, str(via_client.url)) == (direct_.method, str(direct_.url))
        assert list(via_client.headers.multi_items()) == list(direct_.headers.multi_items())
        assert via_client.content == direct_.content

    asyncio.run(go())


@pytest.mark.parametrize("kwargs", [
    {"auth": ("user", "pass")},
    {"base_url": "http://user:pass@127.0.0.1:8080/v1/"},
    {"event_hooks": {"request": [lambda r: None]}},
    {"follow_redirects": True},
    {"cookies": {"session": "abc"}},
], ids=["auth", "userinfo", "hooks", "redirects", "cookie"])
def test_a_client_whose_layers_do_something_is_not_bypassed(kwargs: dict[str, object]) -> None:
    _, transport = _recording()
    client = _client(transport, **kwargs)
    assert not direct_ok(client)
    assert Upstream(client, transport=transport)._direct is None
    asyncio.run(client.aclose())


def test_the_proxys_own_client_is_bypassed() -> None:
    _, transport = _recording()
    client = _client(transport)
    assert direct_ok(client)
    asyncio.run(client.aclose())
