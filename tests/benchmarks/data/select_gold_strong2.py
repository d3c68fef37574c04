"""Select the sixth gold sample (issue 35): a fresh test of the grader's "correct", read by
readers who write no rule.

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_strong2.py > gold_strong2_sample.jsonl``; with
``--strata`` it writes instead each record's stratum and the stratum's share of the model's
replies, ``gold_strong2_strata.jsonl``, kept from the readers). Per model, records none of
which is in an earlier gold file (keyed by ``(id, model)``), in two strata by the grade the
record carries in its response file (the rules at the time of selection, 2026-12-02): the
replies the rules credit ("correct") and all the others. Credited replies are over-sampled so
that the precision of "correct" is measured on many; the record agreement over the model's
replies is the strata's agreements weighted by their shares (``--strata``).

* ``claude-blind``: 70 credited, 50 others; SmolLM2-135M: 14 and 50; Gemma 3 270M: 58 and 50.
  The tiny models' credited replies not read before are all taken: 14 of SmolLM2's 200
  credited replies and 58 of Gemma's 210 are in no earlier gold file.

Within a stratum the records are dealt round-robin over the item sources (each source's pool
shuffled with the fixed seed). Every record is ``test``: none is read to change a rule. The
output is shuffled per model and carries no stratum.
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
    _round_robin,
    sample_record,
    unread,
    write_sample,
)

EARLIER = tuple(HERE / f"{name}.jsonl"
                for name in ("gold_grades", "gold_heldout", "gold_fresh", "gold_fresh2",
                             "gold_strong"))
#: stratum: the rules credit the reply ("correct") or not ("other")
QUOTA: dict[str, dict[str, int]] = {
    "strong": {"correct": 70, "other": 50},
    "smollm2": {"correct": 14, "other": 50},
    "gemma3_270m": {"correct": 58, "other": 50},
}
SEED = 3506


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    seen = {(r["id"], r.get("model", FIRST_MODEL)) for path in EARLIER for r in _lines(path)}
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []
    for model_dir, quota in QUOTA.items():
        strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r, _ in unread(model_dir, items, seen):
            strata["correct" if r["answered"] and r["correct"] else "other"].append(r)
        total = sum(len(v) for v in strata.values())
        chosen: list[dict[str, Any]] = []
        for stratum, n in quota.items():
            for r in _round_robin(strata[stratum], items, n, rng):
                chosen.append({**sample_record(r, items[r["id"]], "test"), "_stratum": stratum,
                               "_share": len(strata[stratum]) / total})
        rng.shuffle(chosen)
        out += chosen
    return out


def main(argv: list[str]) -> None:
    write_sample(select(), strata="--strata" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
