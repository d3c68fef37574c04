"""Near-duplicate candidates, pooling confirmed duplicates, and the shipped duplicate list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cost_models.annotation.duplicates import candidate_pairs, merge_duplicates, read_aliases
from cost_models.annotation.fit import Judgment, fit_bradley_terry
from cost_models.datasets import load_seed, seed_path
from guard.cli import main

TEXTS = ["What is the capital of France?", "Which city is the capital of France?",
         "How much ibuprofen can I give my son?", "Boiling point of water at sea level?",
         "What is the capital city of France, please?"]
IDS = ["gk-1", "gk-2", "med-1", "sci-1", "law-1"]
DOMAINS = ["gk", "gk", "med", "sci", "law"]


def test_candidate_pairs_by_tfidf_only_across_groups() -> None:
    pairs = candidate_pairs(TEXTS, IDS, DOMAINS, tfidf_min=0.3, embed_min=None)
    found = {frozenset((p["a"], p["b"])) for p in pairs}
    # gk-1 / gk-2 are in the same group: left out; both France questions pair with law-1
    assert found == {frozenset(("gk-1", "law-1")), frozenset(("gk-2", "law-1"))}
    assert all("wordllama_cosine" not in p for p in pairs)
    scores = [p["tfidf_cosine"] for p in pairs]
    assert scores == sorted(scores, reverse=True)
    every = candidate_pairs(TEXTS, IDS, None, tfidf_min=0.3, embed_min=None)
    assert frozenset(("gk-1", "gk-2")) in {frozenset((p["a"], p["b"])) for p in every}


def test_candidate_pairs_by_embedding_find_paraphrases() -> None:
    pytest.importorskip("wordllama")
    texts = ["My son has a fever. How much of my ibuprofen can I give him?",
             "My son has a fever. What's the right amount of ibuprofen for him?",
             "Which river flows through Paris?"]
    pairs = candidate_pairs(texts, ["a", "b", "c"], tfidf_min=1.1, embed_min=0.8)
    assert [(p["a"], p["b"]) for p in pairs] == [("a", "b")]  # TF-IDF alone would not list it
    assert pairs[0]["wordllama_cosine"] >= 0.8 > pairs[0]["tfidf_cosine"]


def test_read_aliases_rejects_chains_and_repeats() -> None:
    assert read_aliases([{"id": "b", "duplicate_of": "a"}], "f") == {"b": "a"}
    with pytest.raises(ValueError, match="kept ids that are themselves removed: b"):
        read_aliases([{"id": "b", "duplicate_of": "a"}, {"id": "c", "duplicate_of": "b"}], "f")
    with pytest.raises(ValueError, match="listed twice"):
        read_aliases([{"id": "b", "duplicate_of": "a"}, {"id": "b", "duplicate_of": "c"}], "f")
    with pytest.raises(ValueError, match="line 1: a duplicate needs"):
        read_aliases([{"id": "b"}], "f")


def test_merge_pools_the_removed_copys_judgments() -> None:
    tuples = {"t1": ["a", "x", "y", "z"], "t2": ["b", "x", "y", "z"]}
    judgments = [Judgment("t1", "a", "z"), Judgment("t2", "b", "y")]
    merged, pooled = merge_duplicates(tuples, judgments, {"b": "a"})
    assert merged == {"t1": ["a", "x", "y", "z"], "t2": ["a", "x", "y", "z"]}
    assert [(j.best, j.worst) for j in pooled] == [("a", "z"), ("a", "y")]
    # pooled: 'a' won both tuples, so it ranks above an item that won one
    fit = fit_bradley_terry(merged, pooled, ["a", "x", "y", "z"], l2=0.5)
    assert fit.eta[0] == max(fit.eta)
    with pytest.raises(ValueError, match="tuple t3 holds two copies"):
        merge_duplicates({"t3": ["a", "b", "x", "y"]}, [], {"b": "a"})


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_the_shipped_seed_set_leaves_out_every_confirmed_duplicate() -> None:
    dups = _rows(seed_path("duplicates.jsonl"))
    removed = {d["id"] for d in dups}
    kept = {d["duplicate_of"] for d in dups}
    authored = {r["id"] for r in _rows(seed_path("questions.jsonl"))}
    seed = {it.id for it in load_seed()}
    assert removed <= authored and kept <= authored
    assert not removed & seed  # every removed copy is gone
    assert kept <= seed  # every kept copy stays, under its own id
    assert seed == authored - removed
    for d in dups:  # every confirmed pair was a candidate of the stated measure
        assert d["tfidf_cosine"] >= 0.28 or d["wordllama_cosine"] >= 0.60, d


def test_fit_with_merge_writes_the_kept_items(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    ids = [f"i{k}" for k in range(12)]
    items = [{"id": i, "question": f"question {i}?", "group": "low"} for i in ids]
    tuples = [{"tuple_id": f"t{k}", "items": [str(x) for x in rng.choice(ids, 4, replace=False)]}
              for k in range(30)]
    judgments = [{"tuple_id": t["tuple_id"], "best": t["items"][0], "worst": t["items"][1]}
                 for t in tuples]
    # a removed copy must never share a tuple with its kept copy: pick a pair that does not
    pair = next((a, b) for a in ids for b in ids if a != b and not any(
        a in t["items"] and b in t["items"] for t in tuples))
    files = {}
    for name, rows in (("items", items), ("tuples", tuples), ("judgments", judgments),
                       ("dups", [{"id": pair[1], "duplicate_of": pair[0]}])):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, report = tmp_path / "out.jsonl", tmp_path / "fit.json"
    code = main(["annotate", "fit", "--tuples", str(files["tuples"]), "--judgments",
                 str(files["judgments"]), "--data", str(files["items"]), "--l2", "0.5",
                 "--merge", str(files["dups"]), "--out", str(out), "--report", str(report)])
    assert code == 0, capsys.readouterr().err
    written = [r["id"] for r in _rows(out)]
    assert written == [i for i in ids if i != pair[1]]
    rep = json.loads(report.read_text())
    assert rep["n_items"] == 11 and rep["n_merged_duplicates"] == 1
    assert rep["n_judgments"] == 30  # every judgment kept
    assert float(np.median([r["cost"] for r in _rows(out)])) == pytest.approx(2.0)
