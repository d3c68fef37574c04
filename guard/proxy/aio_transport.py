"""The proxy's upstream connections on aiohttp, behind httpx's API (the ``fast-upstream`` extra).

httpx's own transport (httpcore: the h11 parser in Python, anyio streams, a pool that walks
every connection and polls its socket on each request and each reply) cost the proxy more CPU
than anything of the guard's own: about 1.5 ms per request on the project's 2-core machine,
and a bare relay on it answered a fifth of what the same relay did on aiohttp
(docs/performance.md, ``python -m benchmarks.perf client_floor``). :class:`AiohttpTransport`
is an :class:`httpx.AsyncBaseTransport`: the proxy keeps its :class:`httpx.AsyncClient`,
requests, responses, limits and error translation
(:func:`utilityguard_base.upstream.map_exceptions`) unchanged; only the connections, the HTTP/1.1
parsing (aiohttp's C parser) and the pool are aiohttp's.

What httpx's transport did, this one does:

* at most ``max_connections`` requests in flight, waiting at most the request's ``pool``
  timeout for a free one (else :class:`httpx.PoolTimeout`: the pool is exhausted); idle
  connections are kept for ``keepalive_expiry`` seconds (none when ``max_keepalive`` is 0),
  at most ``max_connections`` of them (aiohttp has no separate bound on idle ones);
* the ``connect`` timeout for connecting, the ``write`` timeout for sending the request's
  body and the ``read`` timeout between received bytes (:class:`httpx.ConnectTimeout` /
  :class:`httpx.WriteTimeout` / :class:`httpx.ReadTimeout`). aiohttp has no write timeout,
  so the body is sent by :class:`_Upload` within ``write`` seconds: httpcore sends a body
  given as bytes in one write, bounded by that timeout, so both transports bound the same
  thing (an upstream that stops reading an upload is a write timeout, HTTP 504, on both);
* the URL's path and query as httpx encoded them (not re-quoted), its user info left out as
  httpcore leaves it out (httpx sends it as the ``Authorization`` header);
* no redirects, no cookies kept (a cookie one client's reply set is never sent for another),
  no proxy from the environment, no decompression (httpx decodes ``content-encoding`` as it
  did), the request's headers as httpx built them;
* every other failure (refused, reset, DNS, TLS, a malformed reply) as an
  :class:`httpx.TransportError` with aiohttp's message.

TLS is verified as httpx verifies it: the context is httpx's own
(:func:`httpx.create_ssl_context`, certifi's bundle; the proxy's clients do not read
``SSL_CERT_FILE``, ``trust_env=False``).

A reply's status line and each of its header lines may be at most :data:`MAX_HEADER_LINE`
bytes (100 kB), on both transports: httpx's own (h11, under httpcore) bounds a reply's whole
head at 100 kB (it reads 64 kB at a time and fails once more than 100 kB are buffered without
a complete head, so a head of up to 164 kB may pass when it arrives at once); aiohttp bounds
each line (8,190 bytes by default; :data:`MAX_HEADER_LINE` here) and the number of header
lines (128, its default), not the whole head (which may so hold up to 128 lines of 100 kB).
A longer line fails the exchange as a malformed reply (HTTP 502) on either; more than 128
header lines fail it on aiohttp only.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from guard.proxy.deadline import bounded

try:  # the fast-upstream extra
    import aiohttp
    import yarl
except ImportError:  # pragma: no cover - depends on what is installed
    aiohttp = None  # type: ignore[assignment]

__all__ = ["MAX_HEADER_LINE", "AiohttpTransport", "available", "description",
           "transport_for"]

#: The longest status or header line a reply may have (bytes): h11's bound on a reply's
#: whole head under httpx's own transport (httpcore's ``MAX_INCOMPLETE_EVENT_SIZE``), so a
#: line one transport accepts the other accepts too.
MAX_HEADER_LINE = 100 * 1024


def available() -> bool:
    """Whether aiohttp is installed (the ``fast-upstream`` extra)."""
    return aiohttp is not None


def transport_for(limits: httpx.Limits) -> httpx.AsyncBaseTransport | None:
    """An :class:`AiohttpTransport` with ``limits`` when aiohttp is installed, else ``None``
    (httpx's own transport)."""
    return AiohttpTransport(limits) if available() else None


def description() -> str:
    """Which transport :func:`transport_for` gives, for the proxy's start-up log."""
    if available():
        return "aiohttp connections (fast-upstream extra)"
    return "httpx's own transport (install utilityguard[fast-upstream] for aiohttp)"


#: the raw bytes aiohttp quotes from a malformed reply (``...: b'X-Long: aaaa...'``)
_QUOTED_BYTES = re.compile(r""":?\s*b(['"]).*$""", re.DOTALL)


def _message(exc: BaseException) -> str:
    """What of ``exc`` may reach the client's error message: for a malformed reply aiohttp's
    description without the request's URL (its query may hold a key: ``str()`` of a
    :class:`aiohttp.ClientResponseError` names it) and without the reply bytes it quotes.

    >>> _message(OSError("[Errno 111] Connection refused"))
    '[Errno 111] Connection refused'
    """
    if aiohttp is not None and isinstance(exc, aiohttp.ClientResponseError):
        text = str(exc.message)
    else:
        text = str(exc)
    return _QUOTED_BYTES.sub("", text).strip() or type(exc).__name__


def _error(exc: BaseException, request: httpx.Request, *, reading: bool) -> httpx.HTTPError:
    """``exc`` (aiohttp's, or an OS or timeout error) as the httpx error it stands for."""
    message = _message(exc)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message, request=request)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):  # sock_read, or any other
        return httpx.ReadTimeout(message, request=request)
    if isinstance(exc, (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError,
                        aiohttp.ClientResponseError)):
        return httpx.RemoteProtocolError(message, request=request)
    if reading:
        return httpx.ReadError(message, request=request)
    return httpx.ConnectError(message, request=request)


