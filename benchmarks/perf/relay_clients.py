"""Bare relays that differ from :mod:`benchmarks.perf.relay` in one piece each (the TTFT floor).

Raw ASGI apps (no FastAPI, no Starlette) that relay ``POST .../chat/completions`` to the
upstream named by :data:`~benchmarks.perf.relay.UPSTREAM_ENV`, each with another upstream
client, so that a benchmark can tell what the relay's hop costs, piece by piece:

* :data:`asgi_httpcore`: the relay's :class:`httpx.AsyncClient`
  (:func:`benchmarks.perf.relay.client_for`) on httpx's own transport (httpcore), without
  the framework;
* :data:`asgi_aiohttp`: an ``aiohttp`` client session (installed with the ``litellm`` extra;
  the module imports without it, the app fails at start-up);
* :data:`asgi_asyncio`: a minimal keep-alive HTTP/1.1 client on asyncio streams (one request
  per pooled connection, ``content-length`` or chunked replies, a pooled connection the
  upstream closed replaced once), the least a client can do.

A JSON reply is answered with its ``content-length``; a stream is relayed chunk by chunk as
it arrives. Benchmark code only: no limits, no error handling beyond failing the request.
Serve one with ``UTILITYGUARD_PERF_RELAY_UPSTREAM=http://127.0.0.1:PORT/v1 python -m uvicorn
benchmarks.perf.relay_clients:asgi_aiohttp --port N``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import httpx

from benchmarks.perf.fake_upstream import read_body
from benchmarks.perf.relay import UPSTREAM_ENV, client_for

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
#: ``(upstream URL, the request body) -> (status, content type, is a stream, body chunks)``
Fetch = Callable[[str, bytes], Awaitable[tuple[int, bytes, bool, AsyncIterator[bytes]]]]


def _upstream() -> str:
    upstream = os.environ.get(UPSTREAM_ENV)
    if not upstream:
        raise SystemExit(f"set {UPSTREAM_ENV} to the upstream's http://HOST:PORT/v1")
    return upstream.rstrip("/")


def _app(start: Callable[[str], Awaitable[Fetch]]) -> Callable[..., Awaitable[None]]:
    """An ASGI app relaying chat completions with the client ``start`` builds."""
    state: dict[str, Fetch] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    state["fetch"] = await start(_upstream())
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if not scope["path"].endswith("/chat/completions"):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"data": []}'})
            return
        status, ctype, stream, chunks = await state["fetch"](_upstream(), await read_body(receive))
        if not stream:
            data = b"".join([c async for c in chunks])
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", ctype), (b"content-length", str(len(data)).encode())]})
            await send({"type": "http.response.body", "body": data})
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype)]})
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


async def _httpcore(upstream: str) -> Fetch:
    client = client_for(upstream, httpcore=True)

    async def fetch(_: str, body: bytes) -> tuple[int, bytes, bool, AsyncIterator[bytes]]:
        request = client.build_request("POST", "chat/completions", content=body,
                                       headers={"content-type": "application/json"})
        response = await client.send(request, stream=True)
        ctype = response.headers.get("content-type", "")

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            finally:
                await response.aclose()

        return response.status_code, ctype.encode(), ctype.startswith("text/event-stream"), \
            chunks()

    return fetch


async def _aiohttp(upstream: str) -> Fetch:
    import aiohttp  # the litellm extra

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100))

    async def fetch(_: str, body: bytes) -> tuple[int, bytes, bool, AsyncIterator[bytes]]:
        response = await session.post(f"{upstream}/chat/completions", data=body,
                                      headers={"content-type": "application/json"})
        ctype = response.headers.get("content-type", "")

        async def chunks() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.content.iter_any():
                    yield chunk
            finally:
                response.release()

        return response.status, ctype.encode(), ctype.startswith("text/event-stream"), \
            chunks()

    return fetch


async def _asyncio(upstream: str) -> Fetch:
    url = httpx.URL(upstream)
    path = url.raw_path.decode().rstrip("/") + "/chat/completions"
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    request = (f"POST {path} HTTP/1.1\r\nHost: {url.host}\r\nContent-Type: "
               "application/json\r\nContent-Length: {}\r\n\r\n")

    async def exchange(body: bytes, fresh: bool
                       ) -> tuple[tuple[asyncio.StreamReader, asyncio.StreamWriter], bytes]:
        conn = idle.pop() if idle and not fresh else \
            await asyncio.open_connection(url.host, url.port)
        conn[1].write(request.format(len(body)).encode() + body)
        return conn, await conn[0].readuntil(b"\r\n\r\n")

    async def fetch(_: str, body: bytes) -> tuple[int, bytes, bool, AsyncIterator[bytes]]:
        try:
            conn, head = await exchange(body, fresh=False)
        except (asyncio.IncompleteReadError, ConnectionError):  # the upstream closed it idle
            conn, head = await exchange(body, fresh=True)
        reader = conn[0]
        lines = head.split(b"\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(b":") for line in lines[1:] if b":" in line)}
        ctype = headers.get(b"content-type", b"")

        async def chunks() -> AsyncIterator[bytes]:
            if b"content-length" in headers:
                yield await reader.readexactly(int(headers[b"content-length"]))
            else:  # chunked
                while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
                    yield await reader.readexactly(size)
                    await reader.readexactly(2)
                await reader.readuntil(b"\r\n")
            idle.append(conn)

        return int(lines[0].split()[1]), ctype, ctype.startswith(b"text/event-stream"), \
            chunks()

    return fetch


asgi_httpcore = _app(_httpcore)
asgi_aiohttp = _app(_aiohttp)
asgi_asyncio = _app(_asyncio)
