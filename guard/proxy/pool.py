"""The proxy's upstream calls, with httpx errors translated by the shared chat client's
translation (:mod:`utilityguard_base.upstream`: the one place where they become ``Upstream*``).

:class:`Upstream` wraps the proxy's single pooled :class:`httpx.AsyncClient` (owned by the
app's lifespan) and exposes the three calls the proxy makes. Whatever goes wrong is raised as

* :class:`~guard.exceptions.UpstreamTimeout` — connect, read or write timeout, or the total
  deadline of an exchange passed (HTTP 504);
* :class:`~guard.exceptions.UpstreamPoolExhausted` — no free pooled connection in time (504,
  the message says the pool is exhausted);
* :class:`~guard.exceptions.UpstreamTooLarge` — a reply over ``max_bytes`` (502; bodies are read
  incrementally and the connection is closed past the limit);
* :class:`~guard.exceptions.UpstreamUnavailable` — connection refused or reset, DNS, TLS, a
  broken HTTP exchange (HTTP 502, the message names the upstream);
* :class:`~guard.exceptions.UpstreamStatusError` — a non-2xx status (4xx are passed through to
  the client, 5xx become HTTP 502);
* :class:`~guard.exceptions.UpstreamError` — a 2xx reply that is not what was asked for.

Only the ``Authorization`` header (or the configured upstream key instead) and a few OpenAI
routing headers are forwarded; nothing here logs a header or a body.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from guard.exceptions import (
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamTooLarge,
)
from guard.proxy import aio_transport, json_body
from guard.proxy.deadline import bounded
from guard.proxy.streaming import checked_choices, json_reply
from utilityguard_base.upstream import (
    check_status,
    cookieless,
    display_url,
    json_object,
    map_exceptions,
)

if TYPE_CHECKING:
    from guard.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Request headers passed on to the upstream besides ``Authorization``.
FORWARDED_HEADERS = ("openai-organization", "openai-project", "openai-beta")
#: The default limit on an upstream reply's size (``--max-upstream-bytes``).
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
#: The readiness probe's whole deadline, in seconds (a load balancer's check must not wait
#: behind the requests in flight).
READY_TIMEOUT_S = 1.0
#: How many upstream paths' absolute URLs :meth:`Upstream.url` keeps (the API's few paths;
#: a pass-through GET of many paths is merged each time past it).
URL_CACHE = 32


def upstream_headers(client_headers: Mapping[str, str], upstream_key: str | None, *,
                     forward_client_key: bool = True) -> dict[str, str]:
    """The headers to send upstream: the configured key as a bearer token, or else the
    client's ``Authorization`` header when ``forward_client_key`` (it is not when the proxy
    has its own keys: a proxy key is never sent upstream); plus the OpenAI routing headers
    the client sent.

    Examples
    --------
    >>> upstream_headers({"authorization": "Bearer client", "x-other": "1"}, None)
    {'authorization': 'Bearer client'}
    >>> upstream_headers({"authorization": "Bearer client"}, "sk-up")
    {'authorization': 'Bearer sk-up'}
    >>> upstream_headers({"authorization": "Bearer proxy-key"}, None, forward_client_key=False)
    {}
    """
    out: dict[str, str] = {}
    if upstream_key:
        out["authorization"] = f"Bearer {upstream_key}"
    elif forward_client_key and (auth := client_headers.get("authorization")) is not None:
        out["authorization"] = auth
    for name in FORWARDED_HEADERS:
        if (value := client_headers.get(name)) is not None:
            out[name] = value
    return out


def missing_v1_hint(upstream: str) -> str | None:
    """What to say when the upstream at ``upstream`` answers 404 and its URL has no ``/v1``
    (OpenAI-compatible servers serve their API under ``/v1``); ``None`` when it has.

    Examples
    --------
    >>> missing_v1_hint("http://127.0.0.1:8080")  # doctest: +ELLIPSIS
    'the upstream at http://127.0.0.1:8080 answered HTTP 404 (not found): ... --upstream http://127.0.0.1:8080/v1'
    >>> missing_v1_hint("http://127.0.0.1:8080/v1") is None
    True
    """
    if "/v1" in httpx.URL(upstream).path:
        return None
    return (f"the upstream at {upstream} answered HTTP 404 (not found): its URL has no /v1, "
            f"under which OpenAI-compatible servers serve their API; start the proxy with "
            f"--upstream {upstream}/v1")


def pooled_client(base_url: str, limits: httpx.Limits, timeout: httpx.Timeout,
                  transport: httpx.AsyncBaseTransport | None = None
                  ) -> tuple[httpx.AsyncClient, httpx.AsyncBaseTransport | None]:
    """A client of the upstream at ``base_url`` (``.../v1``) as the proxy makes every one: no
    cookies kept, no proxy from the environment, ``limits`` and ``timeout``; on
    ``transport``, else on aiohttp's connections where the ``fast-upstream`` extra is
    installed (:func:`guard.proxy.aio_transport.transport_for`), else httpx's own. Returns
    the client and the transport it was made with (``None``: httpx's own)."""
    transport = transport or aio_transport.transport_for(limits)
    client = httpx.AsyncClient(base_url=base_url.rstrip("/") + "/", trust_env=False,
                               cookies=cookieless(), transport=transport, limits=limits,
                               timeout=timeout)
    return client, transport


def upstream_client(settings: Settings, base_url: str,
                    transport: httpx.AsyncBaseTransport | None = None
                    ) -> tuple[httpx.AsyncClient, httpx.AsyncBaseTransport | None]:
    """The proxy's pooled request client for ``base_url`` (:func:`pooled_client`) with
    ``settings``' timeouts and pool limits."""
    limits = httpx.Limits(max_connections=settings.max_connections,
                          max_keepalive_connections=settings.max_keepalive)
    return pooled_client(base_url, limits, httpx.Timeout(
        settings.read_timeout, connect=settings.connect_timeout, pool=settings.pool_timeout),
        transport)


def probe_client(base_url: str, transport: httpx.AsyncBaseTransport | None = None
                 ) -> httpx.AsyncClient:
    """The readiness probe's own small client (two connections, :data:`READY_TIMEOUT_S`): a
    busy request pool must not make ``/readyz`` wait."""
    return pooled_client(base_url, httpx.Limits(max_connections=2),
                         httpx.Timeout(READY_TIMEOUT_S), transport)[0]


def direct_ok(client: httpx.AsyncClient) -> bool:
    """Whether ``client``'s layers above its transport do nothing for the proxy's requests
    that the transport would not: no auth (nor user info in its base URL, from which httpx
    would make one), no event hooks, redirects not followed, no cookie to send. (The cookies
    a reply sets are then not even offered to the client's jar; the proxy's jars keep none
    anyway, :func:`utilityguard_base.upstream.cookieless`.)"""
    return (client.auth is None and not client.base_url.userinfo
            and not any(client.event_hooks.values()) and not client.follow_redirects
            and len(client.cookies.jar) == 0)


class Relay:
    """An upstream reply held open by :meth:`Upstream.open_stream`."""

    def __init__(self, upstream: Upstream, response: httpx.Response) -> None:
        self._upstream = upstream
        self._response = response
        #: the reply's content type (``""`` when it sent none)
        self.content_type = response.headers.get("content-type", "")

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (size limit, errors translated)."""
        body = self._upstream._bounded(self._response)
        while True:
            try:
                with self._upstream.errors():
                    chunk = await body.__anext__()
            except StopAsyncIteration:
                return
            yield chunk

    async def read(self) -> bytes:
        """The rest of the body (size limit, errors translated)."""
        return b"".join([chunk async for chunk in self.chunks()])

    async def json_instead(self, kind: str) -> dict[str, Any] | None:
        """The JSON object the upstream sent instead of the stream it was asked for (it
        ignored ``stream: true``: its content type says JSON), read whole; ``None`` when it
        streams. :class:`~guard.exceptions.UpstreamError` when it is not a JSON object
        (``kind`` names what it should be). The one place where a JSON answer to a stream
        is told from a stream: the buffered and the early stream read it here."""
        if "json" not in self.content_type.lower():
            return None
        return json_reply(await self.read(), self._upstream.name, kind)


class Upstream:
    """Calls to the OpenAI-compatible upstream, with errors translated.

    Parameters
    ----------
    client : httpx.AsyncClient
        The pooled client; its ``base_url`` is the upstream's ``.../v1``.
    """

    def __init__(self, client: httpx.AsyncClient, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 probe: httpx.AsyncClient | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.client = client
        #: the client's transport, given when the client was made with it: requests are
        #: handed to it directly (see :meth:`sent`)
        self._direct = transport if direct_ok(client) else None
        #: the readiness probe's own small client (not the request pool: a busy replica
        #: still answers /readyz at once)
        self.probe = probe
        self.name = display_url(client.base_url).rstrip("/")
        self.max_bytes = max_bytes
        self._urls: dict[str, httpx.URL] = {}

    def url(self, path: str) -> httpx.URL:
        """The absolute URL the client sends ``path`` to, as its ``build_request`` merges it
        with the base URL; kept for the next request (at most :data:`URL_CACHE` paths:
        httpx parses a URL in Python, a cost on every request)."""
        url = self._urls.get(path)
        if url is None:
            url = self.client.build_request("GET", path).url
            if len(self._urls) < URL_CACHE:
                self._urls[path] = url
        return url

    async def _send(self, method: str, path: str, headers: Mapping[str, str],
                    body: bytes | None = None) -> httpx.Response:
        """The upstream's response, its body read incrementally up to :attr:`max_bytes`
        (:class:`UpstreamTooLarge` past it, the connection closed)."""
        if body is not None:
            headers = {**headers, "content-type": "application/json"}
        request = self.client.build_request(method, self.url(path), content=body,
                                            headers=headers)
        with self.errors():
            response = await self.sent(request)
            try:
                content = await self._read(response)
            finally:
                await response.aclose()
        return httpx.Response(response.status_code, headers=response.headers, content=content,
                              request=request)

    async def sent(self, request: httpx.Request) -> httpx.Response:
        """``request`` sent, its reply's head received and its body not read: the client's
        ``send(stream=True)``, or, with the client's transport given, the transport's own
        call: what the client's layers above it would do for this client is nothing (no
        auth, no redirects followed, no event hooks, no cookies kept: :func:`direct_ok`),
        so they are skipped (their cost was about a tenth of a millisecond a request)."""
        if self._direct is None:
            return await self.client.send(request, stream=True)
        response = await self._direct.handle_async_request(request)
        response.request = request
        return response

    def errors(self) -> AbstractContextManager[None]:
        """httpx errors inside the block raised as ``Upstream*`` errors (the shared
        :func:`~utilityguard_base.upstream.map_exceptions`, told this pool's timeout)."""
        return map_exceptions(self.name, pool_timeout=self.client.timeout.pool or 0.0)

    async def _bounded(self, response: httpx.Response) -> AsyncIterator[bytes]:
        """``response``'s body as it arrives, :class:`UpstreamTooLarge` past
        :attr:`max_bytes` (declared or received)."""
        too_large = UpstreamTooLarge(
            f"the upstream at {self.name} sent a reply larger than the proxy's limit of "
            f"{self.max_bytes} bytes (--max-upstream-bytes)")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise too_large
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise too_large
            yield chunk

    async def _read(self, response: httpx.Response) -> bytes:
        return b"".join([chunk async for chunk in self._bounded(response)])

    async def within(self, seconds: float, work: Awaitable[T]) -> T:
        """Await ``work`` (a whole upstream exchange: every call and byte in it) for at most
        ``seconds``; past it ``work`` is cancelled and :class:`UpstreamTimeout` raised (a
        slow-drip upstream never trips the read timeout, which applies between bytes)."""
        try:
            return await bounded(work, seconds)
        except asyncio.TimeoutError:
            raise UpstreamTimeout(
                f"the upstream at {self.name} did not finish within the proxy's deadline of "
                f"{seconds:g} s (--request-timeout)") from None

    def _check_status(self, response: httpx.Response) -> None:
        try:
            check_status(response)
        except UpstreamStatusError as exc:
            if exc.status == 404 and (hint := missing_v1_hint(self.name)):
                log.warning("%s", hint)
                text = json.dumps({"error": {"message": hint, "type": "invalid_request_error",
                                             "param": None, "code": "upstream_not_found"}})
                raise UpstreamStatusError(404, text, headers=exc.headers, own=True) from None
            raise

    async def ready(self, headers: Mapping[str, str]) -> tuple[bool, str]:
        """Whether the upstream answers (``GET models``): ``(ready, detail)``.

        Any HTTP answer below 500 means it is up (a server without ``/models`` answers 404, one
        that wants a key 401); a 5xx, a timeout or a refused connection means it is not.
        """
        if self.probe is None:
            try:
                response = await self._send("GET", "models", headers)
            except UpstreamError as exc:
                return False, str(exc)
            status = response.status_code
        else:
            try:
                with map_exceptions(self.name):
                    status = await asyncio.wait_for(self._probe_status(headers),
                                                    READY_TIMEOUT_S)
            except (TimeoutError, asyncio.TimeoutError):
                return False, f"the upstream at {self.name} did not answer in {READY_TIMEOUT_S} s"
            except UpstreamError as exc:
                return False, str(exc)
        return status < 500, f"the upstream at {self.name} answered HTTP {status}"

    async def _probe_status(self, headers: Mapping[str, str]) -> int:
        if self.probe is None:  # pragma: no cover - ready() checks
            raise RuntimeError("no probe client")
        async with self.probe.stream("GET", "models", headers=headers) as streamed:
            return streamed.status_code  # the body is not read

    def _json(self, response: httpx.Response) -> Any:
        return json_object(response, self.name)

    async def chat(self, body: Mapping[str, Any], headers: Mapping[str, str]
                   ) -> dict[str, Any]:
        """POST a non-streaming chat completion; the reply as a JSON object."""
        response = await self._send("POST", "chat/completions", headers,
                                    json_body.dumps(body))
        self._check_status(response)
        data: dict[str, Any] = checked_choices(self._json(response), self.name)
        return data

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> Any:
        """POST ``body`` (the client's JSON, as sent) to ``path`` and return the JSON reply
        (the pass-through endpoints: embeddings)."""
        response = await self._send("POST", path, headers, body)
        self._check_status(response)
        return self._json(response)

    async def read_stream(self, path: str, body: Mapping[str, Any],
                          headers: Mapping[str, str], kind: str
                          ) -> tuple[dict[str, Any] | None, bytes, str]:
        """POST ``body`` (asking for a stream) to ``path`` and read all of the reply (the
        stream buffered: the decision needs all of it; the size limit applies):
        ``(the JSON object sent instead, or None; the stream's bytes; its content type)``
        (:meth:`Relay.json_instead`)."""
        async with self.open_stream(path, body, headers) as relay:
            reply = await relay.json_instead(kind)
            raw = b"" if reply is not None else await relay.read()
        return reply, raw, relay.content_type

    @asynccontextmanager
    async def open_stream(self, path: str, body: Mapping[str, Any],
                          headers: Mapping[str, str]) -> AsyncIterator[Relay]:
        """POST ``body`` to ``path`` and hold the reply open, its status checked (a non-2xx
        reply is read, bounded, and raised as :meth:`chat` would): the
        :class:`Relay` yields its bytes as they arrive (the size limit applies to the
        total). The connection is closed on the way out, also when cancelled."""
        request = self.client.build_request(
            "POST", self.url(path), content=json_body.dumps(body),
            headers={**headers, "content-type": "application/json"})
        with self.errors():
            response = await self.sent(request)
        try:
            if not response.is_success:
                content = await self._guarded(self._read(response))
                self._check_status(httpx.Response(response.status_code,
                                                  headers=response.headers, content=content,
                                                  request=request))
            yield Relay(self, response)
        finally:
            await response.aclose()

    async def _guarded(self, work: Awaitable[T]) -> T:
        with self.errors():
            return await work

    def inside(self, path: str) -> bool:
        """``path`` (relative) resolves to a URL under the upstream's base path (``/v1``)."""
        base = self.client.base_url
        url = base.join(path)
        return (url.host, url.port, url.scheme) == (base.host, base.port, base.scheme) and \
            url.path.startswith(base.path) and ".." not in url.path.split("/")

    async def get(self, path: str, headers: Mapping[str, str]) -> Any:
        """GET ``path`` (relative to the upstream's ``/v1``) and return its JSON body; a path
        that would leave the base path is refused (``ValueError``), never sent."""
        if not self.inside(path):
            raise ValueError(f"refusing to send a request outside {self.name}: {path!r}")
        response = await self._send("GET", path, headers)
        self._check_status(response)
        return self._json(response)
