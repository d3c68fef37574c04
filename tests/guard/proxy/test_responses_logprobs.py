"""``--confidence logprobs`` on /v1/responses: the proxy asks the upstream for the output
text's token logprobs (``include``) and gives the client only what it asked for — the
Responses counterpart of the chat route's ``logprobs``. Real servers, the official client."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from guard.proxy.plan import LOGPROBS_INCLUDE
from tests.guard.proxy.conftest import ANSWER, Served
from tests.guard.proxy.gated import GatedUpstream


def _parts(response: Any) -> list[Any]:
    return [p for item in response.output if item.type == "message" for p in item.content]


def test_the_guard_asks_for_logprobs_and_the_client_gets_none(client: openai.OpenAI,
                                                              fake: Any) -> None:
    raw = client.responses.with_raw_response.create(model="fake-model", input="sure question")
    # the signal the guard asked for decides: p = exp(-0.01) per token
    assert raw.headers["x-utilityguard-decision"] == "answer"
    assert float(raw.headers["x-utilityguard-confidence"]) == pytest.approx(math.exp(-0.01))
    assert fake.last_sent()["body"]["include"] == [LOGPROBS_INCLUDE]
    response = raw.parse()
    assert response.output_text == ANSWER
    assert [p.logprobs for p in _parts(response)] == [[]]  # nothing of the tokens
    assert b'"token"' not in raw.http_response.read()


def test_a_client_that_asks_gets_the_upstreams_logprobs(client: openai.OpenAI,
                                                        fake: Any) -> None:
    response = client.responses.create(model="fake-model", input="sure question",
                                       include=[LOGPROBS_INCLUDE])
    sent = fake.last_sent()["body"]
    assert sent == {"model": "fake-model", "input": "sure question",
                    "include": [LOGPROBS_INCLUDE]}  # as sent: no top_logprobs added
    tokens = _parts(response)[0].logprobs
    assert [t.token for t in tokens] == ANSWER.split(" ")
    assert all(t.logprob == -0.01 for t in tokens)


def test_other_include_values_are_kept(client: openai.OpenAI, fake: Any) -> None:
    client.responses.create(model="fake-model", input="sure question",
                            include=["reasoning.encrypted_content"])
    assert fake.last_sent()["body"]["include"] == ["reasoning.encrypted_content",
                                                   LOGPROBS_INCLUDE]


def test_a_buffered_stream_carries_no_logprobs(client: openai.OpenAI, fake: Any) -> None:
    events = list(client.responses.create(model="fake-model", input="sure question",
                                          stream=True))
    assert fake.last_sent()["body"]["include"] == [LOGPROBS_INCLUDE]
    assert events[-1].type == "response.completed"
    assert (events[-1].model_extra or {})["utilityguard"]["decision"] == "answer"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == ANSWER
    for e in events:
        dumped = json.dumps(e.model_dump(mode="json"))
        assert '"token"' not in dumped, e.type


def test_the_upstream_rejecting_include_gets_the_request_as_sent(client: openai.OpenAI,
                                                                 fake: Any) -> None:
    raw = client.responses.with_raw_response.create(model="fake-model", input="strict q")
    mine = fake.requests[fake.test_start:]
    assert [r["body"].get("include") for r in mine] == [[LOGPROBS_INCLUDE], None]
    assert raw.headers["x-utilityguard-confidence"] == "none"  # no signal: refused
    assert raw.headers["x-utilityguard-decision"] == "refuse"


@pytest.fixture
def gated() -> Iterator[tuple[GatedUpstream, Served]]:
    fake = GatedUpstream()
    served = Served(fake.app())
    fake.released.set()
    yield fake, served
    served.stop()


def test_a_shadow_stream_relayed_early_carries_no_logprobs(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url, mode="shadow"))
    raw = client.responses.with_raw_response.create(model="gated-model", input="unsure q",
                                                    stream=True)
    assert raw.headers["x-utilityguard-stream"] == "early"
    events = list(raw.parse())
    assert fake.requests[-1]["body"]["include"] == [LOGPROBS_INCLUDE]
    decision = (events[-1].model_extra or {})["utilityguard"]
    assert (decision["decision"], decision["mode"]) == ("refuse", "shadow")
    assert decision["confidence"] == pytest.approx(math.exp(-2.0))
    for e in events:
        assert '"token"' not in json.dumps(e.model_dump(mode="json")), e.type


def test_a_cheap_stream_is_sent_as_the_client_sent_it(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url))
    events = list(client.responses.create(model="gated-model", input="cheap", stream=True))
    assert "include" not in fake.requests[-1]["body"]
    assert (events[-1].model_extra or {})["utilityguard"]["decision"] == "answer"
