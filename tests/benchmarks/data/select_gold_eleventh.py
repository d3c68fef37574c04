"""Select the eleventh gold sample (issue 35): fresh replies of all three models, drawn after
the eleventh round's rules were committed (f9f9406), to measure those rules on replies no rule
was written on.

* SmolLM2: ``benchmarks/data/smollm2/fresh/responses_3.jsonl``, SmolLM2-135M sampled again at
  temperature 0.7 on the first fresh draw's 1,200 items (other replies than the ninth sample's;
  its card). Every reply the rules credit and :data:`OTHERS` of the others; model name
  ``smollm2-135m-instruct-t0.7-again``.
* Gemma: ``benchmarks/data/gemma3_270m/fresh/responses.jsonl``, Gemma 3 270M sampled at
  temperature 0.7 on 600 random seed items (its card). Every reply the rules credit and
  :data:`OTHERS` of the others; model name ``gemma-3-270m-t0.7``.
* The strong model: ``benchmarks/data/strong/fresh/responses_2.jsonl``, new answerers' replies
  to blind batches 7-9 (its card); all 300; model name ``claude-blind-fresh``.

A reply word for word the same as one an earlier gold sample read for the same item (SmolLM2
and Gemma sampled at 0.7 often give their greedy reply, or the first fresh collection's, again;
a short strong-model reply such as "B" can match an earlier one) is left out: it was read, and
rules were written on it.

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_eleventh.py > gold_eleventh_sample.jsonl``; with
``--strata``: ``gold_eleventh_strata.jsonl``, kept from the readers), as
``select_gold_tenth.py`` does. Every record ``test``; shuffled (seed :data:`SEED`).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_gold_strong import DATA, SEED_ITEMS, _lines, write_sample
from select_gold_tenth import OTHERS, credited_and_others, every_reply

SMOLLM2 = ("smollm2-135m-instruct-t0.7-again", DATA / "smollm2" / "fresh" / "responses_3.jsonl")
GEMMA = ("gemma-3-270m-t0.7", DATA / "gemma3_270m" / "fresh" / "responses.jsonl")
STRONG = ("claude-blind-fresh", DATA / "strong" / "fresh" / "responses_2.jsonl")
SEED = 3511
HERE = Path(__file__).resolve().parent


def read_before() -> frozenset[tuple[str, str]]:
    """``(item id, reply)`` of every record of the earlier gold samples."""
    return frozenset((r["id"], r["response"]) for path in sorted(HERE.glob("gold_*.jsonl"))
                     if not path.name.startswith("gold_eleventh")
                     and not path.name.endswith(("_sample.jsonl", "_strata.jsonl"))
                     for r in _lines(path) if "response" in r)


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    rng = random.Random(SEED)
    read = read_before()
    out = (credited_and_others(*SMOLLM2, items, rng, OTHERS, read)
           + credited_and_others(*GEMMA, items, rng, OTHERS, read)
           + every_reply(*STRONG, items, rng, read))
    rng.shuffle(out)
    return out


if __name__ == "__main__":
    write_sample(select(), strata="--strata" in sys.argv[1:])
