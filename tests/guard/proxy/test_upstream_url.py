""":meth:`guard.proxy.pool.Upstream.url`: the URL a path is sent to, kept per path, is the
one httpx's client merges for that path, and the cache stays bounded."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from guard.proxy.pool import URL_CACHE, Upstream

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
