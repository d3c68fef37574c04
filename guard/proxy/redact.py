"""Secrets never leave the proxy: every relayed body and header is scrubbed of them.

An upstream that echoes the ``Authorization`` header it received (in an error body, a
header, even a completion) would hand the upstream key to the client. :class:`RedactSecrets`
is an ASGI middleware that replaces every configured secret (the upstream key and the proxy
keys) in every response header value and body chunk with asterisks of the same length, so
that ``content-length`` stays right and nothing else changes. Secrets are also matched in
their JSON-escaped spelling. :class:`NoQueryStrings` keeps query strings out of the access
log. The proxy's responses are sent in one body chunk, or (a stream
relayed as it arrives, :mod:`guard.proxy.early`) whole events per body chunk: a secret is
never split across two chunks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def spellings(secrets: Iterable[str]) -> list[bytes]:
    """The byte strings to scrub: each secret, and its JSON-escaped form when different;
    longest first (a secret containing another is replaced whole)."""
    out: set[bytes] = set()
    for s in secrets:
        if not s:
            continue
        out.add(s.encode())
        out.add(json.dumps(s)[1:-1].encode())
        out.add(json.dumps(s, ensure_ascii=False)[1:-1].encode())
        out.add(json.dumps(s)[1:-1].replace("/", "\\/").encode())  # PHP-style escaping
    return sorted(out, key=len, reverse=True)


def redact(data: bytes, secrets: Iterable[bytes]) -> bytes:
    """``data`` with each secret replaced by as many ``*``.

    >>> redact(b'{"error": "bad key sk-up-123"}', spellings(["sk-up-123"]))
    b'{"error": "bad key *********"}'
    """
    for s in secrets:
        if s in data:
            data = data.replace(s, b"*" * len(s))
    return data


class RedactSecrets:
    """ASGI middleware scrubbing ``secrets`` from every response header value and body."""

    def __init__(self, app: ASGIApp,
                 secrets: Iterable[str] | Callable[[], Iterable[str]]) -> None:
        self.app = app
        # a callable is asked on every request (a reload may bring new keys)
        self._source = secrets if callable(secrets) else None
        self._given: tuple[str, ...] = () if callable(secrets) else tuple(secrets)
        self.secrets = spellings(self._given)

    def _current(self) -> None:
        if self._source is not None:
            given = tuple(self._source())
            if given != self._given:
                self._given, self.secrets = given, spellings(given)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._current()
        if scope["type"] != "http" or not self.secrets:
            await self.app(scope, receive, send)
            return

        async def scrubbing_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: Any = message.get("headers") or []
                message["headers"] = [(k, redact(bytes(v), self.secrets)) for k, v in headers]
            elif message["type"] == "http.response.body" and message.get("body"):
                message["body"] = redact(bytes(message["body"]), self.secrets)
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
