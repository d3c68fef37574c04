"""Draw the seed questions a writer rephrases as instructions (``raw/written/questions_H.jsonl``).

``python cost_models/data/asking/draw_questions.py H 150 > raw/written/questions_H.jsonl``:
``n`` seed questions that are not code (``answer_type != "code"``) and in no earlier draw
(the ``questions_*.jsonl`` of an earlier letter), drawn at random with the seed
``20261202`` + the letter's code. The script selects; it writes no rephrasing and no label.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED_ITEMS = HERE.parent / "seed" / "items.jsonl"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: draw_questions.py LETTER N", file=sys.stderr)
        return 2
    letter, n = argv[0], int(argv[1])
    earlier = {json.loads(x)["seed_id"] for p in sorted((HERE / "raw" / "written").glob(
        "questions_*.jsonl")) if p.stem.removeprefix("questions_") < letter
        for x in p.read_text(encoding="utf-8").splitlines() if x.strip()}
    items = [json.loads(x) for x in SEED_ITEMS.read_text(encoding="utf-8").splitlines()
             if x.strip()]
    pool = sorted((i for i in items if i["answer_type"] != "code" and i["id"] not in earlier),
                  key=lambda i: i["id"])
    rng = random.Random(20261202 + ord(letter))
    for k, it in enumerate(rng.sample(pool, n), start=1):
        sys.stdout.write(json.dumps({"qid": f"Q{letter}{k:03d}", "seed_id": it["id"],
                                     "question": it["question"]}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
