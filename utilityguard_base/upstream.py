"""The one OpenAI-compatible chat client: error translation and retries.

Every call the distribution makes to a model endpoint goes through here: the guard proxy's
upstream, ``collect`` (benchmarks), the model grader (benchmarks) and the consequence judges
(``cost_models.annotation``). It lives in :mod:`utilityguard_base`, below every package that
calls a model.

* **Errors** — httpx exceptions become :class:`UpstreamTimeout` / :class:`UpstreamUnavailable`
  in :func:`map_exceptions` (the one place that catches them), an HTTP error status
  :class:`UpstreamStatusError` (status, a capped body, ``retry-after``), a reply that is not a
  JSON object :class:`UpstreamError`. Nothing else catches httpx errors.
* **Retries** (:class:`ChatClient`, :class:`SyncChatClient`) — a timeout, an unreachable
  endpoint, a 5xx or a 429 is retried up to ``retries`` attempts in all; the wait honours the
  endpoint's ``retry-after`` (seconds or an HTTP date) and is otherwise exponential backoff
  with jitter, capped at ``max_backoff``; any other 4xx is raised at once (the request itself is
  wrong); a reply the caller's ``check`` rejects (:class:`UnusableReply`) is retried too.
  Bodies and headers are never logged: they may carry a credential.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import http.cookiejar
import itertools
import json
import logging
import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx

from utilityguard_base.exceptions import (
    UnusableReply,
    UpstreamError,
    UpstreamPoolExhausted,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from utilityguard_base.wellformed import loads_standard

__all__ = ["ERROR_HEADERS", "MAX_ERROR_BODY", "RETRIED_STATUS", "ChatClient", "Check",
           "SyncChatClient", "backoff", "check_status", "cookieless", "display_url",
           "json_object", "map_exceptions", "message_text", "retry_after"]

log = logging.getLogger(__name__)
ERROR_HEADERS = ("retry-after",)
MAX_ERROR_BODY = 64 * 1024
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
Check = Callable[[dict[str, Any]], None]


def cookieless() -> http.cookiejar.CookieJar:
    """A cookie jar that keeps no cookie, for every upstream client: a client is shared by
    every caller of the proxy, so a ``Set-Cookie`` kept from one reply and sent with the next
    request would carry one caller's upstream session to another
    (``tests/guard/proxy/test_upstream_cookies.py``)."""
    return http.cookiejar.CookieJar(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


def display_url(url: str | httpx.URL) -> str:
    """``url`` without user info, query or fragment, for messages and logs.

    >>> display_url("https://user:secret@api.example.com/v1?key=abc")
    'https://api.example.com/v1'
    """
    u = httpx.URL(str(url))
    return str(u.copy_with(username=None, password=None, query=None, fragment=None))


@contextlib.contextmanager
def map_exceptions(name: str, *, pool_timeout: float | None = None) -> Iterator[None]:
    """Translate the httpx errors raised inside the block while talking to ``name`` into the
    upstream errors of :mod:`utilityguard_base.exceptions` (the one place that catches httpx
    errors).

    A timeout becomes :class:`UpstreamTimeout` — :class:`UpstreamPoolExhausted` when no pooled
    connection was free within ``pool_timeout`` seconds (given by the proxy, which owns the
    pool) — and any other transport error :class:`UpstreamUnavailable`.

    >>> with map_exceptions("http://h/v1"):
    ...     raise httpx.ConnectError("refused")
    Traceback (most recent call last):
    utilityguard_base.exceptions.UpstreamUnavailable: cannot reach the upstream at http://h/v1:...
    """
    try:
        yield
    except httpx.PoolTimeout:
        if pool_timeout is None:
            raise UpstreamTimeout(
                f"the upstream at {name} did not answer in time (PoolTimeout)") from None
        raise UpstreamPoolExhausted(
            f"no free connection to the upstream at {name} within {pool_timeout:g} s: the "
            "proxy's upstream connection pool is exhausted (raise --max-connections or "
            "--pool-timeout)") from None
    except httpx.TimeoutException as exc:
        raise UpstreamTimeout(
            f"the upstream at {name} did not answer in time ({type(exc).__name__})") from None
    except httpx.HTTPError as exc:  # refused / reset, DNS, TLS, protocol errors
        reason = str(exc) or type(exc).__name__
        raise UpstreamUnavailable(f"cannot reach the upstream at {name}: {reason}") from None


def check_status(response: httpx.Response) -> None:
    """Raise :class:`UpstreamStatusError` unless ``response`` has a 2xx status."""
    if 200 <= response.status_code < 300:
        return
    text = response.content[:MAX_ERROR_BODY].decode("utf-8", errors="replace")
    keep = {h: response.headers[h] for h in ERROR_HEADERS if h in response.headers}
    raise UpstreamStatusError(response.status_code, text, headers=keep)


def json_object(response: httpx.Response, name: str) -> dict[str, Any]:
    """The response body as a JSON object, or :class:`UnusableReply` (retried by the clients)."""
    try:  # NaN / Infinity read as null, lone surrogates as U+FFFD: standard JSON onwards
        data = loads_standard(response.content, constants="null")
    except (ValueError, RecursionError):
        raise UnusableReply(f"the upstream at {name} returned a reply that is not JSON"
                            ) from None
    if not isinstance(data, dict):
        raise UnusableReply(f"the upstream at {name} returned a JSON {type(data).__name__}, "
                            "not a chat completion")
    return data


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from a ``retry-after`` header (delta-seconds or an HTTP date).

    >>> retry_after({"retry-after": "3"})
    3.0
    >>> retry_after({}) is None
    True
    """
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff(attempt: int, headers: Mapping[str, str], *, base: float, cap: float) -> float:
    """The wait before retry number ``attempt + 1``: the endpoint's ``retry-after`` if it gave
    one, else ``base * 2**attempt`` with up to 25% jitter; never more than ``cap``."""
    told = retry_after(headers)
    if told is not None:
        return min(cap, told)
    return float(min(cap, base * 2.0**attempt * (1.0 + 0.25 * random.random())))


