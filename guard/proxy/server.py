"""The HTTP server ``serve`` runs: uvicorn with the request head bounded (431).

uvicorn's httptools protocol reads a request line and its headers without a bound: the
parser gathers a header's bytes until the header ends, so three unauthenticated 200 MB headers
took a proxy from 327 to 700 MB before its 401s. :class:`BoundedHttpToolsProtocol` counts the
bytes and the headers of each request's head as they arrive and answers **431 Request Header
Fields Too Large** (in the OpenAI error envelope, then closes the connection) past
``--max-header-bytes`` bytes (the request line and every header) or ``--max-headers``
headers, before any endpoint runs, authentication included. A head still arriving is
checked after every read, so memory stays within the bound plus one read (at most 256 KiB).

:func:`server_config` is the one place ``serve`` (one process or ``--workers N``) builds its
uvicorn configuration; :class:`ServeConfig` carries the two bounds to every worker process
(the configuration is pickled to each).
"""

from __future__ import annotations

import json
from typing import Any

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: The default bounds of a request's head (``--max-header-bytes``, ``--max-headers``).
DEFAULT_MAX_HEADER_BYTES = 32 * 1024
DEFAULT_MAX_HEADERS = 100


class HeadTooLarge(Exception):
    """A request's head passed a bound (raised inside the parser's callbacks)."""


class ServeConfig(uvicorn.Config):
    """uvicorn's configuration plus the bounds of a request's head."""

    def __init__(self, app: Any, *, max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
                 max_headers: int = DEFAULT_MAX_HEADERS, **options: Any) -> None:
        super().__init__(app, **options)
        self.max_header_bytes = max_header_bytes
        self.max_headers = max_headers


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, each request's head bounded (see the module docstring)."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.max_header_bytes = int(getattr(config, "max_header_bytes",
                                            DEFAULT_MAX_HEADER_BYTES))
        self.max_headers = int(getattr(config, "max_headers", DEFAULT_MAX_HEADERS))
        self._in_head = True
        self._head_bytes = 0  # raw bytes received while the head was incomplete
        self._parsed = 0  # bytes of the request line and headers parsed so far
        self._headers = 0
        self._rejected = False

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head, self._head_bytes, self._parsed, self._headers = True, 0, 0, 0

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers += 1
        if self._headers > self.max_headers:
            raise HeadTooLarge(f"more than {self.max_headers} request headers (--max-headers)")
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def _count(self, n: int) -> None:
        self._parsed += n
        if self._parsed > self.max_header_bytes:
            raise HeadTooLarge(self._bytes_message())

    def _bytes_message(self) -> str:
        return (f"the request line and headers are larger than {self.max_header_bytes} bytes "
                "(--max-header-bytes)")

    def data_received(self, data: bytes) -> None:
        if self._rejected:
            return
        if self._in_head:
            self._head_bytes += len(data)
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            too_large = exc.__context__ if isinstance(exc.__context__, HeadTooLarge) else None
            if too_large is None:
                self.logger.warning("Invalid HTTP request received.")
                self.send_400_response("Invalid HTTP request received.")
            else:
                self._send_431(str(too_large))
            return
        except httptools.HttpParserUpgrade:
            upgrade = self._get_upgrade()
            if self._should_upgrade_to_ws(upgrade):
                self.handle_websocket_upgrade()
            return
        if self._in_head and self._head_bytes > self.max_header_bytes:
            self._send_431(self._bytes_message())  # a head still arriving, already too big

    def _send_431(self, message: str) -> None:
        self._rejected = True
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                     "param": None, "code": "request_header_too_large"}}
                          ).encode()
        head = [b"HTTP/1.1 431 Request Header Fields Too Large\r\n"]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.extend([b"content-type: application/json\r\n",
                     b"content-length: " + str(len(body)).encode() + b"\r\n",
                     b"connection: close\r\n\r\n"])
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def server_config(app: Any, *, max_header_bytes: int, max_headers: int, **options: Any
                  ) -> ServeConfig:
    """The uvicorn configuration of ``serve``: ``options`` (host, port, log level, workers,
    ...), the bounded httptools protocol and the bounds."""
    return ServeConfig(app, http=BoundedHttpToolsProtocol, max_header_bytes=max_header_bytes,
                       max_headers=max_headers, **options)
