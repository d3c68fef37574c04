"""Select the items of the second exposure top-up (issue 22): balance exposure over the scale.

After the first top-up every kept item was in at least 5 tuples, but the top cost decile was
in 8.9 tuples on average and the other nine in 5.6-6.7, because the linking tuples of the
growth were built among frequent winners (and merged duplicates add their copies' tuples).
This script SELECTS (it does not judge): with a fixed seed, 800 of the kept items that are in
exactly 5 tuples and lie in cost deciles 1-9 (not the top decile), drawn uniformly; each is
then put in two more tuples with anchors (``annotate tuples --ratio 0.5 --min-per-item 2``).

``python cost_models/data/seed/select_balance.py --rev 2120022 > balance_items.jsonl`` (from
the repository root; reads ``items.jsonl`` and the tuples through ``figures.appearances``, as
they were at git revision REV: the fit before this top-up, which the refit after it replaced).
``--anchors`` prints the anchor pool instead: the kept items in 5 or more tuples, less the
selected ones (``annotate tuples --anchors``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import appearances, seed_rows

SEED = 20261225
N_ITEMS = 800


def select(rev: str | None = None) -> list[dict[str, object]]:
    items = seed_rows("items.jsonl", rev)
    seen = appearances(rev)
    costs = np.array([i["cost"] for i in items])
    top_cut = float(np.quantile(costs, 0.9))
    pool = sorted((i for i in items if seen[i["id"]] == 5 and i["cost"] < top_cut),
                  key=lambda i: i["id"])
    return random.Random(SEED).sample(pool, N_ITEMS)


def anchor_pool(rev: str | None = None) -> list[dict[str, object]]:
    """Kept items in 5 or more tuples that :func:`select` did not pick, in file order."""
    picked = {i["id"] for i in select(rev)}
    seen = appearances(rev)
    return [i for i in seed_rows("items.jsonl", rev)
            if seen[i["id"]] >= 5 and i["id"] not in picked]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", help="read the files as they were at this git revision")
    ap.add_argument("--anchors", action="store_true", help="print the anchor pool instead")
    args = ap.parse_args()
    for item in (anchor_pool if args.anchors else select)(args.rev):
        sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
