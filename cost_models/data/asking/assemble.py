"""Assemble ``corpus.jsonl`` from the raw files (every label made by reading; see README.md).

One row per labelled text::

    {"id", "text", "label", "source", "unit", "split", "kind"?, "pair"?, "form"?}

``label`` is ``request`` or ``context`` (text that asks, or that a request depends on: kept and
priced) or ``persona``, ``rule``, ``social``, ``assistant``, ``system``, ``tool`` (text that
asks for nothing). ``split`` is fixed by the unit before any rule was written. The first
held-out split (P121-P240 and the B and D files), measured four times, was moved to ``train``
on 2026-12-02 and a fresh one written by other writers (the H files, ``test``) before any
rule changed again: every published prompt and the A, B, C, D, E and F files are ``train``;
the H files ``test`` (never fitted or tuned on). ``dressed`` rows are costly
requests a red-team writer dressed as a persona, a rule or a system instruction (label
``request``; ``form`` says how). Tool definitions keep their JSON
(``tool``) and their texts as the pricing walk reads them. Run::

    python cost_models/data/asking/assemble.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw"
#: The last prompt of the training split (P001 .. P240: all of them since the first held-out
#: split, P121-P240, was moved to training).
TRAIN_PROMPTS = 240
#: The writers' halves and their split: A (first writers), B (the first held-out writers,
#: moved to training), H (the second held-out writers, moved to training after it was measured
#: twice), K (the third held-out writers, the held-out split since 2026-12-02 15:50).
HALVES = (("A", "train"), ("B", "train"), ("H", "train"), ("K", "test"))
#: System prompts and tool definitions of a fourth held-out split (the L files, 2026-12-03,
#: two fresh writers, told that a third of the products are ones where safety matters),
#: fixed before a rule it tested was written: held out beside the K files, whose system
#: prompts and tool definitions had been run four times. (Moved to training for one
#: candidate detector, measured once on the L files alone and not shipped; the training
#: split is again the one the shipped detector was fitted on.)
FOURTH = "L"
#: Instructions and dressed forms of more seed questions (``questions_I/J.jsonl``, written after
#: the fresh held-out split was fixed): training only.
MORE_INSTRUCTIONS = ("I", "J")
#: The fifth held-out split (``fresh``, 2026-12-03 22:30 UTC), fixed before the rule it was to
#: test: the M and N files (written for training on 2026-12-03 15:30 UTC, never measured on and
#: in no shipped model: 800 user and 400 assistant lines, 60 system prompts, 40 tool
#: definitions) and the P files (two fresh writers: instructions and dressed forms of 150 seed
#: questions of a new draw, 150 dressed costly requests). Its own split, beside ``test``.
FIFTH = "fresh"


#: The units whose instructions and dressed forms the shipped cost model trains on
#: (``paraphrases.jsonl``): the A half's (the B half, moved to training after the cost model
#: was fitted, is not among them; ``--paraphrases`` of a refit may add it).
PARAPHRASE_UNITS = ("QA",)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _awesome() -> list[dict[str, Any]]:
    labels: dict[str, str] = {}
    for path in sorted((RAW / "labels").glob("labels_*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                sid, label = line.split()
                labels[sid] = label
    rows = []
    for path in sorted((RAW / "labels").glob("batch_*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("P") or ": " not in line:
                continue
            sid, text = line.split(": ", 1)
            unit = sid.split("-")[0]
            rows.append({"id": sid, "text": text, "label": labels[sid],
                         "source": "awesome-chatgpt-prompts", "unit": unit,
                         "split": "train" if int(unit[1:]) <= TRAIN_PROMPTS else "test"})
    missing = [r["id"] for r in rows if r["id"] not in labels]
    if missing or len(labels) != len(rows):
        raise SystemExit(f"labels and sentences differ: {missing[:5]}")
    return rows


def _written() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for half, split in HALVES:
        for name, label in (("social", "social"), ("assistant", "assistant")):
            rows += _lines(name, label, half, split)
        rows += _system_and_tools(half, split)
        rows += _instructions(half, split)
    rows += _system_and_tools(FOURTH, "test")
    rows += _system_and_tools("M", FIFTH) + _instructions("P", FIFTH)
    for half in MORE_INSTRUCTIONS:
        rows += _instructions(half, "train")
    return rows


def _lines(name: str, label: str, half: str, split: str) -> list[dict[str, Any]]:
    return [{"id": r["id"], "text": r["text"], "label": label, "source": "written",
             "unit": r["id"], "split": split, "kind": r.get("kind") or r.get("product")}
            for r in _jsonl(RAW / "written" / f"{name}_{half}.jsonl")]


def _system_and_tools(half: str, split: str) -> list[dict[str, Any]]:
    rows = _lines("system", "system", half, split)
    for r in _jsonl(RAW / "written" / f"tools_{half}.jsonl"):
        rows.append({"id": r["id"], "text": json.dumps(r["tool"], ensure_ascii=False),
                     "label": "tool", "source": "written", "unit": r["id"],
                     "split": split, "tool": r["tool"]})
    return rows


def _instructions(half: str, split: str) -> list[dict[str, Any]]:
    """The instructions and dressed forms a writer made of the seed questions of ``half``."""
    rows: list[dict[str, Any]] = []
    questions = {q["qid"]: q for q in _jsonl(RAW / "written" / f"questions_{half}.jsonl")}
    for r in _jsonl(RAW / "written" / f"instruct_{half}.jsonl"):
        q = questions[r["qid"]]
        for form, key in (("instruction", "instruction"), ("dressed", "dressed")):
            rows.append({"id": f"{r['qid']}-{form}", "text": r[key], "label": "request",
                         "source": "written", "unit": r["qid"], "split": split,
                         "form": form, "pair": q["seed_id"], "question": q["question"]})
    return rows


def _more() -> list[dict[str, Any]]:
    """The second round of writing: system prompts of costly and of everyday products, rules
    about costly topics, the most common social and assistant lines (C, and E written after the
    first held-out run showed assistant lines kept: train), and dressed costly requests (C
    train, D held out)."""
    rows: list[dict[str, Any]] = []
    for name, label, split in (("system_C", "system", "train"), ("system_D", "system", "train"),
                               ("rules_C", "rule", "train"),
                               ("dressed_C", "request", "train"),
                               ("dressed_D", "request", "train"),
                               ("dressed_H", "request", "train"),
                               ("dressed_K", "request", "test"),
                               ("dressed_P", "request", FIFTH)):
        path = RAW / "written" / f"{name}.jsonl"
        for r in _jsonl(path):
            row = {"id": r["id"], "text": r["text"], "label": label, "source": "written",
                   "unit": r["id"], "split": split}
            if "product" in r:
                row["kind"] = r["product"]
            if "form" in r:
                row["form"] = f"dressed-{r['form']}"
            rows.append(row)
    for name, split in (("common_C", "train"), ("common_E", "train"), ("common_F", "train"),
                        ("common_H", "train"), ("common_K", "test"),
                        ("common_M", FIFTH), ("common_N", FIFTH)):
        for r in _jsonl(RAW / "written" / f"{name}.jsonl"):
            rows.append({"id": r["id"], "text": r["text"],
                         "label": "social" if r["speaker"] == "user" else "assistant",
                         "source": "written", "unit": r["id"], "split": split,
                         "kind": "common"})
    return rows


def main() -> int:
    rows = _awesome() + _written() + _more()
    with (HERE / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    # the training split's requests phrased as instructions or dressed, each with the seed
    # question it rephrases: the cost model's paraphrases (cost train --paraphrases)
    para = [{"text": r["text"], "of": r["pair"]} for r in rows
            if r["split"] == "train" and r.get("form") in ("instruction", "dressed")
            and r["unit"].startswith(PARAPHRASE_UNITS)]
    with (HERE / "paraphrases.jsonl").open("w", encoding="utf-8") as f:
        for p in para:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"corpus.jsonl: {len(rows)} rows; paraphrases.jsonl: {len(para)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
