"""The proxy's audit log: every decision, in SQLite (embedded default) or PostgreSQL (shared).

Modules, in dependency order:

* :mod:`~guard.proxy.audit.schema` — the tables (:data:`DECISIONS`, :data:`FEEDBACK`,
  :data:`TABLES`) as typed columns, shared by both backends; another table is one more entry.
* :mod:`~guard.proxy.audit.backend` — the :class:`AuditStore` interface both backends
  implement.
* :mod:`~guard.proxy.audit.sqlite`, :mod:`~guard.proxy.audit.postgres` — the two backends.
* :mod:`~guard.proxy.audit.store` — the factory, :func:`open_store` (a ``postgresql://`` URL
  or a file path), and :func:`read_rows` for readers (``audit export``, ``audit report``,
  ``fit --from-audit``): ``read_rows(target, DECISIONS)`` yields dicts, oldest first, from
  either backend.
* :mod:`~guard.proxy.audit.writer` — :class:`AuditWriter`, the bounded non-blocking batching
  writer with reconnection (what the proxy runs).
* :mod:`~guard.proxy.audit.shared` — :class:`~guard.proxy.audit.shared.SharedStore`, one
  process's connection for lookups: a decision any worker or replica made (by its indexed
  ``request_id``), the refusal budget's window and steps (``budget_steps``).
* :mod:`~guard.proxy.audit.export` — :func:`export_jsonl`.
* :mod:`~guard.proxy.audit.svg`, :mod:`~guard.proxy.audit.page` — ``audit report``: a
  self-contained HTML page of inline SVG plots (:func:`write_report`).
"""

from guard.exceptions import AuditStoreError, AuditStoreUnavailable
from guard.proxy.audit.export import export_jsonl
from guard.proxy.audit.page import write_report
from guard.proxy.audit.schema import (
    COLUMNS,
    DECISIONS,
    FEEDBACK,
    TABLES,
    Column,
    Table,
    decision_row,
)
from guard.proxy.audit.store import AuditStore, is_url, mask_url, open_store, read_rows
from guard.proxy.audit.writer import AuditWriter

__all__ = ["COLUMNS", "DECISIONS", "FEEDBACK", "TABLES", "AuditStore", "AuditStoreError",
           "AuditStoreUnavailable", "AuditWriter", "Column", "Table", "decision_row",
           "export_jsonl", "is_url", "mask_url", "open_store", "read_rows", "write_report"]
