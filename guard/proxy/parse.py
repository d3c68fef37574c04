"""The parse stage: who asks (auth, the override headers), for which route, and what.

:func:`parse` admits a request (:func:`admit`: a request id, the client key, the overrides it
may send), reads its body (:func:`read_body`, the size limit) with the API's own parser
(:func:`parse_chat_request`, :func:`parse_responses_request`: the one place where either body
is checked), picks the route for its model (:func:`route_for`) and reads the override headers
(:func:`parse_overrides`); the result is the :class:`~guard.proxy.exchange.Exchange` the
later stages read. Everything a client can get wrong raises a
:class:`~guard.exceptions.ClientRequestError` (rendered as 400 / 401 / 403 / 404 / 413 in the
OpenAI envelope). The body is forwarded as the client sent it (unknown fields included) plus
what the guard needs (:mod:`guard.proxy.plan`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from guard.asking import check_size
from guard.exceptions import InvalidRequestError, PayloadTooLargeError, PermissionDeniedError
from guard.proxy.auth import check_auth, credential, key_id
from guard.proxy.exchange import Api, Exchange, P
from guard.proxy.overrides import check_overrides, parse_overrides
from utilityguard_base.wellformed import NonStandardJSON, loads_standard

if TYPE_CHECKING:
    from guard.proxy.state import Proxy
    from guard.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
#: The default largest ``n`` (``--max-n``).
DEFAULT_MAX_N = 8
#: A body over the limit is still drained up to this many times the limit (then the
#: connection is dropped), so that the client can read the 413 instead of a reset.
DRAIN_FACTOR = 16


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or :class:`PayloadTooLargeError` when it is over ``limit`` bytes."""
    too_large = PayloadTooLargeError(
        f"the request body is larger than the proxy's limit of {limit} bytes",
        param=None, code="request_too_large")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit * DRAIN_FACTOR:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit * DRAIN_FACTOR:
            break
        if size <= limit:
            chunks.append(chunk)
    if size > limit:
        raise too_large
    return b"".join(chunks)


def parse_json_object(raw: bytes, kind: str) -> dict[str, Any]:
    """The request body ``raw`` as a JSON object (:class:`InvalidRequestError` otherwise;
    ``kind`` names what it should be, for the message). What the upstream gets is standard
    JSON: ``NaN`` / ``Infinity`` are refused, lone surrogates read as U+FFFD
    (:func:`utilityguard_base.wellformed.loads_standard`)."""
    try:
        body = loads_standard(raw, constants="reject")
    except NonStandardJSON as exc:
        raise InvalidRequestError(f"the request body is not valid JSON: {exc}",
                                  code="invalid_json") from None
    except (ValueError, RecursionError):
        raise InvalidRequestError("the request body is not valid JSON",
                                  code="invalid_json") from None
    if not isinstance(body, dict):
        raise InvalidRequestError(
            f"the request body must be a JSON object ({kind}); "
            f"got a JSON {type(body).__name__}", code="invalid_request")
    return body


def parse_chat_request(raw: bytes, *, max_n: int = DEFAULT_MAX_N) -> dict[str, Any]:
    """The JSON body of a chat completion request, checked for the fields the guard reads
    (``n`` at most ``max_n``).

    Examples
    --------
    >>> parse_chat_request(b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
    {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}
    >>> parse_chat_request(b'{"model": "m"}')
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.InvalidRequestError: 'messages' is required: a non-empty list...
    """
    body = parse_json_object(raw, "a chat completion request")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequestError("'messages' is required: a non-empty list of messages",
                                  param="messages", code="invalid_request")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise InvalidRequestError(f"messages[{i}] must be an object with a string 'role'",
                                      param=f"messages[{i}]", code="invalid_request")
    _check_type(body, "stream", bool)
    _check_type(body, "logprobs", bool)
    _check_type(body, "stream_options", dict)
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InvalidRequestError(f"'n' must be an integer >= 1; got {n!r}", param="n",
                                  code="invalid_request")
    if isinstance(n, int) and n > max_n:
        raise InvalidRequestError(
            f"'n' is {n}; this proxy allows at most {max_n} choices per request (--max-n)",
            param="n", code="n_too_large")
    return body


