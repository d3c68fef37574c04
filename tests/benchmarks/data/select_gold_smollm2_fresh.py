"""Select the ninth gold sample (issue 35): fresh SmolLM2 replies, to measure the precision of
"correct" on SmolLM2 where no reader has read a reply.

Every greedy SmolLM2 reply the rules credit had been read in an earlier sample, so the fresh
replies are a new collection: ``benchmarks/data/smollm2/fresh/responses.jsonl``, SmolLM2-135M
sampled at temperature 0.7 on a uniform random sample of the seed set (its card). The records
are named ``smollm2-135m-instruct-t0.7`` here (an item's greedy reply may be in an earlier gold
file under the plain model name; this is another reply).

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_smollm2_fresh.py > gold_smollm2_fresh_sample.jsonl``;
with ``--strata``, each record's stratum and the stratum's share of the collection:
``gold_smollm2_fresh_strata.jsonl``, kept from the readers). Two strata by the grade the record
carries in its response file (the rules at the time of selection): every reply the rules credit
("correct"), and :data:`OTHERS` of the others, round-robin over the item sources (the seed
below). Every record ``test``; shuffled; no stratum in the output.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_gold_strong import DATA, SEED_ITEMS, _lines, drawn, write_sample

MODEL = "smollm2-135m-instruct-t0.7"
RESPONSES = DATA / "smollm2" / "fresh" / "responses.jsonl"
OTHERS = 100
SEED = 3509


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    rng = random.Random(SEED)
    strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in _lines(RESPONSES):
        if r["id"] in items:
            strata["correct" if r["answered"] and r["correct"] else "other"].append(
                {**r, "model": MODEL})
    quota = {"correct": len(strata["correct"]), "other": OTHERS}
    return drawn(strata, quota, items, rng)


def main(argv: list[str]) -> None:
    write_sample(select(), strata="--strata" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
