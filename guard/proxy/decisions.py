"""``GET /v1/decisions/{request_id}``: a decision read again by the key that made it.

Every guarded reply carries its decision in the body and the ``x-utilityguard-*`` headers,
but a client may drop an unknown body field, or lose a stream's last chunk. With the
``x-utilityguard-request-id`` header it can then ask the proxy for the decision.

The :class:`DecisionStore` keeps each decision in memory (per process) for
``decision_retention`` seconds (default an hour) and at most ``decision_capacity`` of them
(the oldest go first), with a digest of the credential that made the request (its
``Authorization`` header): another credential gets the same 404 as an unknown id, so an id
seen in a log tells nobody else anything. Nothing of the reply or the query is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from guard.decision_records import DecisionRecord
from guard.exceptions import UnknownRequestError

#: How long a decision is kept by default (seconds).
DEFAULT_RETENTION_S = 3600.0
#: How many decisions are kept at most by default.
DEFAULT_CAPACITY = 100_000
#: A request id: 32 hex digits (what the proxy makes).
_ID_CHARS = frozenset("0123456789abcdef")


def credential(headers: Mapping[str, str]) -> bytes:
    """A digest of the request's ``Authorization`` header (empty when it has none): what a
    decision is bound to. A digest, so no key is held in the store."""
    value = headers.get("authorization", "")
    return hashlib.sha256(value.encode("utf-8", "replace")).digest() if value else b""


class DecisionStore:
    """Recent decisions by request id, each readable only with the credential that made it
    (thread-safe, bounded in time and count)."""

    def __init__(self, retention_s: float = DEFAULT_RETENTION_S,
                 capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if retention_s <= 0 or capacity < 1:
            raise ValueError("retention_s must be > 0 and capacity >= 1")
        self.retention_s, self.capacity, self._clock = retention_s, capacity, clock
        self._items: OrderedDict[str, tuple[float, bytes, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._items)

    def _expire(self, now: float) -> None:
        while self._items:
            rid, (t, _, _) = next(iter(self._items.items()))
            if now - t < self.retention_s and len(self._items) <= self.capacity:
                return
            del self._items[rid]

    def put(self, record: DecisionRecord, owner: bytes, *, route: str | None = None,
            model: str | None = None) -> None:
        """Keep ``record`` for ``owner`` (a :func:`credential`)."""
        entry = {"object": "utilityguard.decision", **record.summary(), "c_r": record.c_r,
                 "cost_source": record.cost_source, "p_source": record.p_source,
                 "route": route, "model": model, "created": int(time.time())}
        with self._lock:
            now = self._clock()
            self._items[record.request_id] = (now, owner, entry)
            self._items.move_to_end(record.request_id)
            self._expire(now)

    def get(self, request_id: str, owner: bytes) -> dict[str, Any]:
        """The decision ``request_id`` made with ``owner``; :class:`UnknownRequestError`
        (404) when there is none, it expired, or another credential made it."""
        with self._lock:
            self._expire(self._clock())
            found = self._items.get(request_id)
        if found is None or not hmac.compare_digest(found[1], owner):
            raise UnknownRequestError(
                f"no decision with request id {request_id[:64]!r} for this key (decisions "
                f"are kept {self.retention_s:g} s, by the process that made them)",
                param="request_id")
        return dict(found[2])


def valid_request_id(request_id: str) -> bool:
    """Whether ``request_id`` looks like one the proxy makes (32 hex digits)."""
    return len(request_id) == 32 and _ID_CHARS.issuperset(request_id)
