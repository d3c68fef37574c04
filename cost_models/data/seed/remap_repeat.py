"""Map a blind repeat judge's numbers from the order it was shown to the tuple's numbering.

A blind repeat shows each tuple's items re-shuffled, so the judge's ``BEST: n`` / ``WORST: n``
count in the SHOWN order; ``annotate judge --replies`` reads numbers in the tuple's recorded
order. This script only renumbers (it judges nothing): for each reply it finds the item the
judge named in the shown order and writes that item's number in the tuple, keeping the
judge's words. The verbatim reply and the shown order stay in the row (``reply_shown``,
``shown_order``), so the mapping can be checked from the shipped file.

``python cost_models/data/seed/remap_repeat.py REPLIES MAP TUPLES > mapped.jsonl``: REPLIES
is the judge's JSONL (``tuple_id, judge, reply``), MAP one row per tuple (``tuple_id,
shown_order, tuple_items``), TUPLES the tuples JSONL(s) holding those tuples (comma-separated).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cost_models.annotation.judges import parse_reply
from utilityguard_base.jsonl import read_jsonl

_BEST = re.compile(r"^(\s*BEST:\s*)\d+", re.MULTILINE)
_WORST = re.compile(r"^(\s*WORST:\s*)\d+", re.MULTILINE)


def remap(reply: str, shown: Sequence[str], items: Sequence[str]) -> str:
    """``reply`` with its BEST/WORST numbers moved from the ``shown`` order to ``items``'s.

    >>> remap("BEST: 1\\nWORST: 2\\nWHY: x", ["b", "c", "a", "d"], ["a", "b", "c", "d"])
    'BEST: 2\\nWORST: 3\\nWHY: x'
    """
    if sorted(shown) != sorted(items):
        raise ValueError(f"shown order {list(shown)} is not a permutation of {list(items)}")
    best, worst = parse_reply(reply, len(shown))
    nb, nw = items.index(shown[best]) + 1, items.index(shown[worst]) + 1
    out = _BEST.sub(lambda m: f"{m.group(1)}{nb}", reply, count=1)
    return _WORST.sub(lambda m: f"{m.group(1)}{nw}", out, count=1)


def _rows(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path)


def main(argv: Sequence[str]) -> int:
    replies, order_map, tuple_files = Path(argv[0]), Path(argv[1]), argv[2].split(",")
    tuples = {t["tuple_id"]: t["items"] for f in tuple_files for t in _rows(Path(f))}
    orders = {r["tuple_id"]: r for r in _rows(order_map)}
    for row in _rows(replies):
        o = orders[row["tuple_id"]]
        items = tuples[row["tuple_id"]]
        if o["tuple_items"] != items:
            raise ValueError(f"{row['tuple_id']}: the map's tuple order is not the tuple's")
        out = {"tuple_id": row["tuple_id"], "judge": row["judge"],
               "reply": remap(row["reply"], o["shown_order"], items),
               "reply_shown": row["reply"], "shown_order": o["shown_order"]}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
