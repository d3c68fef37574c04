"""Print the response cards' figures from the shipped files.

Run ``python benchmarks/data/figures.py smollm2`` (or ``gemma3_270m``) from the repository
root: per part of the seed set (original, growth) over the records whose questions are still
kept, answerable items answered and correct, refusal-required items abstained, mean
completion tokens; correct answers of the growth by style and by answer type; unsettled
grades. Computed from ``responses.jsonl`` and the seed set; nothing is typed in.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from utilityguard_base.jsonl import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "cost_models" / "data" / "seed"


def _rows(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path)


def main(model: str) -> None:
    items = {r["id"]: r for r in _rows(SEED / "items.jsonl")}
    original = {r["id"] for r in _rows(SEED / "questions.jsonl")[:1248]}
    records = _rows(ROOT / "benchmarks" / "data" / model / "responses.jsonl")
    kept = [r for r in records if r["id"] in items]
    print(f"{model}: {len(records)} records, {len(kept)} of kept questions, "
          f"{sum(not r['grading']['settled'] for r in records)} unsettled")
    for part in ("original", "growth"):
        rows = [r for r in kept if (r["id"] in original) == (part == "original")]
        ans = [r for r in rows if items[r["id"]]["answerable"]]
        ref = [r for r in rows if not items[r["id"]]["answerable"]]
        tokens = sum(r.get("completion_tokens") or 0 for r in rows) / max(1, len(rows))
        right = sum(r["correct"] is True for r in ans)
        print(f"{part}: {len(rows)} kept; answerable {len(ans)}: answered "
              f"{sum(r['answered'] for r in ans)}, correct {right}; "
              f"refusal-required {len(ref)}: abstained {sum(not r['answered'] for r in ref)}; "
              f"mean completion tokens {tokens:.1f}")
    growth = [r for r in kept if r["id"] not in original and items[r["id"]]["answerable"]]
    for field in ("source", "answer_type"):
        hits = Counter(items[r["id"]][field] for r in growth if r["correct"] is True)
        every = Counter(items[r["id"]][field] for r in growth)
        print(f"growth correct by {field}:",
              ", ".join(f"{k} {hits[k]}/{n}" for k, n in every.most_common()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "smollm2")
