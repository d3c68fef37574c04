"""Select the third gold sample (issue 22): a fresh test set no rule was tuned on.

This script only SELECTS records and writes them, without any grade, for readers
(``python tests/benchmarks/data/select_gold_fresh.py > fresh_sample.jsonl``). The second
sample's test half was seen while the rules were changed, so it cannot measure them any more;
this one is read by readers who did not grade the earlier samples and is scored only after the
last rule change. With a fixed seed it draws, per model, records of every style — SmolLM2-135M:
34 per growth style and 24 of the original styles; Gemma 3 270M: 28 per growth style and 28 of
the original styles — half answerable and half refusal-required in every stratum, none already
in ``gold_grades.jsonl`` or ``gold_heldout.jsonl``. Every record is ``split: "test"``.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
SEED_DIR = ROOT / "cost_models" / "data" / "seed"
DATA = ROOT / "benchmarks" / "data"
EARLIER = (HERE / "gold_grades.jsonl", HERE / "gold_heldout.jsonl")
STYLES = ("agent_tool", "context_paragraph", "forum_post", "non_native", "patient_portal",
          "units_code", "voice_sms", "workplace_email")
# (model file, style) -> records; "original" is every style of the original 1,216
QUOTA = {**{("smollm2", s): 34 for s in STYLES}, ("smollm2", "original"): 24,
         **{("gemma3_270m", s): 28 for s in STYLES}, ("gemma3_270m", "original"): 28}
SEED = 2203


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_DIR / "items.jsonl")}
    growth = {r["id"] for r in _lines(SEED_DIR / "questions.jsonl")[1248:]}
    seen = {(r["id"], r.get("model")) for path in EARLIER for r in _lines(path)}
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []
    for (model, style), quota in QUOTA.items():
        pools: dict[bool, list[dict[str, Any]]] = defaultdict(list)
        for r in _lines(DATA / model / "responses.jsonl"):
            it = items.get(r["id"])
            if it is None or (r["id"], r.get("model")) in seen:
                continue
            s = it["source"] if r["id"] in growth else "original"
            if s == style:
                pools[bool(it["answerable"])].append(r)
        picked: list[dict[str, Any]] = []
        for answerable in (True, False):
            n = quota // 2 + (quota % 2 if answerable else 0)
            picked += rng.sample(sorted(pools[answerable], key=lambda r: r["id"]), n)
        rng.shuffle(picked)
        for r in picked:
            it = items[r["id"]]
            out.append({"id": r["id"], "model": r.get("model"), "style": style, "split": "test",
                        "answer_type": it["answer_type"], "answerable": it["answerable"],
                        "domain": it["domain"], "question": it["question"],
                        "reference": it["reference"], "response": r["response"]})
    return out


def main() -> None:
    for rec in select():
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
