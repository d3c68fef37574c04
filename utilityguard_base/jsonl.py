"""JSONL, one JSON object a line: the one reader and writer of the distribution.

Every dataset, response record, judgment, tuple and prediction file is JSONL. Reading skips
blank lines and names the file and line of any problem (invalid JSON, a line that is not an
object) in a :class:`~utilityguard_base.exceptions.DatasetError`, or in the error class the
caller gives (``collect`` raises its own :class:`~utilityguard_base.exceptions.CollectError`).
Writing keeps non-ASCII text as it is (``ensure_ascii=False``), one object and a newline a row;
a whole file is written to a temporary name beside it and moved into place, so a reader never
sees half of it. It lives in :mod:`utilityguard_base`, below every package that reads or
writes such files (``policies`` does no I/O).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
>>> write_jsonl(path, [{"id": "a", "q": "Straße?"}, {"id": "b"}])
2
>>> path.read_text(encoding="utf-8")
'{"id": "a", "q": "Straße?"}\\n{"id": "b"}\\n'
>>> [r["id"] for r in read_jsonl(path)]
['a', 'b']
>>> parse_jsonl('{"id": 1}\\n\\n[2]', "x.jsonl")
Traceback (most recent call last):
...
utilityguard_base.exceptions.DatasetError: x.jsonl, line 3: expected a JSON object
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from utilityguard_base.exceptions import DatasetError, UtilityGuardError

Row = dict[str, Any]


def jsonl_line(row: Mapping[str, Any]) -> str:
    """``row`` as one JSONL line, newline included.

    >>> jsonl_line({"a": "é"})
    '{"a": "é"}\\n'
    """
    return json.dumps(row, ensure_ascii=False) + "\n"


def numbered_jsonl(text: str, where: str | os.PathLike[str],
                   error: type[UtilityGuardError] = DatasetError) -> list[tuple[int, Row]]:
    """``(line number, object)`` of each non-blank line of JSONL ``text``, for callers that
    check the objects further and name the line; ``where`` names the text in errors."""
    rows: list[tuple[int, Row]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where}, line {n}: invalid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise error(f"{where}, line {n}: expected a JSON object")
        rows.append((n, obj))
    return rows


def parse_jsonl(text: str, where: str | os.PathLike[str],
                error: type[UtilityGuardError] = DatasetError) -> list[Row]:
    """The objects of JSONL ``text`` (blank lines skipped); ``where`` names it in errors."""
    return [row for _, row in numbered_jsonl(text, where, error)]


def read_text(path: str | os.PathLike[str],
              error: type[UtilityGuardError] = DatasetError) -> str:
    """The UTF-8 text of ``path``; a file that cannot be read is an ``error``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read ({exc})") from None


def read_jsonl(path: str | os.PathLike[str],
               error: type[UtilityGuardError] = DatasetError) -> list[Row]:
    """The objects of the JSONL file ``path`` (UTF-8; blank lines skipped)."""
    return parse_jsonl(read_text(path, error), path, error)


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> int:
    """Write ``rows`` to ``path`` as JSONL, replacing it whole (through a temporary file);
    returns the number of rows."""
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(jsonl_line(row))
            n += 1
    tmp.replace(target)
    return n


def append_jsonl(f: IO[str], row: Mapping[str, Any], *, durable: bool = False) -> None:
    """Append ``row`` to the open text file ``f``; ``durable``: flushed and fsynced, so a
    killed run keeps every row it reported written."""
    f.write(jsonl_line(row))
    if durable:
        f.flush()
        os.fsync(f.fileno())


__all__ = ["append_jsonl", "jsonl_line", "numbered_jsonl", "parse_jsonl", "read_jsonl", "read_text",
           "write_jsonl"]