def _retryable(exc: UpstreamError) -> bool:
    if isinstance(exc, UpstreamStatusError):
        return exc.status in RETRIED_STATUS
    return isinstance(exc, (UpstreamTimeout, UpstreamUnavailable, UnusableReply))


class _Base:
    def __init__(self, base_url: str, *, api_key: str | None, retries: int, base_backoff: float,
                 max_backoff: float) -> None:
        if retries < 1:
            raise ValueError(f"retries must be >= 1, got {retries}")
        self.name = display_url(base_url).rstrip("/")
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.retries = retries
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff

    def _accept(self, response: httpx.Response, check: Check | None) -> dict[str, Any]:
        check_status(response)
        data = json_object(response, self.name)
        if check is not None:
            check(data)
        return data

    def _wait(self, attempt: int, exc: UpstreamError) -> float:
        """Seconds to wait before retrying after ``exc``; re-raises it when it is final."""
        if not _retryable(exc) or attempt + 1 >= self.retries:
            raise exc
        headers = exc.headers if isinstance(exc, UpstreamStatusError) else {}
        delay = backoff(attempt, headers, base=self.base_backoff, cap=self.max_backoff)
        log.info("upstream %s: %s; retry %d/%d in %.2f s", self.name, type(exc).__name__,
                 attempt + 1, self.retries - 1, delay)
        return delay


class ChatClient(_Base):
    """Async ``POST /chat/completions`` with retries (see the module docstring)."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 300.0,
                 retries: int = 5, base_backoff: float = 0.5, max_backoff: float = 60.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(base_url, api_key=api_key, retries=retries, base_backoff=base_backoff,
                         max_backoff=max_backoff)
        self._client = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout,
                                         headers=self.headers, transport=transport,
                                         cookies=cookieless())

    async def complete(self, body: Mapping[str, Any], check: Check | None = None, *,
                       path: str = "/chat/completions") -> dict[str, Any]:
        """The chat completion for ``body``, retried; :class:`UpstreamError` on failure.
        ``check(completion)`` may raise :class:`UnusableReply` to have the request retried.
        ``path="/completions"`` posts a legacy text completion instead (base models)."""
        for attempt in itertools.count():
            try:
                with map_exceptions(self.name):
                    r = await self._client.post(path, json=dict(body))
                return self._accept(r, check)
            except UpstreamError as exc:
                await asyncio.sleep(self._wait(attempt, exc))
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._client.aclose()


class SyncChatClient(_Base):
    """Blocking ``POST /chat/completions`` with retries (see the module docstring)."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 60.0,
                 retries: int = 3, base_backoff: float = 0.25, max_backoff: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(base_url, api_key=api_key, retries=retries, base_backoff=base_backoff,
                         max_backoff=max_backoff)
        self._client = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout,
                                    headers=self.headers, transport=transport,
                                    cookies=cookieless())

    def complete(self, body: Mapping[str, Any], check: Check | None = None) -> dict[str, Any]:
        """The chat completion for ``body``, retried; :class:`UpstreamError` on failure.
        ``check(completion)`` may raise :class:`UnusableReply` to have the request retried."""
        for attempt in itertools.count():
            try:
                with map_exceptions(self.name):
                    r = self._client.post("/chat/completions", json=dict(body))
                return self._accept(r, check)
            except UpstreamError as exc:
                time.sleep(self._wait(attempt, exc))
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._client.close()


def message_text(completion: Mapping[str, Any]) -> str:
    """The first choice's message content (a legacy completion's ``text``; ``""`` when empty),
    or :class:`UpstreamError` when the reply has no choices (an error object sent with status
    200 is not an empty reply)."""
    choices = completion.get("choices")
    if not choices or not isinstance(choices[0], dict):
        raise UpstreamError(f"upstream reply has no choices: {json.dumps(completion)[:200]}")
    if "message" not in choices[0] and "text" in choices[0]:  # a legacy text completion
        return str(choices[0].get("text") or "")
    msg = choices[0].get("message") or {}
    return str(msg.get("content") or "")
