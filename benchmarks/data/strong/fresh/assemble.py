"""Assemble the strong model's fresh replies (a second answering of batches 4-6) into records.

``python benchmarks/data/strong/fresh/assemble.py > benchmarks/data/strong/fresh/responses.jsonl``:
reads ``answers/answers_NN_partK.txt`` (as the answerers wrote them), the blind keys of
``../keys/batch_NN.jsonl`` and the seed items, and writes one graded response record per reply
(:func:`benchmarks.blind.assemble`; model name ``claude-blind-fresh``). See ``README.md``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks.blind import assemble, read_answer_files
from cost_models.datasets import load_seed
from utilityguard_base.jsonl import read_jsonl

HERE = Path(__file__).resolve().parent
BATCHES = ("04", "05", "06")
MODEL = "claude-blind-fresh"


def main() -> None:
    items = {i.id: i.model_dump() for i in load_seed()}
    for batch in BATCHES:
        key_file = HERE.parent / "keys" / f"batch_{batch}.jsonl"
        keys = {k["id"]: k["item"] for k in read_jsonl(key_file)}
        replies = read_answer_files(sorted((HERE / "answers").glob(f"answers_{batch}_part*.txt")))
        for record in assemble(items, keys, replies, model=MODEL):
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
