"""Every HTTP error of the proxy, rendered in the OpenAI error envelope.

``{"error": {"message": str, "type": str, "param": str | null, "code": str | null}}``

* a rejected request (:class:`~guard.exceptions.ClientRequestError`): 400 / 401 / 413,
  ``invalid_request_error`` with the error's code;
* an upstream 4xx: the same status and a fixed message naming it; the upstream's ``code`` and
  ``param`` when each is a plain token (``context_length_exceeded``), never its words: an
  upstream's error text may quote the answer the guard decides on (a content filter quoting
  the reply) or echo a credential. The text goes to the operator's log, its secrets masked.
  The endpoints that decide nothing (``/v1/models``, ``/v1/embeddings``) relay the
  upstream's envelope, its secrets masked in every form (:mod:`guard.proxy.scrub`);
* an upstream 5xx or an unusable reply: 502, ``upstream_error``;
* the upstream unreachable: 502, code ``upstream_unavailable``, the message names the upstream;
* an upstream timeout or the total deadline passed: 504, code ``upstream_timeout``;
* no free pooled upstream connection in time: 504, code ``upstream_pool_exhausted``;
* an upstream reply over ``--max-upstream-bytes``: 502, code ``upstream_reply_too_large``;
* an unknown path or a wrong method: 404 / 405 (FastAPI's own, re-rendered);
* FastAPI request validation: 400, code ``invalid_request``;
* anything unexpected: 500, ``server_error`` (logged with its traceback, never sent).

Responses carry ``x-utilityguard-request-id`` when the request got one. Nothing here logs a
header or a request body; an upstream error's text is logged with every configured secret
masked (the envelope of a pass-through endpoint is also relayed, masked the same way).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from guard.exceptions import (
    ClientRequestError,
    UpstreamError,
    UpstreamPoolExhausted,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamTooLarge,
    UpstreamUnavailable,
)
from guard.proxy.scrub import Secrets

log = logging.getLogger(__name__)
E = TypeVar("E", bound=Exception)
REQUEST_ID_HEADER = "x-utilityguard-request-id"
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large",
               415: "unsupported_media_type"}


def error_body(message: str, type_: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    """The OpenAI error envelope.

    Examples
    --------
    >>> error_body("messages is required", param="messages", code="missing_field")
    {'error': {'message': 'messages is required', 'type': 'invalid_request_error', \
'param': 'messages', 'code': 'missing_field'}}
    """
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error_response(request: Request | None, status: int, body: dict[str, Any],
                   headers: dict[str, str] | None = None) -> Response:
    """A JSON response with ``body`` and the request id header (when there is one)."""
    out = dict(headers or {})
    rid = getattr(request.state, "request_id", None) if request is not None else None
    if rid:
        out[REQUEST_ID_HEADER] = rid
    return Response(json.dumps(body).encode(), status_code=status,
                    media_type="application/json", headers=out)


def upstream_envelope(exc: UpstreamStatusError) -> dict[str, Any]:
    """The envelope of an upstream 4xx: the upstream's own, completed with the four keys,
    or the body wrapped as the message.

    Examples
    --------
    >>> upstream_envelope(UpstreamStatusError(404, '{"error": {"message": "no model"}}'))
    {'error': {'message': 'no model', 'type': 'invalid_request_error', 'param': None, \
'code': None}}
    >>> upstream_envelope(UpstreamStatusError(400, "bad"))["error"]["message"]
    'the upstream answered HTTP 400: bad'
    """
    try:
        data = json.loads(exc.body)
    except ValueError:
        data = None
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        out = error_body(err["message"], str(err.get("type") or "invalid_request_error"),
                         err.get("param") if isinstance(err.get("param"), str) else None,
                         None if err.get("code") is None else str(err.get("code")))
        out["error"].update({k: v for k, v in err.items() if k not in out["error"]})
        return out
    if isinstance(err, str):  # {"error": "..."}, as some servers send
        return error_body(err, code=f"upstream_{exc.status}")
    text = exc.body.strip()[:2000] or "(empty body)"
    return error_body(f"the upstream answered HTTP {exc.status}: {text}",
                      code=f"upstream_{exc.status}")


#: An upstream ``code`` / ``param`` passed on to the client: a plain token, nothing more.
_TOKEN = re.compile(r"[A-Za-z0-9_.\-\[\]]{1,64}")


def fixed_envelope(exc: UpstreamStatusError) -> dict[str, Any]:
    """The envelope of an upstream 4xx on a guarded endpoint: a fixed message, the upstream's
    ``type``, ``code`` and ``param`` only where each is a plain token.

    >>> fixed_envelope(UpstreamStatusError(400, '{"error": {"message": "the answer is 42", '
    ...                                         '"code": "content_filter"}}'))["error"]
    {'message': 'the upstream answered HTTP 400 (its message is in the proxy log)', \
'type': 'invalid_request_error', 'param': None, 'code': 'content_filter'}
    """
    err = upstream_envelope(exc)["error"]

    def token(value: Any) -> str | None:
        return value if isinstance(value, str) and _TOKEN.fullmatch(value) else None

    code = token(err.get("code"))
    return error_body(f"the upstream answered HTTP {exc.status} (its message is in the proxy "
                      "log)", token(err.get("type")) or "invalid_request_error",
                      token(err.get("param")),
                      code if code and not code.startswith("upstream_") else
                      f"upstream_{exc.status}")


def _metrics_kind(request: Request, kind: str) -> None:
    proxy = getattr(request.app.state, "proxy", None)
    if proxy is not None:
        proxy.metrics.upstream_errors.inc(kind)


async def _client_error(request: Request, exc: ClientRequestError) -> Response:
    return error_response(request, exc.status,
                          error_body(exc.message, exc.error_type, exc.param, exc.code))


def upstream_failure(exc: UpstreamError, *, relay: bool = False
                     ) -> tuple[int, dict[str, Any], str, dict[str, str] | None]:
    """How a failed upstream exchange is answered: ``(HTTP status, error envelope, metrics
    kind, headers to pass on)`` (see the module docstring); also the error event that ends a
    stream already under way (:mod:`guard.proxy.early`). ``relay``: an endpoint that decides
    nothing, whose upstream envelope is passed on (masked by the middleware)."""
    if isinstance(exc, UpstreamStatusError):
        kind = f"status_{exc.status // 100}xx"
        if 400 <= exc.status < 500:
            return (exc.status, upstream_envelope(exc) if relay or exc.own
                    else fixed_envelope(exc), kind, exc.headers)
        said = f": {upstream_envelope(exc)['error']['message']}" if relay else ""
        return 502, error_body(f"the upstream failed (HTTP {exc.status}){said}",
                               "upstream_error", code="upstream_error"), kind, None
    if isinstance(exc, UpstreamPoolExhausted):
        status, code, kind = 504, "upstream_pool_exhausted", "pool_exhausted"
    elif isinstance(exc, UpstreamTimeout):
        status, code, kind = 504, "upstream_timeout", "timeout"
    elif isinstance(exc, UpstreamTooLarge):
        status, code, kind = 502, "upstream_reply_too_large", "too_large"
    elif isinstance(exc, UpstreamUnavailable):
        status, code, kind = 502, "upstream_unavailable", "unavailable"
    else:
        status, code, kind = 502, "upstream_error", "invalid_reply"
    return status, error_body(str(exc), "upstream_error", code=code), kind, None


def upstream_words(request: Request | None, exc: UpstreamError) -> str:
    """What the upstream itself said (an error body, an error event's message), its
    secrets masked in every form, shortened: for the operator's log only."""
    said = exc.body if isinstance(exc, UpstreamStatusError) else exc.detail
    if not said:
        return ""
    proxy = getattr(request.app.state, "proxy", None) if request is not None else None
    secrets = Secrets(proxy.secrets if proxy is not None else ())
    return " ".join(secrets.scrub_text(said[:2000]).split())


async def _upstream_error(request: Request, exc: UpstreamError) -> Response:
    status, body, kind, headers = upstream_failure(
        exc, relay=not getattr(request.state, "guarded", False))
    _metrics_kind(request, kind)
    said = upstream_words(request, exc)
    if isinstance(exc, UpstreamStatusError):
        log.warning("upstream answered HTTP %d%s", exc.status, f": {said}" if said else "")
    else:
        log.warning("upstream error (%s): %s%s", kind, exc, f": {said}" if said else "")
    return error_response(request, status, body, headers)


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    status = exc.status_code
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if status == 404:
        message = f"unknown endpoint {request.method} {request.url.path}"
    elif status == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    type_ = "invalid_request_error" if status < 500 else "server_error"
    return error_response(request, status,
                          error_body(message, type_, code=_HTTP_CODES.get(status)),
                          dict(exc.headers or {}))


async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
    errors = exc.errors()
    first = errors[0] if errors else {}
    loc = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or None
    message = f"invalid request: {first.get('msg', 'validation failed')}"
    return error_response(request, 400, error_body(message, param=loc, code="invalid_request"))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.error("internal error while serving %s: %s", request.url.path, type(exc).__name__,
              exc_info=exc)
    return error_response(request, 500, error_body(
        "internal error in the utilityguard proxy", "server_error", code="internal_error"))


def _typed(kind: type[E], handler: Callable[[Request, E], Awaitable[Response]]
           ) -> Callable[[Request, Exception], Awaitable[Response]]:
    """``handler`` with the signature Starlette expects (it dispatches on ``kind``)."""

    async def handle(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, kind):  # pragma: no cover - Starlette dispatches by type
            raise exc
        return await handler(request, exc)

    return handle


def install_error_handlers(app: FastAPI) -> None:
    """Render every error of ``app`` in the OpenAI envelope (see the module docstring)."""
    app.add_exception_handler(ClientRequestError, _typed(ClientRequestError, _client_error))
    app.add_exception_handler(UpstreamError, _typed(UpstreamError, _upstream_error))
    app.add_exception_handler(StarletteHTTPException,
                              _typed(StarletteHTTPException, _http_error))
    app.add_exception_handler(RequestValidationError,
                              _typed(RequestValidationError, _validation_error))
    app.add_exception_handler(Exception, _unexpected)
