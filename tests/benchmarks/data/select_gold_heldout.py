"""Select the second gold sample: SmolLM2 growth replies and Gemma replies, split in halves.

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_heldout.py > sample.jsonl``). It draws, with a
fixed seed, 300 SmolLM2-135M records of the growth's eight styles (37-38 per style) and 300
Gemma 3 270M records (100 of the original styles, 25 per growth style), half answerable and
half refusal-required in every stratum, none already in ``gold_grades.jsonl``. Each stratum's
records alternate between the ``tune`` half (where the grader's rules may be changed) and the
``test`` half (where agreement is reported). The split was committed before any rule change.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SEED_DIR = ROOT / "cost_models" / "data" / "seed"
DATA = ROOT / "benchmarks" / "data"
GOLD = Path(__file__).resolve().parent / "gold_grades.jsonl"
STYLES = ("agent_tool", "context_paragraph", "forum_post", "non_native", "patient_portal",
          "units_code", "voice_sms", "workplace_email")
# (model file, style) -> records; "original" is every style of the original 1,216
QUOTA = {**{("smollm2", s): 38 if i < 4 else 37 for i, s in enumerate(STYLES)},
         ("gemma3_270m", "original"): 100, **{("gemma3_270m", s): 25 for s in STYLES}}
SEED = 22


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def draw(quota: dict[tuple[str, str], int], seen: set[tuple[str, str]], seed: int,
         split: Callable[[int], str]) -> list[dict[str, Any]]:
    """Per (model file, style) stratum, half answerable and half refusal-required records
    drawn with ``random.Random(seed)``, none whose ``(id, model)`` is in ``seen``; the k-th
    record of a stratum (after shuffling) goes to ``split(k)``. Shared by the selection
    scripts of the second and third samples."""
    items = {r["id"]: r for r in _lines(SEED_DIR / "items.jsonl")}
    growth = {r["id"] for r in _lines(SEED_DIR / "questions.jsonl")[1248:]}
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for (model, style), n_records in quota.items():
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
            n = n_records // 2 + (n_records % 2 if answerable else 0)
            picked += rng.sample(sorted(pools[answerable], key=lambda r: r["id"]), n)
        rng.shuffle(picked)
        for k, r in enumerate(picked):
            it = items[r["id"]]
            out.append({"id": r["id"], "model": r.get("model"), "style": style,
                        "split": split(k),
                        "answer_type": it["answer_type"], "answerable": it["answerable"],
                        "domain": it["domain"], "question": it["question"],
                        "reference": it["reference"], "response": r["response"]})
    return out


def write_test_sample(quota: dict[tuple[str, str], int], earlier: tuple[Path, ...],
                      seed: int) -> None:
    """Write to stdout, as JSON lines, a sample drawn by :func:`draw` with every record in the
    ``test`` split and none whose ``(id, model)`` is in the gold files ``earlier``. Shared by
    the selection scripts of the third and fourth samples."""
    seen = {(r["id"], r.get("model")) for path in earlier for r in _lines(path)}
    for rec in draw(quota, seen, seed, lambda k: "test"):
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


def select() -> list[dict[str, Any]]:
    # the first sample holds SmolLM2 records only: its ids are seen for every model
    ids = {r["id"] for r in _lines(GOLD)}
    seen = {(i, m) for i in ids for m in ("smollm2-135m-instruct", "gemma-3-270m")}
    return draw(QUOTA, seen, SEED, lambda k: "tune" if k % 2 == 0 else "test")


def main() -> None:
    for rec in select():
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
