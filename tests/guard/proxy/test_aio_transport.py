"""The aiohttp transport behind the proxy's httpx client, against hostile raw-socket peers on
127.0.0.1: every failure arrives as the httpx error the proxy's translation expects
(:func:`utilityguard_base.upstream.map_exceptions`), and nothing of httpx's behaviour that the
guard relies on changes (no redirects, no cookies kept, bodies decoded, the pool bounded)."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from guard.exceptions import UpstreamPoolExhausted, UpstreamTimeout, UpstreamUnavailable
from utilityguard_base.upstream import map_exceptions

aio = pytest.importorskip("guard.proxy.aio_transport")
if not aio.available():  # pragma: no cover - depends on what is installed
    pytest.skip("aiohttp is not installed (the fast-upstream extra) or not in use",
                allow_module_level=True)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            await reader.readexactly(int(line.split(b":", 1)[1]))
    return head


def _reply(body: bytes, *extra: bytes, status: bytes = b"200 OK") -> bytes:
    return b"\r\n".join([b"HTTP/1.1 " + status, b"content-length: " + str(len(body)).encode(),
                         *extra, b"", body])


def _closing(handler: Handler) -> Handler:
    """``handler``, its connection closed however it ends."""
    async def run(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            await handler(r, w)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            w.close()

    return run


async def _serve(handler: Handler, go: Callable[[int], Awaitable[Any]], *,
                 sock: socket.socket | None = None) -> Any:
    server = await (asyncio.start_server(_closing(handler), sock=sock) if sock is not None
                    else asyncio.start_server(_closing(handler), "127.0.0.1", 0))
    try:
        return await go(server.sockets[0].getsockname()[1])
    finally:
        await asyncio.sleep(0.1)  # the handlers see the client's close
        server.close()
        await server.wait_closed()


def _run(handler: Handler, go: Callable[[httpx.AsyncClient], Awaitable[Any]], *,
         limits: httpx.Limits | None = None, timeout: httpx.Timeout | None = None,
         transport: str = "aiohttp") -> Any:
    """``go`` with a client of ``handler``'s server on the ``transport`` named (``httpx``:
    httpx's own)."""
    async def with_client(port: int) -> Any:
        lim = limits or httpx.Limits(max_connections=10)
        chosen = aio.AiohttpTransport(lim) if transport == "aiohttp" else None
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}/v1/", limits=lim,
                                     transport=chosen, trust_env=False,
                                     timeout=timeout or httpx.Timeout(5.0)) as client:
            return await go(client)

    return asyncio.run(_serve(handler, with_client))


def test_a_reply_and_its_headers_arrive_as_httpx_gives_them() -> None:
    seen: list[bytes] = []

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            seen.append(await _request(r))
            w.write(_reply(b'{"ok": true}', b"content-type: application/json", b"x-a: 1",
                           b"x-a: 2"))

    async def go(client: httpx.AsyncClient) -> list[httpx.Response]:
        return [await client.post("chat/completions", json={"q": i}) for i in range(3)]

    replies = _run(handler, go)
    assert [r.json() for r in replies] == [{"ok": True}] * 3
    assert replies[0].headers.get_list("x-a") == ["1", "2"]
    assert len(seen) == 3 and b"POST /v1/chat/completions HTTP/1.1" in seen[0]
    assert b"content-length: 7" in seen[0].lower()  # httpx's compact {"q":0}


