"""Select the 240 published prompts labelled for the corpus (``raw/awesome_sample.jsonl``).

Input: ``prompts.csv`` of https://github.com/f/awesome-chatgpt-prompts (CC0 1.0) at commit
24641836 (2026-03-20). The TEXT prompts of 40 to 1,500 characters, 240 drawn at random (seed
20261202), numbered P001-P240 in the drawn order; each is cut into sentences with the runtime's
own splitter (``guard.segments.sentences``) for the readers (``raw/labels/batch_*.txt``)::

    python cost_models/data/asking/select_awesome.py prompts.csv
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261202


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    csv.field_size_limit(10**9)
    with open(argv[0], encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["type"] == "TEXT"]
    keep = [r for r in rows if 40 <= len(r["prompt"]) <= 1500]
    sample = random.Random(SEED).sample(keep, 240)
    with (HERE / "raw" / "awesome_sample.jsonl").open("w", encoding="utf-8") as out:
        for k, r in enumerate(sample, 1):
            out.write(json.dumps({"pid": f"P{k:03d}", "act": r["act"],
                                  "contributor": r["contributor"], "prompt": r["prompt"]},
                                 ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
