"""Secrets never leave the proxy: every relayed body and header is scrubbed of them.

An upstream that echoes the ``Authorization`` header it received (in an error body, a
header, even a completion) would hand the upstream key to the client. :class:`RedactSecrets`
is an ASGI middleware that masks every configured secret (the upstream keys, the proxy keys,
the audit database's password) in every response header value and body, in every form a
reply can carry it (:mod:`guard.proxy.scrub`: exact, JSON-escaped, URL-quoted, base64 at any
alignment (the ``Basic`` form of URL credentials), upper-cased or spaced out), with asterisks
that keep every length, so that ``content-length`` stays right and the JSON stays valid. A
``text/event-stream`` response is followed event by event (:class:`~guard.proxy.scrub.
SseScrubber`): a secret split across two deltas is masked too, an event being held back
while the text so far could be the beginning of one. :class:`NoQueryStrings` keeps query
strings out of the access log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guard.proxy.scrub import Secrets, SseScrubber


def redact(data: bytes, secrets: Iterable[str]) -> bytes:
    """``data`` with each of ``secrets`` masked in every form (same length).

    >>> redact(b'{"error": "bad key SK-UP-12345678"}', ["sk-up-12345678"])
    b'{"error": "bad key **-**-********"}'
    """
    return Secrets(secrets).scrub(data)


class RedactSecrets:
    """ASGI middleware scrubbing ``secrets`` from every response header value and body."""

    def __init__(self, app: ASGIApp,
                 secrets: Iterable[str] | Callable[[], Iterable[str]]) -> None:
        self.app = app
        # a callable is asked on every request (a reload may bring new keys)
        self._source = secrets if callable(secrets) else None
        self._given: tuple[str, ...] = () if callable(secrets) else tuple(secrets)
        self.secrets = Secrets(self._given)

    def _current(self) -> Secrets:
        if self._source is not None:
            given = tuple(self._source())
            if given != self._given:
                self._given, self.secrets = given, Secrets(given)
        return self.secrets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secrets = self._current()
        if scope["type"] != "http" or not secrets:
            await self.app(scope, receive, send)
            return
        stream: SseScrubber | None = None

        async def scrubbing_send(message: Message) -> None:
            nonlocal stream
            if message["type"] == "http.response.start":
                headers: Any = message.get("headers") or []
                message["headers"] = [(k, secrets.scrub(bytes(v))) for k, v in headers]
                if any(k.lower() == b"content-type" and b"text/event-stream" in bytes(v)
                       for k, v in headers):
                    stream = SseScrubber(secrets)
            elif message["type"] == "http.response.body":
                body = bytes(message.get("body") or b"")
                if stream is not None:
                    message["body"] = stream.feed(body, bool(message.get("more_body")))
                elif body:
                    message["body"] = secrets.scrub(body)
            await send(message)

        await self.app(scope, receive, scrubbing_send)


class NoQueryStrings(logging.Filter):
    """Drops the query string from uvicorn's access log lines (a key or a token passed as
    ``?api_key=...`` must not reach a log file)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def install_access_log_filter() -> None:
    """Add :class:`NoQueryStrings` to the ``uvicorn.access`` logger (once)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, NoQueryStrings) for f in logger.filters):
        logger.addFilter(NoQueryStrings())
