"""Select the gold sample's records (stratified by answer type, answerability and domain).

This script only SELECTS records and writes them, without any grade, for a person to read
(``python tests/benchmarks/data/select_gold_sample.py > sample.jsonl``). The grades in
``gold_grades.jsonl`` were written by reading each record, never computed.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RESPONSES = ROOT / "benchmarks" / "data" / "smollm2" / "responses.jsonl"
ITEMS = ROOT / "cost_models" / "data" / "seed" / "items.jsonl"
# records per (answer type, answerable): 300 in all
QUOTA = {("choice", True): 70, ("text", True): 70, ("number", True): 50, ("code", True): 20,
         ("text", False): 40, ("number", False): 40, ("choice", False): 5, ("code", False): 5}
SEED = 13


def main() -> None:
    items = {json.loads(x)["id"]: json.loads(x) for x in ITEMS.read_text().splitlines()}
    recs = [json.loads(x) for x in RESPONSES.read_text().splitlines() if x.strip()]
    strata: dict[tuple[str, bool], dict[str, list[dict[str, object]]]] = defaultdict(
        lambda: defaultdict(list))
    for r in recs:
        it = items[r["id"]]
        strata[(it["answer_type"], it["answerable"])][it["domain"]].append(r)
    rng = random.Random(SEED)
    chosen = []
    for key, quota in QUOTA.items():
        by_domain = strata[key]
        for pool in by_domain.values():
            rng.shuffle(pool)
        domains = sorted(by_domain)
        k = 0
        while quota and any(by_domain[d] for d in domains):  # round-robin over domains
            d = domains[k % len(domains)]
            if by_domain[d]:
                chosen.append(by_domain[d].pop())
                quota -= 1
            k += 1
    for r in chosen:
        it = items[r["id"]]
        sys.stdout.write(json.dumps({"id": r["id"], "model": r.get("model"),
                                     "answer_type": it["answer_type"],
                                     "answerable": it["answerable"], "domain": it["domain"],
                                     "question": it["question"], "reference": it["reference"],
                                     "response": r["response"]}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
