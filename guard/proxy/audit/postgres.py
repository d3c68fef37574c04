"""The PostgreSQL audit store: one database shared by every proxy replica.

Needs the ``postgres`` extra (``pip install 'utilityguard[postgres]'``, psycopg 3 with its
binary wheel). Rows are appended with ``COPY ... FROM STDIN`` (one round trip per batch) in one
transaction. The tables are created under a transaction-scoped advisory lock, so replicas
starting together do not race on ``CREATE TABLE``. A lost or refused connection is
:class:`~guard.proxy.audit.store.AuditStoreUnavailable` (the writer reconnects and retries);
a row the server rejects is :class:`~guard.proxy.audit.store.AuditStoreError`. Error messages
never carry the URL's password.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from guard.exceptions import AuditStoreError, AuditStoreUnavailable
from guard.proxy.audit.backend import AuditStore, index_sql, mask_url, select_sql
from guard.proxy.audit.schema import TABLES, Table

_TYPES = {"real": "DOUBLE PRECISION", "integer": "INTEGER", "text": "TEXT"}
_SCHEMA_LOCK = 0x7574696C  # pg_advisory_xact_lock key while creating tables ("util")
CONNECT_TIMEOUT = 5  # seconds


class PostgresStore(AuditStore):
    """An audit log in the PostgreSQL database at ``url`` (``postgresql://user:pw@host/db``).
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = mask_url(url)
        self._password = urlsplit(url).password or ""
        self._conn: Any = None
        self._columns: dict[str, set[str]] = {}

    def _error(self, exc: BaseException, kind: type[AuditStoreError] = AuditStoreError
               ) -> AuditStoreError:
        text = " ".join(str(exc).split())
        if self._password:
            text = text.replace(self._password, "***")
        return kind(f"{self.name}: {text}")

    def connect(self, *, create: bool = True) -> None:
        try:
            import psycopg
        except ImportError:
            raise AuditStoreError("a postgresql:// audit log needs psycopg: "
                                  "pip install 'utilityguard[postgres]'") from None
        self.close()
        try:
            conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT,
                                   application_name="utilityguard", autocommit=True)
        except psycopg.OperationalError as exc:
            raise self._error(exc, AuditStoreUnavailable) from None
        except psycopg.Error as exc:  # a malformed URL
            raise self._error(exc) from None
        self._conn = conn
        if create:
            try:
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                    for table in TABLES:
                        cols = ", ".join(f"{c.name} {_TYPES[c.kind]}" for c in table.columns)
                        cur.execute(f"CREATE TABLE IF NOT EXISTS {table.name} "
                                    f"(id BIGSERIAL PRIMARY KEY, {cols})")
                        for c in table.columns:  # a database written by an older version
                            cur.execute(f"ALTER TABLE {table.name} ADD COLUMN IF NOT EXISTS "
                                        f"{c.name} {_TYPES[c.kind]}")
                        for statement in index_sql(table):
                            cur.execute(statement)
            except psycopg.Error as exc:
                self.close()
                raise self._classify(exc) from None

    def _classify(self, exc: BaseException) -> AuditStoreError:
        import psycopg

        lost = isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))
        if lost or self._conn is None or self._conn.closed or self._conn.broken:
            self.close()
            return self._error(exc, AuditStoreUnavailable)
        return self._error(exc)

    def insert(self, table: Table, rows: Sequence[Sequence[Any]]) -> None:
        import psycopg

        if self._conn is None:
            raise AuditStoreUnavailable(f"{self.name}: not connected")
        try:
            with self._conn.transaction(), self._conn.cursor() as cur, cur.copy(
                    f"COPY {table.name} ({', '.join(table.names)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        except psycopg.Error as exc:
            raise self._classify(exc) from None

    def _present(self, table: Table) -> set[str]:
        """The columns the database holds of ``table`` (:class:`AuditStoreError` when the
        table is missing); read once per connection."""
        import psycopg

        if self._conn is None:
            raise AuditStoreUnavailable(f"{self.name}: not connected")
        found = self._columns.get(table.name)
        if found is None:
            try:
                with self._conn.cursor() as cur:
                    cur.execute("SELECT column_name FROM information_schema.columns WHERE "
                                "table_name = %s AND table_schema = current_schema()",
                                (table.name,))
                    found = {r[0] for r in cur.fetchall()}
            except psycopg.Error as exc:
                raise self._classify(exc) from None
            if found:
                self._columns[table.name] = found
        if not found:
            raise AuditStoreError(f"{self.name}: not a utilityguard audit log "
                                  f"(no {table.name} table)")
        return found

    def rows(self, table: Table) -> Iterator[dict[str, Any]]:
        if self._conn is None:
            raise AuditStoreError(f"{self.name}: not connected")
        present = self._present(table)
        return self._select(table, [c for c in table.names if c in present])

    def select(self, table: Table, where: Mapping[str, Any], *,
               columns: Sequence[str] | None = None, limit: int | None = None,
               newest_first: bool = True) -> list[dict[str, Any]]:
        import psycopg

        present = self._present(table)
        sql, names, params = select_sql(table, where, columns, present, limit, newest_first,
                                        "%s")
        wanted = names if columns is not None else ["id", *table.names]
        empty = dict.fromkeys(wanted)
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, params)
                found = cur.fetchall()
        except psycopg.Error as exc:
            raise self._classify(exc) from None
        return [empty | dict(zip(names, row, strict=True)) for row in found]

    def claim(self, table: Table, row: Sequence[Any]) -> bool:
        import psycopg

        if self._conn is None:
            raise AuditStoreUnavailable(f"{self.name}: not connected")
        sql = (f"INSERT INTO {table.name} ({', '.join(table.names)}) VALUES "
               f"({', '.join('%s' for _ in table.columns)}) ON CONFLICT DO NOTHING")
        try:
            with self._conn.cursor() as cur:
                cur.execute(sql, tuple(row))
                return bool(cur.rowcount == 1)
        except psycopg.Error as exc:
            raise self._classify(exc) from None

    def _select(self, table: Table, names: list[str]) -> Iterator[dict[str, Any]]:
        import psycopg

        try:
            with self._conn.transaction(), self._conn.cursor(name="utilityguard_rows") as cur:
                cur.itersize = 2000
                cur.execute(f"SELECT {', '.join(names)} FROM {table.name} ORDER BY id")
                empty = dict.fromkeys(table.names)
                for row in cur:
                    yield empty | dict(zip(names, row, strict=True))
        except psycopg.Error as exc:
            raise self._classify(exc) from None

    def close(self) -> None:
        conn, self._conn = self._conn, None
        self._columns = {}
        if conn is not None:
            conn.close()
