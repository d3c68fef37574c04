"""Blind answers of a chat assistant, collected from batch files (the strong-model replies).

A model reached only through a chat (here a frontier LLM working as an answerer, see
``benchmarks/data/strong/README.md``) cannot be called by :mod:`benchmarks.collect`. Its
replies are collected in three steps that anyone can repeat with another such model:

1. :func:`stratified_batches` deals the seed items into batch files of ids and question texts
   only (no reference, no cost, no label), stratified by source and answerability, so that the
   first ``k`` batches are a stratified sample of the whole;
2. each answerer gets one batch file and the prompt (``prompt.md``, or ``riskeval.md`` with a
   penalty), and writes its replies as plain text, each opened by a delimiter line
   (:data:`DELIMITER`), the reply's last line ``Confidence: NN%``;
3. :func:`assemble` parses those files (:func:`parse_answers`), grades every reply with the
   project's grader and writes response records (the verbal confidence read by the guard's
   own parser; no logprobs).
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: The line that opens each reply in an answer file: ``=====ANSWER <id>=====``.
DELIMITER = re.compile(r"^=====ANSWER (\S+)=====[ \t]*$", re.MULTILINE)
#: The seed of the batch deal (fixed: the batches are part of the record).
SEED = 20261202


def stratified_batches(items: Sequence[Mapping[str, Any]], size: int, *,
                       seed: int = SEED) -> list[list[dict[str, str]]]:
    """The items dealt into batches of about ``size``: shuffled within each stratum (source,
    answerable), then dealt round-robin in stratum order, so that every prefix of batches is
    a stratified sample. Each entry holds the blind id (:func:`blind_id`), the seed id
    (``item``, kept out of the answerer's file) and the question.

    >>> items = [{"id": str(i), "question": "q", "source": "s" + str(i % 2),
    ...           "answerable": i % 3 == 0} for i in range(10)]
    >>> [len(b) for b in stratified_batches(items, 4)]
    [4, 3, 3]
    """
    if size < 1:
        raise ValueError(f"a batch size must be >= 1; got {size}")
    rng = random.Random(seed)
    strata: dict[tuple[str, bool], list[Mapping[str, Any]]] = defaultdict(list)
    for it in items:
        strata[(str(it["source"]), bool(it["answerable"]))].append(it)
    order: list[Mapping[str, Any]] = []
    for key in sorted(strata):
        group = list(strata[key])
        rng.shuffle(group)
        order.extend(group)
    n = max(1, -(-len(order) // size))
    dealt: list[list[Mapping[str, Any]]] = [[] for _ in range(n)]
    for k, it in enumerate(order):
        dealt[k % n].append(it)
    batches: list[list[dict[str, str]]] = []
    for b, group in enumerate(dealt, 1):
        rng.shuffle(group)
        batches.append([{"id": blind_id(b, j), "item": str(it["id"]),
                         "question": str(it["question"])} for j, it in enumerate(group, 1)])
    return batches


def blind_id(batch: int, position: int) -> str:
    """The id an answerer sees: batch and position only (a seed id names its answerability,
    ``...-a-`` / ``...-r-``, so it is never shown).

    >>> blind_id(3, 17)
    'b03-017'
    """
    return f"b{batch:02d}-{position:03d}"


def parse_answers(text: str) -> dict[str, str]:
    """``{id: reply}`` from one answer file: each reply is the text between its delimiter
    line and the next (stripped). A repeated id is an error.

    >>> parse_answers("=====ANSWER a=====\\nParis.\\nConfidence: 90%\\n=====ANSWER b=====\\nNo.")
    {'a': 'Paris.\\nConfidence: 90%', 'b': 'No.'}
    """
    marks = list(DELIMITER.finditer(text))
    out: dict[str, str] = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        rid = m.group(1)
        if rid in out:
            raise ValueError(f"reply {rid!r} appears twice")
        out[rid] = text[m.end():end].strip()
    return out


def batch_lines(batch: Iterable[Mapping[str, str]]) -> str:
    """A batch as the answerer sees it, JSONL text: one ``{"id", "question"}`` object a line
    (the blind id; the seed id stays in the key file, :func:`key_lines`)."""
    return "".join(json.dumps({"id": b["id"], "question": b["question"]},
                              ensure_ascii=False) + "\n" for b in batch)


def key_lines(batch: Iterable[Mapping[str, str]]) -> str:
    """The key of a batch, JSONL text: ``{"id": blind id, "item": seed id}`` a line."""
    return "".join(json.dumps({"id": b["id"], "item": b["item"]}) + "\n" for b in batch)


#: The model name the strong records carry.
MODEL = "claude-blind"


def read_answer_files(paths: Iterable[Any]) -> dict[str, str]:
    """``{blind id: reply}`` from an answerer's part files, in part order (``_part2`` before
    ``_part10``)."""
    from pathlib import Path

    def order(p: Path) -> tuple[str, int]:
        m = re.search(r"_part(\d+)\.txt$", p.name)
        return (p.name[: m.start()] if m else p.name, int(m.group(1)) if m else 0)

    text = "".join(Path(p).read_text(encoding="utf-8") + "\n"
                   for p in sorted((Path(p) for p in paths), key=order))
    return parse_answers(text)


def assemble(items: Mapping[str, Mapping[str, Any]], keys: Mapping[str, str],
             replies: Mapping[str, str], *, model: str = MODEL) -> list[dict[str, Any]]:
    """Response records of the replies: ``response`` is the reply without its confidence line
    (what the guard delivers, and what the project's grader grades), ``written`` the reply as
    the answerer wrote it, ``confidence.verbal`` the stated confidence as the guard's own
    parser reads it.

    ``keys`` maps blind ids to seed ids. A reply missing for a key, or a reply whose id is no
    key, is an error.
    """
    from benchmarks.collect import grading_block
    from benchmarks.grading import grade
    from guard.confidence import parse_verbal_confidence
    from guard.response_records import parse_response_record

    missing = sorted(set(keys) - set(replies))
    extra = sorted(set(replies) - set(keys))
    if missing or extra:
        raise ValueError(f"replies missing for {missing[:5]}, or for no key: {extra[:5]}")
    out = []
    for blind, seed_id in keys.items():
        item = items[seed_id]
        reply = replies[blind]
        stated = parse_verbal_confidence(reply)
        delivered = stated.answer if stated else reply
        g = grade(item, delivered)
        record = {"id": seed_id, "response": delivered, "written": reply,
                  "answered": g.answered,
                  "correct": g.correct,
                  "confidence": {"verbal": stated.value if stated else None,
                                 "logprob_mean": None, "logprob_low10": None,
                                 "consistency": None},
                  "model": model, "blind_id": blind, "grading": grading_block(g)}
        parse_response_record(record, f"reply {blind}")
        out.append(record)
    return out
