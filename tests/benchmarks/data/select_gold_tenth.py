"""Select the tenth gold sample (issue 35): fresh replies of SmolLM2 and of the strong model,
drawn after the tenth round's rules were committed (78f3fc9), to measure those rules on
replies no rule was written on.

* SmolLM2: ``benchmarks/data/smollm2/fresh/responses_2.jsonl``, SmolLM2-135M sampled at
  temperature 0.7 on the next 1,200 items of the fresh draw (no item of the ninth sample's
  collection; its card). Every reply the rules credit ("correct") and :data:`OTHERS` of the
  others, round-robin over the item sources; model name ``smollm2-135m-instruct-t0.7``.
* The strong model: ``benchmarks/data/strong/fresh/responses.jsonl``, new answerers' replies to
  blind batches 4-6 (its card); all 300 (one stratum, share 1); model name
  ``claude-blind-fresh``.

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_tenth.py > gold_tenth_sample.jsonl``; with
``--strata``, each record's stratum and the stratum's share of its model's collection:
``gold_tenth_strata.jsonl``, kept from the readers). The strata come from the grades the
records carry in their response files (the rules of 78f3fc9). Every record ``test``; shuffled
(seed :data:`SEED`); no stratum in the output.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_gold_strong import DATA, SEED_ITEMS, _lines, drawn, write_sample

SMOLLM2 = ("smollm2-135m-instruct-t0.7", DATA / "smollm2" / "fresh" / "responses_2.jsonl")
STRONG = ("claude-blind-fresh", DATA / "strong" / "fresh" / "responses.jsonl")
OTHERS = 100
SEED = 3510


def credited_and_others(model: str, path: Path, items: dict[str, dict[str, Any]],
                        rng: random.Random, others: int = OTHERS,
                        read: frozenset[tuple[str, str]] = frozenset()) -> list[dict[str, Any]]:
    """Every reply of ``path`` the rules credit and ``others`` of the rest (round-robin over the
    item sources), named ``model``, with their strata; a reply in ``read`` (``(id, reply)``
    pairs an earlier sample read) is left out of both."""
    strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in (r for r in _lines(path) if (r["id"], r["response"]) not in read):
        strata["correct" if r["answered"] and r["correct"] else "other"].append(
            {**r, "model": model})
    return drawn(strata, {"correct": len(strata["correct"]), "other": others}, items, rng)


def every_reply(model: str, path: Path, items: dict[str, dict[str, Any]], rng: random.Random,
                read: frozenset[tuple[str, str]] = frozenset()) -> list[dict[str, Any]]:
    """Every reply of ``path`` not in ``read``, named ``model``, as one stratum."""
    every = {"all": [{**r, "model": model} for r in _lines(path)
                     if (r["id"], r["response"]) not in read]}
    return drawn(every, {"all": len(every["all"])}, items, rng)


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    rng = random.Random(SEED)
    out = credited_and_others(*SMOLLM2, items, rng) + every_reply(*STRONG, items, rng)
    rng.shuffle(out)
    return out


def main(argv: list[str]) -> None:
    write_sample(select(), strata="--strata" in argv)


if __name__ == "__main__":
    main(sys.argv[1:])
