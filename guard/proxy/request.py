"""Reading a chat completion request: size limit, JSON, shape, auth, guard headers, the plan.

Everything a client can get wrong raises a :class:`~guard.exceptions.ClientRequestError`
(rendered as 400 / 401 / 413 in the OpenAI envelope). The body is forwarded as the client sent
it (unknown fields included) plus what the guard needs; :class:`ChatPlan` records what the
guard added, so that it can be removed from the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from starlette.requests import Request

from guard.core import Guard
from guard.decision_config import check_c_r, check_cost, check_mode, check_probability
from guard.decision_records import Mode
from guard.exceptions import (
    AuthenticationError,
    ClientDisconnected,
    InvalidRequestError,
    PayloadTooLargeError,
    PermissionDeniedError,
)

T = TypeVar("T")
#: Request headers that override the guard per request.
COST_HEADER = "x-utilityguard-cost"
REFUSAL_COST_HEADER = "x-utilityguard-refusal-cost"
MODE_HEADER = "x-utilityguard-mode"
CONFIDENCE_HEADER = "x-utilityguard-confidence"
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


async def disconnected(request: Request) -> None:
    """Return when the client has gone (after its body was read)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def cancel_on_disconnect(request: Request, work: Awaitable[T]) -> T:
    """Await ``work``, cancelling it when the client disconnects (the upstream call stops and
    its pooled connection is freed); then :class:`ClientDisconnected`."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
        watcher.cancel()
    if task.cancelled() or not task.done():
        with contextlib.suppress(asyncio.CancelledError):
            await task
        raise ClientDisconnected("the client closed the connection before the reply",
                                 code="client_disconnected")
    return task.result()


def check_auth(headers: Mapping[str, str], keys: Sequence[bytes]) -> bytes | None:
    """Require ``Authorization: Bearer <key>`` matching one of ``keys``, and return the key
    (``None`` when no keys are configured: everything passes). Every key is compared in
    constant time."""
    if not keys:
        return None
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    given = token.strip().encode() if scheme.lower() == "bearer" else b""
    matched: bytes | None = None
    for key in keys:
        if hmac.compare_digest(given, key):
            matched = key
    if matched is None:
        raise AuthenticationError(
            "missing or invalid API key for the utilityguard proxy; send "
            "'Authorization: Bearer <key>' with one of its configured keys",
            code="invalid_api_key")
    return matched


def key_in(key: bytes | None, keys: Sequence[bytes]) -> bool:
    """``key`` is one of ``keys`` (each compared in constant time)."""
    found = False
    for k in keys:
        found |= key is not None and hmac.compare_digest(key, k)
    return found


def parse_json_object(raw: bytes, kind: str) -> dict[str, Any]:
    """The request body ``raw`` as a JSON object (:class:`InvalidRequestError` otherwise;
    ``kind`` names what it should be, for the message)."""
    try:
        body = json.loads(raw)
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
    policies.exceptions.InvalidRequestError: 'messages' is required: a non-empty list of messages
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


def _check_type(body: Mapping[str, Any], key: str, kind: type) -> None:
    value = body.get(key)
    if value is not None and not isinstance(value, kind):
        raise InvalidRequestError(f"'{key}' must be a {kind.__name__}; got {value!r}",
                                  param=key, code="invalid_request")


@dataclass(frozen=True)
class Overrides:
    """Per-request overrides read from the ``x-utilityguard-*`` request headers."""

    cost: float | None = None
    c_r: float | None = None
    mode: Mode | None = None
    confidence: float | None = None


def _header(headers: Mapping[str, str], name: str, check: Callable[[Any, str], T],
            normalize: Callable[[str], str] = str) -> T | None:
    """The value of header ``name`` checked by the guard's own validator for that value
    (:mod:`guard.decision_config`); its error, which names the header, as a 400."""
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return check(normalize(raw), f"header {name}")
    except ValueError as exc:
        raise InvalidRequestError(str(exc), param=name, code="invalid_header") from None


def _token(raw: str) -> str:
    return raw.strip().lower()


def override_headers(headers: Mapping[str, str], *, caller_confidence: bool) -> list[str]:
    """The override headers a request sends that change what the guard enforces: mode, cost,
    refusal cost, and the confidence header unless the proxy reads ``p`` from it
    (``--confidence caller``). Off by default: the operator grants them
    (``--allow-client-overrides`` or ``--override-api-key``).

    >>> override_headers({"x-utilityguard-mode": "shadow", "x-utilityguard-confidence": "1"},
    ...                  caller_confidence=True)
    ['x-utilityguard-mode']
    """
    names = [MODE_HEADER, COST_HEADER, REFUSAL_COST_HEADER]
    if not caller_confidence:
        names.append(CONFIDENCE_HEADER)
    return [n for n in names if n in headers]


def check_overrides(headers: Mapping[str, str], *, allowed: bool, caller_confidence: bool
                    ) -> list[str]:
    """The override headers of a request (see :func:`override_headers`), or
    :class:`PermissionDeniedError` (403) when it sends one it is not granted."""
    used = override_headers(headers, caller_confidence=caller_confidence)
    if used and not allowed:
        raise PermissionDeniedError(
            f"this proxy does not let clients override the guard ({', '.join(used)}); the "
            "operator grants overrides with --allow-client-overrides or to named keys with "
            "--override-api-key", param=used[0])
    return used


def parse_overrides(headers: Mapping[str, str]) -> Overrides:
    """The guard overrides a request asks for; :class:`InvalidRequestError` for a bad value.

    Examples
    --------
    >>> parse_overrides({"x-utilityguard-cost": "8", "x-utilityguard-mode": "shadow"})
    Overrides(cost=8.0, c_r=None, mode='shadow', confidence=None)
    """
    return Overrides(
        cost=_header(headers, COST_HEADER, check_cost),
        c_r=_header(headers, REFUSAL_COST_HEADER, check_c_r),
        mode=_header(headers, MODE_HEADER, check_mode, normalize=_token),
        confidence=_header(headers, CONFIDENCE_HEADER, check_probability),
    )


@dataclass(frozen=True)
class ChatPlan:
    """The upstream request for one client request, and what to undo in the reply.

    Attributes
    ----------
    body : dict
        What is sent upstream: the client's body plus the guard's overrides.
    stream : bool
        The client asked for a stream.
    client_logprobs : bool
        The client asked for logprobs itself (otherwise they are removed from the reply).
    client_n : int
        Choices the client asked for; the reply is cut to this many.
    samples : int
        Choices asked of the upstream (``> client_n`` only for the consistency signal).
    signal_samples : int
        Choices the confidence signal needs (``> 1`` only for consistency): the only reason
        the proxy makes extra upstream calls when the upstream returns fewer choices.
    """

    body: dict[str, Any]
    stream: bool
    client_logprobs: bool
    client_n: int
    samples: int
    signal_samples: int = 1

    def as_sent(self, body: Mapping[str, Any]) -> ChatPlan:
        """The plan for sending ``body`` as the client sent it (nothing added)."""
        return ChatPlan(body=dict(body), stream=self.stream,
                        client_logprobs=self.client_logprobs, client_n=self.client_n,
                        samples=self.client_n)

    @property
    def include_usage(self) -> bool:
        """The client asked for a usage chunk at the end of the stream."""
        options = self.body.get("stream_options")
        return isinstance(options, dict) and bool(options.get("include_usage"))


def plan_request(body: Mapping[str, Any], guard: Guard) -> ChatPlan:
    """The upstream body for ``body``: the guard's extractors' overrides, keeping what the
    client chose where it asks for at least as much (its ``top_logprobs``, a larger ``n``);
    a client that asks for ``logprobs`` without ``top_logprobs`` gets none added."""
    client_n = int(body.get("n") or 1)
    stream = bool(body.get("stream"))
    upstream = guard.request_overrides(body)
    top = body.get("top_logprobs")
    if "top_logprobs" in upstream and isinstance(top, int) and not isinstance(top, bool):
        upstream["top_logprobs"] = max(top, int(upstream["top_logprobs"]))
    elif body.get("logprobs") is True and top is None:
        # the client asked for logprobs itself: send its request as it is, so that it gets
        # what the upstream would have sent it (no top_logprobs alternatives)
        upstream.pop("top_logprobs", None)
    # what the signal alone asks for (the client's own n is not a reason for extra calls)
    own = {k: v for k, v in body.items() if k != "n"}
    signal_samples = int(guard.request_overrides(own).get("n") or 1)
    samples = max(client_n, signal_samples)
    if samples > 1 or "n" in body:
        upstream["n"] = samples
    return ChatPlan(body=upstream, stream=stream, client_logprobs=body.get("logprobs") is True,
                    client_n=client_n, samples=samples, signal_samples=signal_samples)