_FAILURES: tuple[type[BaseException], ...] = (OSError, asyncio.TimeoutError, TimeoutError) + (
    (aiohttp.ClientError,) if aiohttp is not None else ())


class _Upload(aiohttp.payload.Payload if aiohttp is not None else object):  # type: ignore[misc]
    """A request's body, written within ``timeout`` seconds (httpx's ``write`` timeout; none
    when ``None``). aiohttp's writer fails the exchange with whatever the write raised;
    :attr:`timed_out` says it was this timeout, whatever aiohttp made of it."""

    _autoclose = True  # bytes: nothing to close

    def __init__(self, value: bytes, timeout: float | None) -> None:
        super().__init__(value, content_type=None)  # the headers are httpx's
        self._size = len(value)
        self._timeout = timeout
        self.timed_out = False

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return bytes(self._value).decode(encoding, errors)

    async def as_bytes(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return bytes(self._value)

    async def write(self, writer: Any) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(self, writer: Any, content_length: int | None) -> None:
        data = self._value
        if content_length is not None and content_length < len(data):
            data = data[:content_length]
        if self._timeout is None:
            await writer.write(data)
            return
        try:
            await bounded(writer.write(data), self._timeout)
        except (asyncio.TimeoutError, TimeoutError):
            self.timed_out = True
            raise


class _Body(httpx.AsyncByteStream):
    """A reply's body as it arrives; the connection goes back to the pool (or is closed,
    when the body was not read to its end) and the slot is freed on close."""

    def __init__(self, response: Any, slots: asyncio.Semaphore, request: httpx.Request
                 ) -> None:
        self._response, self._slots, self._request = response, slots, request
        self._open = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except _FAILURES as exc:
            raise _error(exc, self._request, reading=True) from exc

    async def aclose(self) -> None:
        if self._open:
            self._open = False
            try:
                if self._response.content.at_eof():
                    self._response.release()
                else:
                    self._response.close()
            finally:
                self._slots.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx requests sent on an aiohttp session made on first use (inside the event loop),
    with ``limits`` (see the module's docstring)."""

    def __init__(self, limits: httpx.Limits) -> None:
        if aiohttp is None:
            raise RuntimeError("aiohttp is not installed (pip install "
                               "'utilityguard[fast-upstream]')")
        self._limits = limits
        self._slots = asyncio.Semaphore(limits.max_connections or 2**31)
        self._session: Any = None

    def _open(self) -> Any:
        if self._session is None:
            keepalive = self._limits.keepalive_expiry
            connector = aiohttp.TCPConnector(
                limit=0, limit_per_host=0, ssl=httpx.create_ssl_context(trust_env=False),
                force_close=self._limits.max_keepalive_connections == 0,
                keepalive_timeout=keepalive if keepalive is not None else 5.0)
            self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                auto_decompress=False, skip_auto_headers=("User-Agent", "Accept",
                                                          "Accept-Encoding", "Content-Type"),
                max_line_size=MAX_HEADER_LINE, max_field_size=MAX_HEADER_LINE)
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        if not self._slots.locked():  # a free slot: taken at once, no timer
            await self._slots.acquire()
        else:
            try:
                await asyncio.wait_for(self._slots.acquire(), timeouts.get("pool"))
            except asyncio.TimeoutError:
                raise httpx.PoolTimeout("no free connection in the pool",
                                        request=request) from None
        upload = None
        try:
            body = await request.aread()
            upload = _Upload(body, timeouts.get("write")) if body else None
            # the URL as httpcore sends it: as httpx encoded it, without its user info (httpx
            # turned that into the Authorization header already)
            plain = request.url if not request.url.userinfo else \
                request.url.copy_with(userinfo=b"")  # (parsing a URL again costs: only then)
            url = yarl.URL(str(plain), encoded=True)
            response = await self._open().request(
                request.method, url, data=upload,
                headers=list(request.headers.multi_items()), allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeouts.get("connect"),
                                              sock_read=timeouts.get("read")))
        except BaseException as exc:
            self._slots.release()
            if upload is not None and upload.timed_out:
                raise httpx.WriteTimeout("the upstream did not read the request body in "
                                         "time", request=request) from exc
            if isinstance(exc, _FAILURES):
                raise _error(exc, request, reading=False) from exc
            raise
        return httpx.Response(
            response.status, headers=list(response.raw_headers),
            stream=_Body(response, self._slots, request),
            extensions={"http_version": b"HTTP/1.1",
                        "reason_phrase": (response.reason or "").encode("latin-1", "replace")})

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
