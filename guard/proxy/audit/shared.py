"""The state every replica sees: one process's connection to the audit store for lookups.

The :class:`~guard.proxy.audit.writer.AuditWriter` appends; a :class:`SharedStore` reads and
claims, from request handlers (in a thread: never on the event loop) and from the refusal
budget's thread: ``GET /v1/decisions/{id}`` and ``POST /v1/feedback`` find a decision any
worker or replica made by its indexed ``request_id`` (:meth:`decision`), and the budget
ledger (:mod:`guard.proxy.budget_ledger`) reads the fleet's window of decisions and claims
the fleet's next step. A SQLite file is shared by the processes of one machine (the workers
of ``serve --workers N``), a PostgreSQL database by every replica.

One connection, opened on first use and again after the database was unreachable
(:class:`AuditStoreUnavailable` is raised to the caller, who answers without the store); one
lock, so the connection is used by one thread at a time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from guard.exceptions import AuditStoreUnavailable
from guard.proxy.audit.schema import DECISIONS, Table
from guard.proxy.audit.store import AuditStore, open_store

T = TypeVar("T")


class SharedStore:
    """A thread-safe, reconnecting connection to the audit store ``target`` (see the module
    docstring)."""

    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.store = open_store(target)
        self._lock = threading.Lock()
        self._open = False

    @property
    def name(self) -> str:
        """The database, printable (a URL's password masked)."""
        return self.store.name

    def _use(self, work: Callable[[AuditStore], T]) -> T:
        with self._lock:
            if not self._open:
                self.store.connect(create=True)
                self._open = True
            try:
                return work(self.store)
            except AuditStoreUnavailable:
                self._open = False
                self.store.close()
                raise

    def decision(self, request_id: str) -> dict[str, Any] | None:
        """The latest decision row of ``request_id`` (``None`` when there is none)."""
        rows = self._use(lambda s: s.select(DECISIONS, {"request_id": request_id}, limit=1))
        return rows[0] if rows else None

    def select(self, table: Table, where: Mapping[str, Any], *,
               columns: Sequence[str] | None = None, limit: int | None = None
               ) -> list[dict[str, Any]]:
        """:meth:`AuditStore.select`, newest first."""
        return self._use(lambda s: s.select(table, where, columns=columns, limit=limit))

    def claim(self, table: Table, row: Sequence[Any]) -> bool:
        """:meth:`AuditStore.claim`."""
        return self._use(lambda s: s.claim(table, row))

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._open = False
            self.store.close()
