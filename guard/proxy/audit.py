"""The audit log: every decision appended to a SQLite file, off the request path.

:class:`AuditWriter` owns a bounded :class:`queue.Queue` and one writer thread with its own
``sqlite3`` connection (WAL journal, batched inserts). A request only calls
:meth:`AuditWriter.submit`, a non-blocking ``put_nowait`` of a few microseconds; a thread-safe
queue (rather than an ``asyncio.Queue``) is what lets a plain thread drain it, so no SQLite
call ever runs on the event loop. When the queue is full the record is dropped, counted
(``utilityguard_audit_dropped_total``) and a warning is logged; :meth:`AuditWriter.close`
(the app's shutdown) writes everything that was queued before returning.

A row is DESIGN.md's decision record (:class:`~guard.records.DecisionRecord`) plus ``ts``
(Unix time), ``model`` (the model the client asked for), ``stream`` and ``query`` (the query
text, stored only when ``audit_queries`` is on; otherwise null). No header, key or reply text
is ever stored. :func:`export_jsonl` writes the rows as JSON lines.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from guard.proxy.metrics import ProxyMetrics
from guard.records import DecisionRecord
from policies.exceptions import InvalidValueError

log = logging.getLogger(__name__)

TABLE = "decisions"
_SQL_TYPES = {"cost": "REAL", "p": "REAL", "threshold": "REAL", "c_r": "REAL",
              "expected_utility_answer": "REAL", "expected_utility_refuse": "REAL",
              "latency_ms": "REAL", "alpha": "REAL", "signal_value": "REAL"}
#: The audit row's columns, in order (the decision record's fields, then the extras).
COLUMNS: tuple[str, ...] = (*DecisionRecord.model_fields, "ts", "model", "stream", "query")
_STOP = object()
_BATCH = 512
_WARN_EVERY = 10.0  # seconds between two "queue full" warnings


def _schema() -> str:
    types = {**_SQL_TYPES, "ts": "REAL", "stream": "INTEGER"}
    cols = ", ".join(f"{c} {types.get(c, 'TEXT')}" for c in COLUMNS)
    return f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER PRIMARY KEY, {cols})"


def _text(value: str | None) -> str | None:
    """``value`` storable as UTF-8 (lone surrogates from JSON escapes become ``?``)."""
    if value is None:
        return None
    return value.encode("utf-8", "replace").decode("utf-8")


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open (creating if needed) the audit database in WAL mode with its table."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(_schema())
    conn.commit()
    return conn


class AuditWriter:
    """Append decision records to the SQLite audit log from a background thread.

    Parameters
    ----------
    path : path-like
        The SQLite file (created with its directory).
    queue_size : int, default 10000
        Records that may wait; beyond that :meth:`submit` drops and counts them.
    metrics : ProxyMetrics, optional
        Where written and dropped records are counted.
    store_queries : bool, default False
        Store the query text (otherwise the ``query`` column is null).
    """

    def __init__(self, path: str | os.PathLike[str], *, queue_size: int = 10_000,
                 metrics: ProxyMetrics | None = None, store_queries: bool = False) -> None:
        self.path = Path(path)
        self.metrics = metrics
        self.store_queries = store_queries
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._last_warning = 0.0
        self.written = 0
        self.dropped = 0

    def start(self) -> None:
        """Create the database (errors surface here, at startup) and start the writer."""
        connect(self.path).close()
        self._thread = threading.Thread(target=self._run, name="utilityguard-audit",
                                        daemon=True)
        self._thread.start()

    def submit(self, record: DecisionRecord, *, query: str | None = None,
               model: str | None = None, stream: bool = False) -> bool:
        """Queue one record without blocking; ``False`` (counted, warned) when it was dropped.
        """
        item = (record, time.time(), model, stream, query if self.store_queries else None)
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.metrics is not None:
                self.metrics.audit_dropped.inc()
            now = time.monotonic()
            if now - self._last_warning >= _WARN_EVERY:
                self._last_warning = now
                log.warning("audit queue full (%d records): dropped %d decision record(s) "
                            "so far", self._queue.maxsize, self.dropped)
            return False
        return True

    def close(self, timeout: float | None = 30.0) -> None:
        """Write everything queued, then stop the writer (idempotent)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:  # waits only while the writer drains a full queue
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            log.error("the audit writer is stuck; %d record(s) not written", self._queue.qsize())
            return
        thread.join(timeout)
        if thread.is_alive():
            log.error("the audit writer did not finish within %s s; %d record(s) pending",
                      timeout, self._queue.qsize())

    @staticmethod
    def _row(item: tuple[DecisionRecord, float, str | None, bool, str | None]) -> list[Any]:
        record, ts, model, stream, query = item
        return [*record.model_dump().values(), ts, _text(model), int(stream), _text(query)]

    def _run(self) -> None:
        conn = connect(self.path)
        sql = (f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) "
               f"VALUES ({', '.join('?' for _ in COLUMNS)})")
        stop = False
        try:
            while not stop:
                batch = [self._queue.get()]
                while len(batch) < _BATCH:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = any(item is _STOP for item in batch)
                rows = [self._row(item) for item in batch if item is not _STOP]
                if not rows:
                    continue
                try:
                    with conn:
                        conn.executemany(sql, rows)
                except (sqlite3.Error, ValueError) as exc:  # disk full, locked, bad text
                    log.error("could not write %d audit record(s): %s", len(rows), exc)
                    continue
                self.written += len(rows)
                if self.metrics is not None:
                    self.metrics.audit_written.inc(amount=len(rows))
        finally:
            conn.close()


def export_jsonl(db: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Write every audit row of ``db`` to ``out`` as JSON lines, oldest first; the count.

    Raises ``ValueError`` when ``db`` is missing or holds no audit table.
    """
    path = Path(db)
    if not path.is_file():
        raise InvalidValueError(f"{path}: no such audit database")
    conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        try:
            cursor = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM {TABLE} ORDER BY id")
        except sqlite3.DatabaseError as exc:
            raise InvalidValueError(f"{path}: not a utilityguard audit log ({exc})") from None
        n = 0
        with Path(out).open("w", encoding="utf-8") as fh:
            for row in cursor:
                record = dict(zip(COLUMNS, row, strict=True))
                record["stream"] = bool(record["stream"])
                fh.write(json.dumps(record) + "\n")
                n += 1
    finally:
        conn.close()
    return n
