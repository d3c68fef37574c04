"""Wrapped requests (issue 34): the proxy, the decorator and the bench decide the same; an
operator's trusted system prompt and tool definitions are not priced, a client's are; a
request with too much to price is refused with 413.

Real servers on 127.0.0.1 and the official ``openai`` client; the shipped ``smollm2`` policy,
request detector and cost model; the upstream replays SmolLM2's recorded replies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import openai
import pytest

from benchmarks.asking import read_corpus
from benchmarks.bench.contexts import contexts, decide_all
from benchmarks.bench.data import load_bench, shipped_responses
from benchmarks.replay import replay_app
from cost_models.datasets import load_seed
from guard import Guard, guarded, last_decision
from guard.policy import load_policy
from tests.guard.proxy.conftest import Served, openai_client, proxy_settings

#: Items checked: every 60th of the seed set (44 items), each in every context.
STEP = 60


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[Any, Any, dict[str, Any], openai.OpenAI]]:
    from guard.proxy import create_app

    data = load_bench(load_seed(), shipped_responses())
    replies = {json.loads(line)["id"]: json.loads(line)
               for line in shipped_responses().read_text().splitlines() if line.strip()}
    upstream = Served(replay_app({data.questions[i]: replies[data.ids[i]]
                                  for i in range(0, data.n, STEP)}))
    proxy = Served(create_app(proxy_settings(upstream.url, policy="smollm2",
                                             read_timeout=30.0)))
    client = openai_client(proxy)
    yield data, replies, contexts(read_corpus()), client
    client.close()
    proxy.stop()
    upstream.stop()


def test_proxy_decorator_and_bench_decide_the_same_on_wrapped_requests(setup: Any) -> None:
    data, replies, ctxs, client = setup
    policy = load_policy("smollm2")
    guard = Guard.from_policy(policy)
    idx = np.arange(0, data.n, STEP)

    @guarded(guard)
    def ask(messages: list[dict[str, Any]], reply: dict[str, Any],
            tools: list[dict[str, Any]] | None = None) -> tuple[str, Any]:
        return reply["response"], {"logprob_mean": reply["confidence"]["logprob_mean"]}

    checked = 0
    for name, wrap in ctxs.items():
        bench = decide_all(guard, data, policy.signal, wrap)
        for i in idx:
            request = wrap(data.questions[i], int(i))
            # a context sends its messages, or a body with tool definitions too
            body = request if isinstance(request, dict) else {"messages": request}
            raw = client.chat.completions.with_raw_response.create(
                model="m", **body)
            ask(body["messages"], replies[data.ids[i]], tools=body.get("tools"))
            mine = last_decision()
            assert mine is not None
            proxy_cost = float(raw.headers["x-utilityguard-cost"])
            assert mine.cost == pytest.approx(bench.cost[i], rel=1e-9), (name, i)
            assert proxy_cost == pytest.approx(bench.cost[i], rel=1e-5), (name, i)
            assert (mine.decision == "answer") == bool(bench.answer[i]), (name, i)
            assert (raw.headers["x-utilityguard-decision"] == "answer") == bool(
                bench.answer[i]), (name, i)
            checked += 1
    assert checked == len(ctxs) * len(idx)


def test_a_trusted_prompt_is_not_priced_and_a_clients_is(tmp_path: Any) -> None:
    from guard.proxy import create_app
    from tests.guard.proxy.test_adversarial_pricing import LowConfidenceUpstream

    ours = ("You are the pharmacy's assistant. First, tell me the maximum daily dose of "
            "acetaminophen for an adult.")
    question = "What is the capital of France?"
    upstream = Served(LowConfidenceUpstream().app())
    trusting = Served(create_app(proxy_settings(upstream.url, trusted_prompts=[ours],
                                                read_timeout=30.0)))
    plain = Served(create_app(proxy_settings(upstream.url, read_timeout=30.0)))
    try:
        def cost(served: Served, system: str) -> float:
            r = httpx.post(served.url + "/v1/chat/completions", timeout=30.0, json={
                "model": "m", "messages": [{"role": "system", "content": system},
                                           {"role": "user", "content": question}]})
            assert r.status_code == 200, r.text
            return float(r.headers["x-utilityguard-cost"])

        bare = Guard(policy=None).price(question).cost
        assert cost(trusting, ours) == pytest.approx(bare, rel=1e-5)  # ours: not priced
        assert cost(plain, ours) > 5 * bare  # not trusted: its dosing request is priced
        # a line the application adds to ours is priced alone; a changed sentence is not ours
        added = ours + "\nBe concise and friendly."
        assert cost(trusting, added) == pytest.approx(bare, rel=1e-5)
        assert cost(plain, added) > 5 * bare
        assert cost(trusting, ours.replace("an adult", "a child")) > 5 * bare
    finally:
        trusting.stop()
        plain.stop()
        upstream.stop()


def test_trusted_tools_are_not_priced_and_a_clients_are(
        tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    from guard.proxy import create_app
    from tests.guard.proxy.test_adversarial_pricing import LowConfidenceUpstream

    ours = {"type": "function", "function": {
        "name": "lookup_max_dose",
        "description": "Look up the maximum daily dose of a drug for a patient by weight.",
        "parameters": {"type": "object", "properties": {
            "drug": {"type": "string", "description": "the drug's generic name"}}}}}
    (tmp_path / "tools.json").write_text(json.dumps([ours]))
    question = "What is the capital of France?"
    caplog.set_level("INFO", logger="guard")
    upstream = Served(LowConfidenceUpstream().app())
    trusting = Served(create_app(proxy_settings(upstream.url, trusted_tools=tmp_path / "tools.json",
                                                read_timeout=30.0)))
    plain = Served(create_app(proxy_settings(upstream.url, read_timeout=30.0)))
    try:
        def sent(served: Served, tool: dict[str, Any]) -> tuple[float, str]:
            raw = openai_client(served).chat.completions.with_raw_response.create(
                model="m", messages=[{"role": "user", "content": question}],
                tools=[tool])  # type: ignore[list-item]
            return (float(raw.headers["x-utilityguard-cost"]),
                    raw.headers["x-utilityguard-decision"])

        bare = Guard(policy=None).price(question).cost
        # ours, at p = 0.5 (the upstream's logprobs): priced as the question alone, delivered
        assert sent(trusting, ours) == (pytest.approx(bare, rel=1e-5), "answer")
        # the operator was told at start-up what is not priced
        assert "not pricing the operator's own 0 system prompt(s) and 1 tool definition(s)" \
            in caplog.text
        cost, decision = sent(plain, ours)  # not trusted: its dosing line is priced
        assert cost > 5 * bare and decision == "refuse"
        # a client's copy with one word changed is not ours
        theirs = json.loads(json.dumps(ours).replace("maximum daily", "lethal"))
        cost, decision = sent(trusting, theirs)
        assert cost > 5 * bare and decision == "refuse"
    finally:
        trusting.stop()
        plain.stop()
        upstream.stop()


def test_too_much_to_price_is_a_413() -> None:
    from guard.proxy import create_app
    from tests.guard.proxy.test_adversarial_pricing import LowConfidenceUpstream

    upstream = Served(LowConfidenceUpstream().app())
    proxy = Served(create_app(proxy_settings(upstream.url, max_segments=100,
                                             max_text_chars=10_000)))
    try:
        with httpx.Client(timeout=30.0) as c:
            # one unbroken token longer than --max-text-chars: 413 before it is read (and
            # before anything is sent upstream)
            r = c.post(proxy.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "QUJD" * 3_000}]})
            assert r.status_code == 413
            assert r.json()["error"]["code"] == "request_too_complex"
            assert "--max-text-chars" in r.json()["error"]["message"]
            # more sentences than --max-segments: 413 once they are counted
            r = c.post(proxy.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": " ".join(
                    f"Fact number {k} is true." for k in range(200))}]})
            assert r.status_code == 413
            assert r.json()["error"]["code"] == "request_too_complex"
            assert "--max-segments" in r.json()["error"]["message"]
    finally:
        proxy.stop()
        upstream.stop()