def test_gzip_is_decoded_and_redirects_and_cookies_are_not_followed() -> None:
    """The transport alone (no httpx client, whose own jar is not the transport's): a
    redirect is answered as it is, a cookie it set is not sent again, gzip is decoded."""
    requests: list[bytes] = []

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            head = await _request(r)
            requests.append(head)
            if b"GET /v1/redirect" in head:
                w.write(_reply(b"", b"location: /v1/elsewhere", b"set-cookie: s=secret",
                               status=b"302 Found"))
            else:
                w.write(_reply(gzip.compress(b'{"z": 1}'), b"content-encoding: gzip"))

    async def go(port: int) -> tuple[int, bytes]:
        transport = aio.AiohttpTransport(httpx.Limits())
        try:
            moved = await transport.handle_async_request(
                httpx.Request("GET", f"http://127.0.0.1:{port}/v1/redirect"))
            await moved.aread()
            zipped = await transport.handle_async_request(
                httpx.Request("GET", f"http://127.0.0.1:{port}/v1/zipped"))
            return moved.status_code, await zipped.aread()
        finally:
            await transport.aclose()

    status, body = asyncio.run(_serve(handler, go))
    assert status == 302  # not followed
    assert len(requests) == 2 and b"secret" not in requests[1]  # the cookie was not kept
    assert json.loads(body) == {"z": 1}  # sent gzipped, decoded by httpx's response


def test_refused_connection_is_unavailable() -> None:
    async def go() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        async with httpx.AsyncClient(transport=aio.AiohttpTransport(httpx.Limits())) as c:
            await c.get(f"http://127.0.0.1:{port}/v1/models")

    with pytest.raises(UpstreamUnavailable), map_exceptions("up"):
        asyncio.run(go())


