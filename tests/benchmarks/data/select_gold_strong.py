"""Select the fifth gold sample (issue 35): the strong model and the two tiny models, split in
halves, drawn to measure the precision of "correct".

This script only SELECTS records and writes them, without any grade, for a reader
(``python tests/benchmarks/data/select_gold_strong.py > gold_strong_sample.jsonl``). The
earlier samples measured record agreement, which most replies (easy wrong answers of the tiny
models) make high whatever the grader credits; here the strata are the grade each record
carries in its response file (the rules before issue 35's changes), so that many records are
ones the rules credit — precision on "correct" is what is measured — and the rest cover
wrong answers, answers to refusal-required questions and abstentions. Per model, 240 records
none of which is in an earlier gold file (keyed by ``(id, model)``):

* ``claude-blind`` (the strong model): 110 answerable graded correct, 50 answerable graded
  wrong, 50 refusal-required graded an answer, 30 refusal-required graded an abstention;
* SmolLM2-135M: 100 correct, 50 wrong, 10 answerable abstentions, 55 refusal-required answers,
  25 refusal-required abstentions;
* Gemma 3 270M: 110 correct, 45 wrong, 10 answerable abstentions, 50 refusal-required
  answers, 25 refusal-required abstentions.

Within a stratum the records are dealt round-robin over the item sources (each source's pool
shuffled with the fixed seed), so every source and style is covered; the k-th record of a
stratum goes to ``tune`` when k is even, else ``test``. The output is shuffled per model and
carries no stratum, so a reader cannot tell which grade a record had.
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
SEED_ITEMS = ROOT / "cost_models" / "data" / "seed" / "items.jsonl"
DATA = ROOT / "benchmarks" / "data"
EARLIER = tuple(HERE / f"{name}.jsonl"
                for name in ("gold_grades", "gold_heldout", "gold_fresh", "gold_fresh2"))
STYLES = ("agent_tool", "context_paragraph", "forum_post", "non_native", "patient_portal",
          "units_code", "voice_sms", "workplace_email")
# the first gold sample holds SmolLM2 records without a model field
FIRST_MODEL = "smollm2-135m-instruct"
# stratum: (answerable, answered, correct) as the response file grades it
Stratum = tuple[bool, bool, bool | None]
CORRECT: Stratum = (True, True, True)
WRONG: Stratum = (True, True, False)
A_ABSTAIN: Stratum = (True, False, None)
R_ANSWER: Stratum = (False, True, False)
R_ABSTAIN: Stratum = (False, False, None)
QUOTA: dict[str, dict[Stratum, int]] = {
    "strong": {CORRECT: 110, WRONG: 50, R_ANSWER: 50, R_ABSTAIN: 30},
    "smollm2": {CORRECT: 100, WRONG: 50, A_ABSTAIN: 10, R_ANSWER: 55, R_ABSTAIN: 25},
    "gemma3_270m": {CORRECT: 110, WRONG: 45, A_ABSTAIN: 10, R_ANSWER: 50, R_ABSTAIN: 25},
}
SEED = 3505


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _round_robin(pool: list[dict[str, Any]], items: dict[str, dict[str, Any]], n: int,
                 rng: random.Random) -> list[dict[str, Any]]:
    """``n`` records of ``pool`` dealt round-robin over their items' sources (sources in a
    shuffled order, each source's records shuffled)."""
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(pool, key=lambda r: r["id"]):
        by_source[items[r["id"]]["source"]].append(r)
    sources = sorted(by_source)
    rng.shuffle(sources)
    for s in sources:
        rng.shuffle(by_source[s])
    picked: list[dict[str, Any]] = []
    while len(picked) < n:
        progressed = False
        for s in sources:
            if by_source[s] and len(picked) < n:
                picked.append(by_source[s].pop())
                progressed = True
        if not progressed:
            raise ValueError(f"a stratum has {len(picked)} records, {n} wanted")
    return picked


def unread(model_dir: str, items: dict[str, dict[str, Any]], seen: set[tuple[str, str]]
           ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The response records of ``model_dir`` (each with its seed item) in no earlier sample."""
    out = []
    for r in _lines(DATA / model_dir / "responses.jsonl"):
        it = items.get(r["id"])
        if it is not None and (r["id"], r["model"]) not in seen:
            out.append((r, it))
    return out


def sample_record(r: dict[str, Any], it: dict[str, Any], split: str) -> dict[str, Any]:
    """A selected response record as a reader sees it: the item and the reply, no grade."""
    source = it["source"]
    return {"id": r["id"], "model": r["model"], "source": source,
            "style": source if source in STYLES else "original", "split": split,
            "answer_type": it["answer_type"], "answerable": it["answerable"],
            "domain": it["domain"], "question": it["question"], "reference": it["reference"],
            "response": r["response"]}


def drawn(strata: dict[str, list[dict[str, Any]]], quota: dict[str, int],
          items: dict[str, dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """``quota[stratum]`` records of each stratum (:func:`_round_robin`), each as a reader sees
    it with its ``_stratum`` and the stratum's ``_share`` of all records; shuffled."""
    total = sum(len(v) for v in strata.values())
    chosen = [{**sample_record(r, items[r["id"]], "test"), "_stratum": stratum,
               "_share": len(strata[stratum]) / total}
              for stratum, n in quota.items()
              for r in _round_robin(strata[stratum], items, n, rng)]
    rng.shuffle(chosen)
    return chosen


def write_sample(records: list[dict[str, Any]], *, strata: bool) -> None:
    """Print selected records for a reader (the ``_stratum`` and ``_share`` a selection adds
    left out), or, with ``strata``, each record's stratum and share, kept from the readers."""
    for rec in records:
        if strata:
            rec = {"id": rec["id"], "model": rec["model"], "stratum": rec["_stratum"],
                   "share": round(rec["_share"], 6)}
        else:
            rec = {k: v for k, v in rec.items() if not k.startswith("_")}
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


def select() -> list[dict[str, Any]]:
    items = {r["id"]: r for r in _lines(SEED_ITEMS)}
    seen = {(r["id"], r.get("model", FIRST_MODEL)) for path in EARLIER for r in _lines(path)}
    rng = random.Random(SEED)
    out: list[dict[str, Any]] = []
    for model_dir, quota in QUOTA.items():
        strata: dict[Stratum, list[dict[str, Any]]] = defaultdict(list)
        for r, it in unread(model_dir, items, seen):
            strata[(bool(it["answerable"]), bool(r["answered"]), r["correct"])].append(r)
        chosen: list[dict[str, Any]] = []
        for stratum, n in quota.items():
            for k, r in enumerate(_round_robin(strata[stratum], items, n, rng)):
                chosen.append(sample_record(r, items[r["id"]],
                                            "tune" if k % 2 == 0 else "test"))
        rng.shuffle(chosen)
        out += chosen
    return out


def main() -> None:
    for rec in select():
        sys.stdout.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
