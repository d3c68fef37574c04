"""The :class:`AuditStore` interface both audit backends implement, and what they share.

A store is one connection to one audit database. Two backends implement it:
:class:`~guard.proxy.audit.sqlite.SQLiteStore` (a file, the embedded default) and
:class:`~guard.proxy.audit.postgres.PostgresStore` (a ``postgresql://`` URL, shared by many
replicas); :func:`guard.proxy.audit.store.open_store` picks one for a target.

The contract, for writers (the proxy's :class:`~guard.proxy.audit.writer.AuditWriter`) and
readers (``audit export``, ``audit report``, ``fit --from-audit``) alike:

* :meth:`AuditStore.connect` opens the connection. With ``create=True`` it creates every table
  of :data:`~guard.proxy.audit.schema.TABLES` and adds columns an older database lacks; with
  ``create=False`` (readers) it changes nothing, and a database without the audit tables is a
  :class:`AuditStoreError`.
* :meth:`AuditStore.insert` appends rows to one table in one transaction.
* :meth:`AuditStore.rows` yields every row of one table as a dict, oldest first (a column the
  database lacks reads as ``None``).
* :meth:`AuditStore.select` returns the rows matching equality conditions, newest first by
  default, at most ``limit`` of them, with their ``id`` (an indexed column, such as
  ``request_id``, makes it a lookup, not a scan).
* :meth:`AuditStore.claim` inserts one row unless a row with the same values of the table's
  ``unique`` columns exists: whoever inserts first wins (replicas agreeing on one next step).
* :class:`AuditStoreUnavailable` means the database cannot be reached right now (refused,
  restarted, connection lost): nothing was written and the same call may succeed later, so the
  writer keeps the rows and retries. Any other :class:`AuditStoreError` means the rows themselves
  were refused; retrying cannot help.

A store's :attr:`~AuditStore.name` is printable: a URL's password is masked (:func:`mask_url`).
"""
from __future__ import annotations

import abc
import os
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from guard.proxy.audit.schema import Table

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str | os.PathLike[str]) -> bool:
    """True when ``target`` is a PostgreSQL URL rather than a file path."""
    return isinstance(target, str) and target.lower().startswith(POSTGRES_SCHEMES)


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for logs and messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class AuditStore(abc.ABC):
    """One connection to an audit database (see the module docstring for the contract)."""

    #: Printable name of the database (a path, or a URL without its password).
    name: str

    @abc.abstractmethod
    def connect(self, *, create: bool = True) -> None:
        """Open the connection (and with ``create``, the tables and missing columns)."""

    @abc.abstractmethod
    def insert(self, table: Table, rows: Sequence[Sequence[Any]]) -> None:
        """Append ``rows`` (tuples in ``table``'s column order) in one transaction."""

    @abc.abstractmethod
    def rows(self, table: Table) -> Iterator[dict[str, Any]]:
        """Every row of ``table`` as ``{column: value}``, oldest first (raises
        :class:`AuditStoreError` at once, not at the first row, when the table is missing)."""

    @abc.abstractmethod
    def select(self, table: Table, where: Mapping[str, Any], *,
               columns: Sequence[str] | None = None, limit: int | None = None,
               newest_first: bool = True) -> list[dict[str, Any]]:
        """The rows of ``table`` whose columns equal ``where``'s values, with their ``id``
        (``columns``: which to read, default all; a column the database lacks reads as
        ``None``)."""

    @abc.abstractmethod
    def claim(self, table: Table, row: Sequence[Any]) -> bool:
        """Insert ``row`` unless one with the same ``table.unique`` values exists; whether
        it was inserted."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent; a closed store may :meth:`connect` again)."""

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def select_sql(table: Table, where: Mapping[str, Any], columns: Sequence[str] | None,
               present: set[str], limit: int | None, newest_first: bool, mark: str
               ) -> tuple[str, list[str], list[Any]]:
    """``(sql, the columns it reads, its parameters)`` of :meth:`AuditStore.select` for a
    database holding the columns ``present`` (``mark``: the driver's placeholder). Every name
    is checked against the table's own (:meth:`Table.checked`); a condition on a column the
    database lacks matches nothing."""
    wanted = table.checked(columns if columns is not None else table.names)
    names = ["id", *(c for c in wanted if c != "id" and c in present)]
    conditions = table.checked(where)
    if any(c not in present for c in conditions if c != "id"):
        conditions = []
        sql_where = " WHERE 1 = 0"
    else:
        sql_where = (" WHERE " + " AND ".join(f"{c} = {mark}" for c in conditions)
                     if conditions else "")
    order = "DESC" if newest_first else "ASC"
    sql = (f"SELECT {', '.join(names)} FROM {table.name}{sql_where} ORDER BY id {order}"
           + (f" LIMIT {int(limit)}" if limit is not None else ""))
    return sql, names, [where[c] for c in conditions]


def index_sql(table: Table) -> list[str]:
    """The ``CREATE [UNIQUE] INDEX IF NOT EXISTS`` statements of ``table`` (both backends)."""
    out = [f"CREATE INDEX IF NOT EXISTS {table.name}_{c} ON {table.name} ({c})"
           for c in table.indexes]
    if table.unique:
        out.append(f"CREATE UNIQUE INDEX IF NOT EXISTS {table.name}_unique ON {table.name} "
                   f"({', '.join(table.unique)})")
    return out
