"""The audit writer: decision records appended to an audit store, off the request path.

:class:`AuditWriter` owns a bounded :class:`queue.Queue` and one writer thread with its own
store connection (:func:`~guard.proxy.audit.store.open_store`: SQLite or PostgreSQL). A request
only calls :meth:`AuditWriter.submit`, a non-blocking ``put_nowait`` of a few microseconds; a
thread-safe queue (rather than an ``asyncio.Queue``) lets a plain thread drain it, so no
database call ever runs on the event loop. The thread writes what has queued up in batches of
up to 512 rows, one transaction each.

Nothing is lost silently. When the database is unreachable (a PostgreSQL restart, a network
cut) the writer keeps the batch in hand and reconnects with exponential backoff (50 ms doubling
to ``backoff_max``); meanwhile records keep queueing, and once the queue is full further
records are dropped. Every dropped record is counted in ``utilityguard_audit_dropped_total``
with its reason (``queue_full``; ``rejected``: the database refused the rows; ``shutdown``:
still unwritten when :meth:`AuditWriter.close` gave up waiting for the database) and logged
as a warning; :meth:`close` logs the totals. When the database comes back everything queued
is written, oldest first. A batch whose commit was cut off may be written twice (at least
once, never zero times without a count).

No header, key or reply text is ever stored; the query text only with ``store_queries``.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections import Counter as Tally
from typing import Any

from guard.decision_records import DecisionRecord
from guard.exceptions import AuditStoreError, AuditStoreUnavailable
from guard.proxy.audit.schema import DECISIONS, Table, decision_row
from guard.proxy.audit.store import open_store
from guard.proxy.metrics import ProxyMetrics

log = logging.getLogger(__name__)

_STOP = object()
_BATCH = 512
_WARN_EVERY = 10.0  # seconds between two warnings of the same kind
BACKOFF_START = 0.05  # seconds


class AuditWriter:
    """Append audit rows to a store from a background thread.

    Parameters
    ----------
    target : path-like or str
        A SQLite file (created with its directory) or a ``postgresql://`` URL.
    queue_size : int, default 10000
        Records that may wait; beyond that :meth:`submit` drops and counts them.
    metrics : ProxyMetrics, optional
        Where written and dropped records (and reconnections) are counted.
    store_queries : bool, default False
        Store the query text (otherwise the ``query`` column is null).
    backoff_max : float, default 5
        Longest wait between two reconnection attempts, in seconds.
    """

    def __init__(self, target: str | os.PathLike[str], *, queue_size: int = 10_000,
                 metrics: ProxyMetrics | None = None, store_queries: bool = False,
                 backoff_max: float = 5.0) -> None:
        self.store = open_store(target)
        self.metrics = metrics
        self.store_queries = store_queries
        self.backoff_max = backoff_max
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._deadline: float | None = None
        self._last_warning: dict[str, float] = {}
        self.written = 0
        self.dropped: Tally[str] = Tally()
        self.connected = False

    @property
    def name(self) -> str:
        """The database, printable (a URL's password masked)."""
        return self.store.name

    def start(self) -> None:
        """Connect and create the tables (errors, an unreachable database included, surface
        here, at startup), then start the writer thread."""
        self.store.connect(create=True)
        self.connected = True
        self._thread = threading.Thread(target=self._run, name="utilityguard-audit",
                                        daemon=True)
        self._thread.start()

    def submit(self, record: DecisionRecord, *, query: str | None = None,
               model: str | None = None, stream: bool = False,
               route: str | None = None, key_id: str | None = None,
               owner: str | None = None) -> bool:
        """Queue one decision without blocking; ``False`` (counted, warned) when dropped."""
        row = decision_row(record, ts=time.time(), model=model, stream=stream,
                           query=query if self.store_queries else None, route=route,
                           key_id=key_id, owner=owner)
        return self.submit_row(DECISIONS, row)

    def submit_row(self, table: Table, row: tuple[Any, ...]) -> bool:
        """Queue one row of any audit table (in its column order) without blocking."""
        try:
            self._queue.put_nowait((table, row))
        except queue.Full:
            self._drop("queue_full", 1)
            return False
        return True

    def status(self) -> dict[str, Any]:
        """This worker's audit log state (for ``/readyz``): the log's printable name, whether
        the database is reachable, rows waiting, written, and dropped by reason."""
        return {"log": self.name, "connected": self.connected, "pending": self.pending,
                "written": self.written, "dropped": dict(self.dropped)}

    @property
    def pending(self) -> int:
        """Rows queued and not yet written (approximate while the thread runs)."""
        return self._queue.qsize()

    def close(self, timeout: float = 30.0) -> None:
        """Write everything queued, waiting at most ``timeout`` seconds for an unreachable
        database; what is still unwritten then is counted as dropped (idempotent)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._deadline = time.monotonic() + timeout
        self._wake.set()
        try:  # blocks only while the writer drains a full queue, bounded by the deadline
            self._queue.put(_STOP, timeout=timeout + 1.0)
        except queue.Full:
            log.error("the audit writer is stuck; %d record(s) not written", self.pending)
        thread.join(timeout + 5.0)
        if thread.is_alive():
            log.error("the audit writer did not finish; %d record(s) pending", self.pending)
        total = sum(self.dropped.values())
        if total:
            log.error("audit log %s: %d record(s) written, %d dropped (%s)", self.name,
                      self.written, total,
                      ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())))

    def _drop(self, reason: str, n: int) -> None:
        self.dropped[reason] += n
        if self.metrics is not None:
            self.metrics.audit_dropped.inc(reason, amount=n)
        self._warn(reason, "audit log %s: dropped %d record(s) (%s); %d dropped so far",
                   self.name, n, reason, sum(self.dropped.values()))

    def _warn(self, kind: str, msg: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._last_warning.get(kind, -_WARN_EVERY) >= _WARN_EVERY:
            self._last_warning[kind] = now
            log.warning(msg, *args)

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _write(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        """Write ``rows``, reconnecting with backoff while the database is unreachable."""
        delay, down_since = BACKOFF_START, None
        while True:
            try:
                if not self.connected:
                    if self._past_deadline():
                        self._drop("shutdown", len(rows))
                        return
                    self.store.connect(create=True)
                    self.connected = True
                    if self.metrics is not None:
                        self.metrics.audit_reconnects.inc()
                    log.warning("audit log %s: reconnected after %.1f s", self.name,
                                time.monotonic() - (down_since or time.monotonic()))
                self.store.insert(table, rows)
            except AuditStoreUnavailable as exc:
                self.connected = False
                down_since = down_since or time.monotonic()
                self._warn("unavailable", "audit log unavailable (%s); %d record(s) waiting, "
                           "retrying", exc, len(rows) + self.pending)
                self._wake.wait(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            except AuditStoreError as exc:  # the rows themselves were refused
                log.error("audit log: could not write %d record(s): %s", len(rows), exc)
                self._drop("rejected", len(rows))
                return
            self.written += len(rows)
            if self.metrics is not None:
                self.metrics.audit_written.inc(amount=len(rows))
            return

    def _run(self) -> None:
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
                by_table: dict[Table, list[tuple[Any, ...]]] = {}
                for item in batch:
                    if item is not _STOP:
                        by_table.setdefault(item[0], []).append(item[1])
                for table, rows in by_table.items():
                    self._write(table, rows)
        finally:
            self.store.close()
            self.connected = False
