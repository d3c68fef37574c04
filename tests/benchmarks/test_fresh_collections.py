"""The fresh collections made for the gold readers (issue 35): what their cards say they hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.blind import read_answer_files
from cost_models.datasets import load_seed
from guard.response_records import parse_response_record
from utilityguard_base.jsonl import read_jsonl

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def test_the_two_fresh_smollm2_draws_are_disjoint_seed_items() -> None:
    seed = {i.id for i in load_seed()}
    first = [r["id"] for r in read_jsonl(DATA / "smollm2/fresh/items.jsonl")]
    second = [r["id"] for r in read_jsonl(DATA / "smollm2/fresh/items_2.jsonl")]
    assert len(set(first)) == len(set(second)) == 1200
    assert not set(first) & set(second) and set(first) | set(second) <= seed
    replies = read_jsonl(DATA / "smollm2/fresh/responses_2.jsonl")
    assert sorted(r["id"] for r in replies) == sorted(second)  # in the order they came back


@pytest.mark.parametrize(("name", "batches"), [("responses.jsonl", ("04", "05", "06")),
                                              ("responses_2.jsonl", ("07", "08", "09"))])
def test_the_fresh_strong_replies_are_the_answer_files_of_their_batches(
        name: str, batches: tuple[str, ...]) -> None:
    records = read_jsonl(DATA / "strong/fresh" / name)
    keys = {k["id"]: k["item"] for b in batches
            for k in read_jsonl(DATA / "strong/keys" / f"batch_{b}.jsonl")}
    assert len(records) == 300 and {(r["blind_id"], r["id"]) for r in records} == set(
        keys.items())
    written = read_answer_files(sorted((DATA / "strong/fresh/answers").glob("*.txt")))
    for r in records:
        parse_response_record(r, r["blind_id"])
        assert r["model"] == "claude-blind-fresh" and r["written"] == written[r["blind_id"]]
        # the graded reply is the written one without its last line, "Confidence: NN%"
        assert r["written"].rstrip().splitlines()[-1].startswith("Confidence:")
        assert r["response"] in r["written"] and "Confidence:" not in r["response"]
        assert 0 <= r["confidence"]["verbal"] <= 1


def test_the_fresh_gemma_items_are_the_first_600_of_the_fresh_draw() -> None:
    first = read_jsonl(DATA / "smollm2/fresh/items.jsonl")[:600]
    assert read_jsonl(DATA / "gemma3_270m/fresh/items.jsonl") == first
    replies = read_jsonl(DATA / "gemma3_270m/fresh/responses.jsonl")
    assert sorted(r["id"] for r in replies) == sorted(r["id"] for r in first)
