"""``GET /v1/decisions/{request_id}``: a decision read again by the key that made it.

Every guarded reply carries its decision in the body and the ``x-utilityguard-*`` headers,
but a client may drop an unknown body field, or lose a stream's last chunk. With the
``x-utilityguard-request-id`` header it can then ask the proxy for the decision, on any
replica.

A decision is bound to the *key* that made the request, not to how its ``Authorization``
header was spelled: :func:`guard.proxy.auth.credential` reads the token of
``Bearer <token>`` (the scheme in any case, any spaces around) and keeps a salted digest of
it, so no key is held anywhere.
The :class:`DecisionStore` keeps each decision in memory (per process) for
``decision_retention`` seconds (default an hour) and at most ``decision_capacity`` of them
(the oldest go first). A decision this process does not hold is looked up in the audit log
by its indexed ``request_id`` (:func:`decision_entry` of the row, whose ``owner`` column is the
same digest): a SQLite file is shared by the workers of one machine, a PostgreSQL database by
every replica. Another credential gets the same 404 as an unknown id, so an id seen in a log
tells nobody else anything. Nothing of the reply or the query is kept.
"""

from __future__ import annotations

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


def decision_entry(record: DecisionRecord, *, route: str | None, model: str | None,
                   created: float) -> dict[str, Any]:
    """What ``GET /v1/decisions/{id}`` answers for ``record`` (the same whichever process or
    replica holds it)."""
    return {"object": "utilityguard.decision", **record.summary(), "c_r": record.c_r,
            "cost_source": record.cost_source, "p_source": record.p_source,
            "route": route, "model": model, "created": int(created)}


def entry_of_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`decision_entry` of an audit-log row of the decisions table."""
    record = DecisionRecord.model_validate(
        {k: row[k] for k in DecisionRecord.model_fields if row.get(k) is not None})
    return decision_entry(record, route=row.get("route"), model=row.get("model"),
                          created=float(row.get("ts") or 0.0))


def not_found(request_id: str, retention_s: float) -> UnknownRequestError:
    """The one 404 of an id that is unknown, expired, or another credential's."""
    return UnknownRequestError(
        f"no decision with request id {request_id[:64]!r} for this key (decisions are kept "
        f"{retention_s:g} s)", param="request_id")


class DecisionStore:
    """Recent decisions by request id, each readable only with the credential that made it
    (thread-safe, bounded in time and count)."""

    def __init__(self, retention_s: float = DEFAULT_RETENTION_S,
                 capacity: int = DEFAULT_CAPACITY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if retention_s <= 0 or capacity < 1:
            raise ValueError("retention_s must be > 0 and capacity >= 1")
        self.retention_s, self.capacity, self._clock = retention_s, capacity, clock
        self._items: OrderedDict[str, tuple[float, str, dict[str, Any]]] = OrderedDict()
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

    def put(self, record: DecisionRecord, owner: str, *, route: str | None = None,
            model: str | None = None) -> None:
        """Keep ``record`` for ``owner`` (a :func:`credential`)."""
        entry = decision_entry(record, route=route, model=model, created=time.time())
        with self._lock:
            now = self._clock()
            self._items[record.request_id] = (now, owner, entry)
            self._items.move_to_end(record.request_id)
            self._expire(now)

    def find(self, request_id: str, owner: str) -> dict[str, Any] | None:
        """The decision ``request_id`` made with ``owner`` held here (``None`` when there is
        none, it expired, or another credential made it)."""
        with self._lock:
            self._expire(self._clock())
            found = self._items.get(request_id)
        if found is None or not hmac.compare_digest(found[1], owner):
            return None
        return dict(found[2])

    def get(self, request_id: str, owner: str) -> dict[str, Any]:
        """:meth:`find`, or :class:`UnknownRequestError` (404)."""
        found = self.find(request_id, owner)
        if found is None:
            raise not_found(request_id, self.retention_s)
        return found


def owned_row(row: Mapping[str, Any] | None, owner: str, retention_s: float,
              now: float | None = None) -> dict[str, Any] | None:
    """The entry of an audit-log decision ``row`` when ``owner`` made it and it is younger
    than ``retention_s`` (``None`` otherwise: the caller answers the one 404)."""
    if row is None or not hmac.compare_digest(str(row.get("owner") or ""), owner):
        return None
    if (now if now is not None else time.time()) - float(row.get("ts") or 0.0) >= retention_s:
        return None
    return entry_of_row(row)


def valid_request_id(request_id: str) -> bool:
    """Whether ``request_id`` looks like one the proxy makes (32 hex digits)."""
    return len(request_id) == 32 and _ID_CHARS.issuperset(request_id)
