"""Which audit backend serves a target: :func:`open_store`, and :func:`read_rows` for readers.

``open_store(target)`` picks the backend (:mod:`guard.proxy.audit.backend` states the
contract): PostgreSQL for a URL starting with ``postgresql://`` or ``postgres://``, SQLite for
a file path. ``read_rows(target, table)`` yields every row of a table, oldest first, without
changing the database (``audit export``, ``audit report``, ``fit --from-audit``).

Examples
--------
>>> open_store("/tmp/audit.db").name
'/tmp/audit.db'
>>> open_store("postgresql://guard:hunter2@db:5432/audit").name
'postgresql://guard:***@db:5432/audit'
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from guard.proxy.audit.backend import AuditStore, is_url, mask_url
from guard.proxy.audit.postgres import PostgresStore
from guard.proxy.audit.schema import Table
from guard.proxy.audit.sqlite import SQLiteStore

__all__ = ["AuditStore", "is_url", "mask_url", "open_store", "read_rows"]


def open_store(target: str | os.PathLike[str]) -> AuditStore:
    """The store of ``target`` (not yet connected): PostgreSQL for a ``postgresql://`` URL,
    SQLite for a path."""
    if is_url(target):
        return PostgresStore(str(target))
    return SQLiteStore(target)


def read_rows(target: str | os.PathLike[str], table: Table) -> Iterator[dict[str, Any]]:
    """Every row of ``table`` in the audit database ``target`` (path or URL), oldest first,
    without changing the database. Raises :class:`AuditStoreError` when it is not one."""
    store = open_store(target)
    store.connect(create=False)
    try:
        rows = store.rows(table)  # checks the table exists before the first row is asked for
    except BaseException:
        store.close()
        raise
    return _closing(store, rows)


def _closing(store: AuditStore, rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    try:
        yield from rows
    finally:
        store.close()
