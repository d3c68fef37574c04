"""Where audit rows go and come from: the :class:`AuditStore` interface and :func:`open_store`.

A store is one connection to one audit database. Two backends implement it:
:class:`~guard.proxy.audit.sqlite.SQLiteStore` (a file, the embedded default) and
:class:`~guard.proxy.audit.postgres.PostgresStore` (a ``postgresql://`` URL, shared by many
replicas). ``open_store(target)`` picks the backend from the target: a URL starting with
``postgresql://`` or ``postgres://``, otherwise a file path.

The contract, for writers (the proxy's :class:`~guard.proxy.audit.writer.AuditWriter`) and
readers (``audit export``, ``audit report``, ``fit --from-audit``) alike:

* :meth:`AuditStore.connect` opens the connection. With ``create=True`` it creates every table
  of :data:`~guard.proxy.audit.schema.TABLES` and adds columns an older database lacks; with
  ``create=False`` (readers) it changes nothing, and a database without the audit tables is a
  :class:`AuditStoreError`.
* :meth:`AuditStore.insert` appends rows to one table in one transaction.
* :meth:`AuditStore.rows` yields every row of one table as a dict, oldest first (a column the
  database lacks reads as ``None``).
* :class:`AuditStoreUnavailable` means the database cannot be reached right now (refused,
  restarted, connection lost): nothing was written and the same call may succeed later, so the
  writer keeps the rows and retries. Any other :class:`AuditStoreError` means the rows themselves
  were refused; retrying cannot help.

A store's :attr:`~AuditStore.name` is printable: a URL's password is masked.

Examples
--------
>>> open_store("/tmp/audit.db").name
'/tmp/audit.db'
>>> open_store("postgresql://guard:hunter2@db:5432/audit").name
'postgresql://guard:***@db:5432/audit'
"""

from __future__ import annotations

import abc
import os
from collections.abc import Iterator, Sequence
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
    def close(self) -> None:
        """Close the connection (idempotent; a closed store may :meth:`connect` again)."""

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_store(target: str | os.PathLike[str]) -> AuditStore:
    """The store of ``target`` (not yet connected): PostgreSQL for a ``postgresql://`` URL,
    SQLite for a path."""
    if is_url(target):
        from guard.proxy.audit.postgres import PostgresStore

        return PostgresStore(str(target))
    from guard.proxy.audit.sqlite import SQLiteStore

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
