"""The wrapped bench's contexts (:mod:`benchmarks.bench.contexts`): what each sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.asking import read_corpus
from benchmarks.bench.contexts import contexts, declared, select
from guard import Guard

CORPUS = Path(__file__).parents[3] / "cost_models" / "data" / "asking" / "corpus.jsonl"
QUESTION = "What is the capital of Australia?"


def held_out_tools() -> list[dict[str, Any]]:
    """The test split's tool definitions, read from the corpus file itself."""
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    return [r["tool"] for r in rows if r["split"] == "test" and r["label"] == "tool"]


def test_the_tool_contexts_send_held_out_definitions_beside_the_question() -> None:
    ctxs = contexts(read_corpus())
    held_out = held_out_tools()
    assert len(held_out) == 80  # the K and L files' 40 each (the corpus card)
    seen: list[str] = []
    for name, k in (("tools: 1 definition", 1), ("tools: 3 definitions", 3)):
        for i in range(40):
            body = ctxs[name](QUESTION, i)
            # a chat request's body: the question as the only message, k definitions
            assert body == {"messages": [{"role": "user", "content": QUESTION}],
                            "tools": body["tools"]}
            assert len(body["tools"]) == k
            assert all(t in held_out for t in body["tools"])
            names = [t["function"]["name"] for t in body["tools"]]
            assert len(set(names)) == k, names  # three different tools
            seen += names
    # the items go round the held-out definitions, not one of them again and again (the two
    # writers gave 21 of their names to both: 59 names in all)
    assert len(set(seen)) == len({t["function"]["name"] for t in held_out}) == 59


def test_the_other_contexts_send_messages_only() -> None:
    ctxs = contexts(read_corpus())
    for name, wrap in ctxs.items():
        if name.startswith("tools: "):
            continue
        messages = wrap(QUESTION, 5)
        assert isinstance(messages, list), name
        assert messages[-1] == {"role": "user", "content": QUESTION}, name


def test_declared_trusts_every_prompt_and_tool_the_contexts_send_and_no_turn() -> None:
    corpus = read_corpus()
    ctxs = contexts(corpus)
    client, operator = Guard(), Guard(asking=declared(corpus))
    bare = client.price(QUESTION).cost
    assert operator.price(QUESTION).cost == bare
    raised = 0
    # 120 items go round the 120 held-out system prompts and, three at a time, the tools
    for name in ("system: helpful assistant", "system: helpful assistant + date",
                 "system: one-line instruction", "system: product prompt",
                 "system: collection prompt", "tools: 1 definition", "tools: 3 definitions"):
        for i in range(120):
            request = ctxs[name](QUESTION, i)
            assert operator.price(request).cost == bare, (name, i)
            raised += client.price(request).cost > bare
    assert raised > 100  # as a client's, held-out prompts and tools raise the price
    # the turns before the question are the client's, declared or not
    for i in range(40):
        request = ctxs["history: 2 harmless exchanges"](QUESTION, i)
        assert operator.price(request).cost == client.price(request).cost


def test_select_picks_contexts_by_a_part_of_their_name() -> None:
    ctxs = contexts(read_corpus())
    assert list(select(ctxs, None)) == list(ctxs)
    assert list(select(ctxs, ["tools: 3", "PRODUCT"])) == ["system: product prompt",
                                                           "tools: 3 definitions"]
    assert list(select(ctxs, ["system: helpful assistant"])) == ["system: helpful assistant"]
    with pytest.raises(ValueError, match="names 2 contexts"):
        select(ctxs, ["tools"])
    with pytest.raises(ValueError, match="names no context"):
        select(ctxs, ["nothing like it"])
