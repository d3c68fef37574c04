"""Select the seventh gold sample (issue 35): fresh replies of the strong model, to test rules
changed on the sixth sample; with ``--eighth``, the eighth sample (seed 3508, none of the
seventh's records either), to test rules changed on the seventh.

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_strong3.py > gold_strong3_sample.jsonl``;
``--eighth > gold_strong4_sample.jsonl``; with ``--strata``, each record's stratum and the
stratum's share of the model's unread replies: ``gold_strong3_strata.jsonl``,
``gold_strong4_strata.jsonl``, kept from the readers). ``claude-blind`` records in no earlier
gold file, in the sixth sample's two strata by the grade the record carries in its response
file (the rules at the time of selection): 50 the rules credit and 100 others (where the
sixth sample's misses were: refusal-required replies read one way by the rules and the
other by the readers). Round-robin over the item sources within a stratum (the seed below);
every record ``test``; shuffled; no stratum in the output.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the fifth sample's helpers (a sibling script)
from select_gold_strong import (
    FIRST_MODEL,
    HERE,
    SEED_ITEMS,
    _lines,
    drawn,
    unread,
    write_sample,
)

EARLIER = tuple(HERE / f"{name}.jsonl"
                for name in ("gold_grades", "gold_heldout", "gold_fresh", "gold_fresh2",
                             "gold_strong", "gold_strong2"))
QUOTA = {"correct": 50, "other": 100}
SEED = 3507


def select(eighth: bool = False) -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    earlier = (*EARLIER, HERE / "gold_strong3.jsonl") if eighth else EARLIER
    seen = {(r["id"], r.get("model", FIRST_MODEL)) for path in earlier for r in _lines(path)}
    rng = random.Random(SEED + 1 if eighth else SEED)
    strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r, _ in unread("strong", items, seen):
        strata["correct" if r["answered"] and r["correct"] else "other"].append(r)
    return drawn(strata, QUOTA, items, rng)


def main(argv: list[str]) -> None:
    write_sample(select(eighth="--eighth" in argv), strata="--strata" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
