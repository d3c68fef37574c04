"""``audit export``: every decision of an audit log (SQLite or PostgreSQL) as JSON lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

from guard.proxy.audit.schema import DECISIONS
from guard.proxy.audit.store import read_rows


def export_jsonl(target: str | os.PathLike[str], out: str | os.PathLike[str]) -> int:
    """Write every decision row of the audit log ``target`` (a SQLite path or a
    ``postgresql://`` URL) to ``out`` as JSON lines, oldest first; the count.

    Raises :class:`~guard.proxy.audit.store.AuditStoreError` when
    ``target`` is missing or is not an audit log.
    """
    n = 0
    with Path(out).open("w", encoding="utf-8") as fh:
        for record in read_rows(target, DECISIONS):
            record["stream"] = bool(record["stream"])
            fh.write(json.dumps(record) + "\n")
            n += 1
    return n
