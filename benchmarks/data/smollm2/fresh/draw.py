"""Draw the seed items of SmolLM2's fresh sampled collections, in a fixed random order.

``python benchmarks/data/smollm2/fresh/draw.py > benchmarks/data/smollm2/fresh/items.jsonl``:
every shipped seed item (``cost_models.datasets.load_seed``), shuffled with seed 2026_12_03, the
first :data:`N` written as a dataset ``utilityguard collect --data`` reads. Any prefix of the
file is a uniform random sample of the seed set (see the card, ``README.md``).

``python benchmarks/data/smollm2/fresh/draw.py 2 > benchmarks/data/smollm2/fresh/items_2.jsonl``:
the next :data:`N` items of the same order (the second collection, no item of the first), which
is a uniform random sample too.
"""

from __future__ import annotations

import json
import random
import sys

from cost_models.datasets import load_seed

#: items drawn per part
N = 1200
SEED = 2026_12_03


def main(argv: list[str]) -> None:
    part = int(argv[0]) if argv else 1
    if part not in (1, 2):
        sys.exit("usage: draw.py [1|2]")
    items = load_seed()
    order = random.Random(SEED).sample(range(len(items)), len(items))[(part - 1) * N : part * N]
    for i in order:
        sys.stdout.write(json.dumps(items[i].model_dump(), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
