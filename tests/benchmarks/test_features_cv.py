"""The grouped-CV feature comparison runs end to end and scores learnable signal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import features_cv

pytest.importorskip("wordllama")

WORDS = {"insulin": 2.0, "overdose": 2.2, "bleach": 1.8, "lawsuit": 1.0, "mortgage": 0.8,
         "river": -1.5, "poem": -1.8, "planet": -1.2, "painter": -1.4, "trivia": -2.0}


def _items(n: int = 60) -> list[dict[str, object]]:
    rng = np.random.default_rng(3)
    names = list(WORDS)
    out = []
    for k in range(n):
        w = names[k % len(names)]
        answerable = k % 2 == 0
        ask = "What is the" if answerable else "What will tomorrow bring for my"
        out.append({"id": f"q{k}", "question": f"{ask} {w} question number {k}?",
                    "cost": float(np.exp(WORDS[w] + rng.normal(0, 0.2))),
                    "answerable": answerable, "source": f"s{k % 6}", "domain": "x"})
    return out


def test_evaluate_scores_learnable_signal_on_held_out_sources() -> None:
    items = _items()
    r = features_cv.evaluate([str(i["question"]) for i in items], [i["cost"] for i in items],
                             [i["answerable"] for i in items], [str(i["source"]) for i in items],
                             features_cv.REPRESENTATIONS["affix TF-IDF + 0.5 x wordllama"])
    assert r["spearman"] > 0.7 and r["roc_auc"] > 0.9
    assert r["ridge"] in features_cv.RIDGE_GRID and r["C"] in features_cv.CS


def test_main_prints_one_row_per_representation(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in _items()))
    assert features_cv.main(["--data", str(path)]) == 0
    out = capsys.readouterr().out
    assert "60 items, 6 sources, 5 folds grouped by source" in out
    for name in features_cv.REPRESENTATIONS:
        assert f"| {name} | " in out
