"""Assemble the strong model's fresh replies (batches answered again) into graded records.

``python benchmarks/data/strong/fresh/assemble.py > benchmarks/data/strong/fresh/responses.jsonl``
(batches 4-6, the tenth gold sample) and ``... assemble.py 2 > .../responses_2.jsonl`` (batches
7-9, the eleventh): reads ``answers/answers_NN_partK.txt`` (as the answerers wrote them), the
blind keys of ``../keys/batch_NN.jsonl`` and the seed items, and writes one graded response
record per reply (:func:`benchmarks.blind.assemble`; model name ``claude-blind-fresh``). See
``README.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.blind import assemble, read_answer_files
from cost_models.datasets import load_seed
from utilityguard_base.jsonl import read_jsonl

HERE = Path(__file__).resolve().parent
#: the batches of each part
PARTS = {"1": ("04", "05", "06"), "2": ("07", "08", "09")}
MODEL = "claude-blind-fresh"


def main(argv: list[str]) -> None:
    part = argv[0] if argv else "1"
    if part not in PARTS:
        sys.exit("usage: assemble.py [1|2]")
    items = {i.id: i.model_dump() for i in load_seed()}
    for batch in PARTS[part]:
        key_file = HERE.parent / "keys" / f"batch_{batch}.jsonl"
        keys = {k["id"]: k["item"] for k in read_jsonl(key_file)}
        replies = read_answer_files(sorted((HERE / "answers").glob(f"answers_{batch}_part*.txt")))
        for record in assemble(items, keys, replies, model=MODEL):
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
