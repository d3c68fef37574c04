"""Resuming a collection run: the records an output file already holds, the file made ready
to be appended to (:func:`prepare_resume`; ``collect`` and its P(True) pass,
:mod:`benchmarks.collect`, :mod:`benchmarks.ptrue_collect`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from guard.exceptions import CollectError

log = logging.getLogger(__name__)


def prepare_resume(out: Path) -> set[str]:
    """Make ``out`` (a JSONL file a killed run may have left) ready to be appended to, and
    return the ids of the records it holds: a torn last line (a killed write) is moved to
    ``out.torn`` and cut from ``out``, a last record without its newline gets one. A
    resumed run asks only for the other items."""
    if not out.exists():
        return set()
    raw = out.read_bytes()
    lines = raw.split(b"\n")
    ids: set[str] = set()
    good_end = 0
    for k, line in enumerate(lines):
        if not line.strip():
            good_end += len(line) + (1 if k < len(lines) - 1 else 0)
            continue
        try:
            ids.add(str(json.loads(line)["id"]))
        except (json.JSONDecodeError, KeyError, TypeError):
            if k == len(lines) - 1:  # only the last line can be torn by a kill
                torn = out.with_suffix(out.suffix + ".torn")
                torn.write_bytes(line)
                with out.open("r+b") as f:
                    f.truncate(good_end)
                log.warning("moved a torn last line of %s to %s", out, torn)
                break
            raise CollectError(f"{out}, line {k + 1}: not a response record") from None
        good_end += len(line) + 1
    else:
        if raw and not raw.endswith(b"\n"):  # a kill between a record and its newline:
            with out.open("ab") as f:        # end the line, or the next record joins it
                f.write(b"\n")
    return ids
