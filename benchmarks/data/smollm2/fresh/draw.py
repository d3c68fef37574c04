"""Draw the seed items of SmolLM2's fresh sampled collection, in a fixed random order.

``python benchmarks/data/smollm2/fresh/draw.py > benchmarks/data/smollm2/fresh/items.jsonl``:
every shipped seed item (``cost_models.datasets.load_seed``), shuffled with seed 2026_12_03, the
first :data:`N` written as a dataset ``utilityguard collect --data`` reads. Any prefix of the
file is a uniform random sample of the seed set (see the card, ``README.md``).
"""

from __future__ import annotations

import json
import random
import sys

from cost_models.datasets import load_seed

#: items drawn
N = 1200
SEED = 2026_12_03


def main() -> None:
    items = load_seed()
    order = random.Random(SEED).sample(range(len(items)), len(items))[:N]
    for i in order:
        sys.stdout.write(json.dumps(items[i].model_dump(), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