def parse_responses_request(raw: bytes) -> dict[str, Any]:
    """The JSON body of a Responses API request, checked for the fields the guard reads.

    >>> parse_responses_request(b'{"model": "m", "input": "hi"}')
    {'model': 'm', 'input': 'hi'}
    """
    body = parse_json_object(raw, "a Responses API request")
    inp = body.get("input")
    if not isinstance(inp, (str, list)) or not inp:
        raise InvalidRequestError("'input' is required: a string or a non-empty list of "
                                  "input items", param="input", code="invalid_request")
    include = body.get("include")
    if include is not None and (not isinstance(include, list)
                                or not all(isinstance(x, str) for x in include)):
        raise InvalidRequestError(f"'include' must be a list of strings; got {include!r}",
                                  param="include", code="invalid_request")
    _check_type(body, "stream", bool)
    return body


def check_model(body: Mapping[str, Any], limit: int) -> None:
    """The body's ``model``, when it has one, is a string of at most ``limit`` characters
    (``--max-model-chars``): it goes upstream and into the audit log."""
    model = body.get("model")
    if model is not None and (not isinstance(model, str) or len(model) > limit):
        raise InvalidRequestError(
            f"'model' must be a string of at most {limit} characters (--max-model-chars); "
            f"got {'a ' + type(model).__name__ if not isinstance(model, str) else len(model)}"
            f"{' characters' if isinstance(model, str) else ''}", param="model",
            code="invalid_model")


def _check_type(body: Mapping[str, Any], key: str, kind: type) -> None:
    value = body.get(key)
    if value is not None and not isinstance(value, kind):
        raise InvalidRequestError(f"'{key}' must be a {kind.__name__}; got {value!r}",
                                  param=key, code="invalid_request")


def admit(request: Request, proxy: Proxy, settings: Settings) -> str:
    """A new request id for ``request`` once it is authenticated and its override headers
    are allowed (a forbidden override is recorded as a security event and raised). With
    routes, a caller's confidence header is checked again by :func:`route_for`."""
    request.state.request_id = rid = proxy.new_request_id()
    key = check_auth(request.headers, proxy.client_keys)
    proxy.owners.add(rid, key_id(key))  # who may label this decision (and whose budget)
    request.state.key = key
    caller = any(r.settings.confidence == "caller" for r in proxy.table.routes)
    _check_overrides(request, proxy, rid, key, caller)
    return rid


def _check_overrides(request: Request, proxy: Proxy, rid: str, key: bytes | None,
                     caller: bool) -> None:
    try:
        check_overrides(request.headers, allowed=proxy.may_override(key),
                        caller_confidence=caller)
    except PermissionDeniedError as exc:
        proxy.forbidden(rid, "override_not_allowed", exc.message)
        raise


def route_for(request: Request, root: Proxy, rid: str, model: Any) -> Proxy:
    """The route serving the request's ``model`` (404 when none; the root itself without
    ``--config``), its override headers checked against the route's own confidence signal."""
    proxy = root.routed(model)
    if proxy is not root:
        _check_overrides(request, proxy, rid, request.state.key,
                         proxy.settings.confidence == "caller")
    return proxy


async def parse(request: Request, api: Api[P]) -> Exchange[P]:
    """The parse stage: the request admitted, its body read by ``api``, its route, its
    overrides, the headers sent upstream and the plan of the upstream request."""
    t0 = time.perf_counter()
    root: Proxy = request.app.state.proxy
    rid = admit(request, root, root.settings)
    body = api.parse(await read_body(request, root.settings.max_body_bytes), root.settings)
    check_model(body, root.settings.max_model_chars)
    proxy = route_for(request, root, rid, body.get("model"))
    overrides = parse_overrides(request.headers)
    query = api.query(body)
    check_size(query, proxy.guard.asking)  # a flood is refused before anything else
    return Exchange(request=request, api=api, proxy=proxy, request_id=rid, body=body,
                    overrides=overrides, headers=proxy.upstream_headers(request.headers),
                    query=query, plan=api.plan(body, proxy.guard), t0=t0,
                    owner=credential(request.headers))
