"""Would a grader learned from the read grades do better than the rules on a new sample?
``python -m benchmarks.grading.learned_probe``.

A measurement, not a grader: for each gold sample in turn, a classifier of whether a reply
answered (TF-IDF word 1-3-grams of the reply and the item's ``answerable`` flag, logistic
regression) is fitted on the records of the other samples, and the rule grade of each held-out
record is flipped where the classifier disagrees with the rules and is confident (its
probability of the other outcome above ``1 - margin``); a flip to "answered" grades an
unanswerable item's reply wrong and leaves an answerable item's correctness unknown (counted
as a disagreement). Agreement with the reading is reported for the rules alone and with the
flips, per held-out sample and margin, so that whether learning from the read grades helps on
records it never saw can be read off (leave-one-sample-out: each sample was read by its own
readers).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from benchmarks.grading.agreement import read_gold, read_outcome, rule_outcome

DATA = Path("tests/benchmarks/data")
#: The gold samples, in the order they were read.
SAMPLES = ("gold_grades.jsonl", "gold_heldout.jsonl", "gold_fresh.jsonl", "gold_fresh2.jsonl")
MARGINS = (0.02, 0.05, 0.1, 0.2)


@dataclass(frozen=True)
class Row:
    """One held-out sample at one margin: agreement of the rules and of the rules with the
    classifier's confident flips."""

    sample: str
    margin: float
    records: int
    rules: int
    flipped: int
    flips: int
    flips_right: int


def _features(rows: Sequence[dict[str, Any]], vec: TfidfVectorizer) -> Any:
    flags = csr_matrix(np.array([[float(bool(r["answerable"]))] for r in rows]))
    return hstack([vec.transform([str(r["response"]) for r in rows]), flags]).tocsr()


def probe(samples: dict[str, list[dict[str, Any]]], margins: Sequence[float] = MARGINS,
          c: float = 10.0) -> list[Row]:
    """Leave each sample out in turn (see the module docstring)."""
    rules = {name: [rule_outcome(r) for r in recs] for name, recs in samples.items()}
    out: list[Row] = []
    for held, recs in samples.items():
        train = [r for name, rs in samples.items() if name != held for r in rs]
        vec = TfidfVectorizer(ngram_range=(1, 3), min_df=2, sublinear_tf=True)
        vec.fit([str(r["response"]) for r in train])
        clf = LogisticRegression(C=c, max_iter=5000)
        clf.fit(_features(train, vec), np.array([bool(r["answered"]) for r in train]))
        p_answered = clf.predict_proba(_features(recs, vec))[:, 1]
        for margin in margins:
            agree = agree_flipped = flips = right = 0
            for rec, ruled, p in zip(recs, rules[held], p_answered, strict=True):
                gold, outcome = read_outcome(rec), ruled
                if ruled[0] and p < margin:
                    outcome = (False, None)
                elif not ruled[0] and p > 1 - margin:
                    outcome = (True, False if not rec["answerable"] else None)
                if outcome != ruled:
                    flips += 1
                    right += outcome == gold
                agree += ruled == gold
                agree_flipped += outcome == gold
            out.append(Row(held, margin, len(recs), agree, agree_flipped, flips, right))
    return out


def table(rows: Sequence[Row]) -> str:
    lines = ["| held-out sample | margin | records | rules agree | with flips | flips "
             "(right) |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r.sample} | {r.margin:g} | {r.records} | {r.rules} | {r.flipped} "
                     f"| {r.flips} ({r.flips_right}) |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.grading.learned_probe",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct",
                        help="the gold records of this model (default %(default)s)")
    parser.add_argument("--data", type=Path, default=DATA,
                        help="the directory holding the gold samples (default %(default)s)")
    args = parser.parse_args(argv)
    samples: dict[str, list[dict[str, Any]]] = {}
    for name in SAMPLES:
        path = args.data / name
        if not path.is_file():
            print(f"error: no gold sample {path}", file=sys.stderr)
            return 2
        samples[name] = [r for r in read_gold(path) if r.get("model") == args.model]
    samples = {k: v for k, v in samples.items() if v}
    if len(samples) < 2:
        print(f"error: fewer than two gold samples hold records of {args.model}",
              file=sys.stderr)
        return 2
    print(table(probe(samples)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
