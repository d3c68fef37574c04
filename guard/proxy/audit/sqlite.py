"""The SQLite audit store: one file, WAL journal, the embedded default backend."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from guard.exceptions import AuditStoreError
from guard.proxy.audit.backend import AuditStore, index_sql, select_sql
from guard.proxy.audit.schema import TABLES, Table

_TYPES = {"real": "REAL", "integer": "INTEGER", "text": "TEXT"}


class SQLiteStore(AuditStore):
    """An audit log in the SQLite file ``path`` (created with its directory on ``connect``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(path)
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise AuditStoreError(f"{self.name}: not connected")
        return self._conn

    def connect(self, *, create: bool = True) -> None:
        self.close()
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.path), timeout=30.0, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                with conn:
                    for table in TABLES:
                        _create(conn, table, self.name)
            else:
                if not self.path.is_file():
                    raise AuditStoreError(f"{self.name}: no such audit database")
                conn = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True,
                                       check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise AuditStoreError(f"{self.name}: cannot open the audit database ({exc})"
                                  ) from None
        self._conn = conn

    def insert(self, table: Table, rows: Sequence[Sequence[Any]]) -> None:
        sql = (f"INSERT INTO {table.name} ({', '.join(table.names)}) "
               f"VALUES ({', '.join('?' for _ in table.columns)})")
        try:
            with self.conn:
                self.conn.executemany(sql, rows)
        except (sqlite3.Error, ValueError) as exc:  # disk full, locked for 30 s, bad value
            raise AuditStoreError(f"{self.name}: {exc}") from None

    def rows(self, table: Table) -> Iterator[dict[str, Any]]:
        present = set(_columns(self.conn, table.name, self.name))
        if not present:
            raise AuditStoreError(f"{self.name}: not a utilityguard audit log "
                                  f"(no {table.name} table)")
        names = [c for c in table.names if c in present]
        cursor = self.conn.execute(f"SELECT {', '.join(names)} FROM {table.name} ORDER BY id")
        empty = dict.fromkeys(table.names)
        return (empty | dict(zip(names, row, strict=True)) for row in cursor)

    def select(self, table: Table, where: Mapping[str, Any], *,
               columns: Sequence[str] | None = None, limit: int | None = None,
               newest_first: bool = True) -> list[dict[str, Any]]:
        present = set(_columns(self.conn, table.name, self.name))
        if not present:
            raise AuditStoreError(f"{self.name}: not a utilityguard audit log "
                                  f"(no {table.name} table)")
        sql, names, params = select_sql(table, where, columns, present, limit, newest_first,
                                        "?")
        wanted = names if columns is not None else ["id", *table.names]
        empty = dict.fromkeys(wanted)
        try:
            found = self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise AuditStoreError(f"{self.name}: {exc}") from None
        return [empty | dict(zip(names, row, strict=True)) for row in found]

    def claim(self, table: Table, row: Sequence[Any]) -> bool:
        sql = (f"INSERT OR IGNORE INTO {table.name} ({', '.join(table.names)}) "
               f"VALUES ({', '.join('?' for _ in table.columns)})")
        try:
            with self.conn:
                return self.conn.execute(sql, tuple(row)).rowcount == 1
        except (sqlite3.Error, ValueError) as exc:
            raise AuditStoreError(f"{self.name}: {exc}") from None

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _columns(conn: sqlite3.Connection, table: str, name: str) -> list[str]:
    """The columns of ``table`` in the database called ``name`` (in errors: the file)."""
    try:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError as exc:
        raise AuditStoreError(f"{name}: not a utilityguard audit log ({exc})") from None


def _create(conn: sqlite3.Connection, table: Table, name: str) -> None:
    cols = ", ".join(f"{c.name} {_TYPES[c.kind]}" for c in table.columns)
    conn.execute(f"CREATE TABLE IF NOT EXISTS {table.name} (id INTEGER PRIMARY KEY, {cols})")
    present = set(_columns(conn, table.name, name))
    for c in table.columns:
        if c.name not in present:  # a database written by an older version
            conn.execute(f"ALTER TABLE {table.name} ADD COLUMN {c.name} {_TYPES[c.kind]}")
    for statement in index_sql(table):
        conn.execute(statement)
