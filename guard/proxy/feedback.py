"""Feedback on decisions: ``POST /v1/feedback``, stored beside the decisions in the audit log.

A label says, for one ``request_id`` the proxy decided, whether the model's reply was correct,
whether the query was answerable, and what a wrong answer would have cost (each may be
``null``: unknown). Labels are rows of the audit log's ``feedback`` table
(:data:`guard.proxy.audit.FEEDBACK`), queued to the same writer as the decisions (after the
decision they label) and never updated: for a request with several labels the latest counts
(:func:`labelled_decisions`), and every earlier one stays in the log. Both audit backends
(SQLite, PostgreSQL) hold them.

The decision itself may still be queued when its label arrives, so the proxy remembers the ids
it decided recently (:class:`RecentIds`, bounded) before it looks others up in the log, by
the indexed ``request_id`` (decisions any worker or replica made).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections import OrderedDict
from typing import Any

from guard.exceptions import (
    AuditStoreError,
    FeedbackError,
    InvalidRequestError,
)
from guard.proxy.audit import DECISIONS, FEEDBACK, open_store, read_rows
from guard.proxy.labels import COST_LABEL_RANGE

FIELDS = ("correct", "answerable", "cost")
MAX_ID_CHARS = 128


class RecentIds:
    """The last ``limit`` request ids of this process, each with the id of the key that made
    it (:func:`guard.proxy.auth.key_id`; thread-safe, bounded)."""

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, str | None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, request_id: str, key_id: str | None = None) -> None:
        with self._lock:
            self._ids[request_id] = key_id
            while len(self._ids) > self.limit:
                self._ids.popitem(last=False)

    def owner(self, request_id: str) -> tuple[bool, str | None]:
        """``(known, key id)`` of a request id."""
        with self._lock:
            return request_id in self._ids, self._ids.get(request_id)

    def __contains__(self, request_id: object) -> bool:
        with self._lock:
            return request_id in self._ids


def parse_feedback(raw: bytes) -> dict[str, Any]:
    """The validated label: ``request_id`` and each of ``correct``, ``answerable`` (bool or
    null) and ``cost`` (a number > 0 or null); :class:`InvalidRequestError` otherwise."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise InvalidRequestError("the body is not valid JSON (or nested too deeply)",
                                  code="invalid_json") from None
    if not isinstance(body, dict):
        raise InvalidRequestError("the body must be a JSON object")
    unknown = sorted(set(body) - {"request_id", *FIELDS})
    if unknown:
        raise InvalidRequestError(f"unknown field {unknown[0]!r}; allowed: request_id, "
                                  f"{', '.join(FIELDS)}", param=unknown[0])
    rid = body.get("request_id")
    if not isinstance(rid, str) or not rid or len(rid) > MAX_ID_CHARS:
        raise InvalidRequestError(f"request_id must be a non-empty string of at most "
                                  f"{MAX_ID_CHARS} characters (the x-utilityguard-request-id "
                                  "of the decision)", param="request_id")
    for key in ("correct", "answerable"):
        if body.get(key) is not None and not isinstance(body[key], bool):
            raise InvalidRequestError(f"{key} must be true, false or null; got "
                                      f"{body[key]!r}", param=key)
    cost = body.get("cost")
    low, high = COST_LABEL_RANGE
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float))
                             or not math.isfinite(cost) or not low <= cost <= high):
        raise InvalidRequestError(f"cost must be a number in [{low}, {high}] (the cost "
                                  f"scale's range) or null; got {cost!r}", param="cost")
    if all(body.get(k) is None for k in FIELDS):
        raise InvalidRequestError(f"a label needs at least one of {', '.join(FIELDS)}")
    return {"request_id": rid, **{k: body.get(k) for k in FIELDS}}


def feedback_row(label: dict[str, Any], key_id: str | None = None) -> tuple[Any, ...]:
    """The :data:`~guard.proxy.audit.FEEDBACK` row of a validated label; ``key_id``: the
    labeller's key (:func:`guard.proxy.auth.key_id`)."""
    def flag(v: Any) -> int | None:
        return None if v is None else int(bool(v))

    return FEEDBACK.row({"request_id": label["request_id"], "ts": time.time(),
                         "correct": flag(label["correct"]),
                         "answerable": flag(label["answerable"]), "cost": label["cost"],
                         "key_id": key_id})


def decided(target: str | os.PathLike[str], request_id: str) -> tuple[bool, str | None]:
    """``(found, key id)``: whether the audit log ``target`` holds a decision with this id,
    and the id of the key that made it (a lookup by the indexed ``request_id``; the running
    proxy asks its :class:`~guard.proxy.audit.shared.SharedStore` the same)."""
    try:
        with open_store(target) as store:
            store.connect(create=False)
            rows = store.select(DECISIONS, {"request_id": request_id}, limit=1)
    except AuditStoreError:
        return False, None
    return (True, rows[0].get("key_id")) if rows else (False, None)


def labelled_decisions(target: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every decision with a label, with its latest label as ``label_correct``,
    ``label_answerable`` and ``label_cost`` (oldest decision first).

    Raises :class:`~guard.exceptions.FeedbackError` (a ``ValueError``) when ``target`` is not
    an audit log or holds no label.
    """
    try:
        latest = {r["request_id"]: r for r in read_rows(target, FEEDBACK)}  # later rows win
        decisions = list(read_rows(target, DECISIONS))
    except AuditStoreError as exc:
        raise FeedbackError(f"no labelled decisions: {exc}; send labels to POST /v1/feedback "
                         "first") from None
    out = []
    for d in decisions:
        label = latest.get(d["request_id"])
        if label is None:
            continue
        out.append({**d, "label_correct": None if label["correct"] is None
                    else bool(label["correct"]),
                    "label_answerable": None if label["answerable"] is None
                    else bool(label["answerable"]),
                    "label_cost": label["cost"], "label_key_id": label.get("key_id")})
    return out