@pytest.mark.parametrize("reply", [b"NOT HTTP AT ALL\r\n\r\n",
                                   b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort"])
def test_a_malformed_or_cut_reply_is_unavailable(reply: bytes) -> None:
    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _request(r)
        w.write(reply)
        await w.drain()
        w.close()

    async def go(client: httpx.AsyncClient) -> bytes:
        return (await client.get("models")).content

    with pytest.raises(UpstreamUnavailable), map_exceptions("up"):
        _run(handler, go)


def test_a_silent_upstream_is_a_read_timeout() -> None:
    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _request(r)
        await asyncio.sleep(5)

    async def go(client: httpx.AsyncClient) -> httpx.Response:
        return await client.get("models")

    with pytest.raises(httpx.ReadTimeout):
        _run(handler, go, timeout=httpx.Timeout(0.3))
    with pytest.raises(UpstreamTimeout), map_exceptions("up"):
        _run(handler, go, timeout=httpx.Timeout(0.3))


def test_a_full_pool_is_a_pool_timeout_and_frees_its_slots() -> None:
    release = asyncio.Event()

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            head = await _request(r)
            if b"slow" in head:
                await release.wait()
            w.write(_reply(b"{}"))

    async def go(client: httpx.AsyncClient) -> tuple[str, int]:
        held = [asyncio.ensure_future(client.get("slow")) for _ in range(2)]
        await asyncio.sleep(0.2)
        try:
            with map_exceptions("up", pool_timeout=0.2):
                await client.get("fast")
            outcome = "served"
        except UpstreamPoolExhausted:
            outcome = "exhausted"
        release.set()
        await asyncio.gather(*held)
        return outcome, (await client.get("fast")).status_code  # the slots came back

    assert _run(handler, go, limits=httpx.Limits(max_connections=2),
                timeout=httpx.Timeout(5.0, pool=0.2)) == ("exhausted", 200)


def test_the_url_is_sent_as_httpx_encoded_it_without_user_info() -> None:
    seen: list[bytes] = []

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            seen.append(await _request(r))
            w.write(_reply(b"{}"))

    async def go(port: int) -> int:
        async with httpx.AsyncClient(transport=aio.AiohttpTransport(httpx.Limits())) as c:
            r = await c.get(f"http://user:pw@127.0.0.1:{port}/v1/a%7Eb%2Fc?q=1%202&r=%26")
            return r.status_code

    assert asyncio.run(_serve(handler, go)) == 200
    assert seen[0].startswith(b"GET /v1/a%7Eb%2Fc?q=1%202&r=%26 HTTP/1.1\r\n")
    assert b"\r\nauthorization: Basic dXNlcjpwdw==\r\n" in seen[0]  # user:pw, as httpx sends it


TRANSPORTS = ["aiohttp", "httpx"]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("size", "fails"), [(9000, False), (50_000, False), (200_000, True)])
def test_a_header_line_is_bounded_alike_on_both_transports(size: int, fails: bool,
                                                          transport: str) -> None:
    """A 9 kB line (over aiohttp's default 8,190) and a 50 kB one pass on both transports;
    a 200 kB one (over the 100 kB limit) is a malformed reply on both."""
    assert size < aio.MAX_HEADER_LINE or fails

    async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await _request(r)
        w.write(_reply(b"{}", b"x-big: " + b"a" * size))
        await w.drain()

    async def go(client: httpx.AsyncClient) -> int:
        return (await client.get("models")).status_code

    if fails:
        with pytest.raises(UpstreamUnavailable), map_exceptions("up"):
            _run(handler, go, transport=transport)
    else:
        assert _run(handler, go, transport=transport) == 200


def _small_receive_buffer() -> socket.socket:
    """A listening socket on 127.0.0.1 whose connections take little before the sender blocks."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def _upload_to_a_peer_that_never_reads(transport: str) -> None:
    """POST 16 MB (more than the kernel's buffers take) to a peer that accepts the connection
    and never reads, with a 0.3 s write timeout (the others 30 s, the whole bounded at 20 s)."""
    async def main() -> None:
        done = asyncio.Event()

        async def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            await asyncio.wait_for(done.wait(), 20)  # never reads; ends with the client

        async def post(port: int) -> None:
            lim = httpx.Limits(max_connections=10)
            try:
                async with httpx.AsyncClient(
                        base_url=f"http://127.0.0.1:{port}/v1/", limits=lim, trust_env=False,
                        transport=aio.AiohttpTransport(lim) if transport == "aiohttp" else None,
                        timeout=httpx.Timeout(30.0, write=0.3)) as client:
                    await asyncio.wait_for(client.post("chat/completions",
                                                       content=b"x" * 2**24), 20)
            finally:
                done.set()

        await _serve(handler, post, sock=_small_receive_buffer())

    asyncio.run(main())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_upstream_that_never_reads_the_body_is_a_write_timeout(transport: str) -> None:
    """The write timeout ends a stalled upload as :class:`httpx.WriteTimeout` on both
    transports, which the proxy answers as a timeout (HTTP 504)."""
    with pytest.raises(httpx.WriteTimeout):
        _upload_to_a_peer_that_never_reads(transport)
    start = time.monotonic()
    with pytest.raises(UpstreamTimeout) as info, map_exceptions("up"):
        _upload_to_a_peer_that_never_reads(transport)
    assert "WriteTimeout" in str(info.value)
    assert time.monotonic() - start < 10.0  # the 0.3 s timeout, not the 20 s guards


def test_a_malformed_reply_error_names_neither_the_url_nor_the_reply_bytes() -> None:
    """aiohttp's own text of a malformed reply holds the request URL (its query may carry a
    key) and the first bytes of the offending line: neither reaches the error message."""
    aiohttp = pytest.importorskip("aiohttp")
    import yarl
    from aiohttp.client_reqrep import RequestInfo
    from multidict import CIMultiDict, CIMultiDictProxy

    from guard.proxy.aio_transport import _error

    url = yarl.URL("http://127.0.0.1:9/v1/chat/completions?api-key=SECRET-q")
    info = RequestInfo(url, "POST", CIMultiDictProxy(CIMultiDict()), url)
    exc = aiohttp.ClientResponseError(
        info, (), status=400,
        message="Got more than 102400 bytes when reading: b'X-Echo: SECRET-h aaaa'")
    assert "SECRET-q" in str(exc) and "SECRET-h" in str(exc)  # what aiohttp says
    request = httpx.Request("POST", str(url))
    err = _error(exc, request, reading=False)
    assert isinstance(err, httpx.RemoteProtocolError)
    assert str(err) == "Got more than 102400 bytes when reading"
