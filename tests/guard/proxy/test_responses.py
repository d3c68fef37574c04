"""POST /v1/responses through the real proxy with the official client's ``responses.create``:
the same decision as chat completions; a refusal (plain or streamed) carries nothing of the
answer — its text, a function call, a reasoning item, logprobs, metadata."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from guard.decision_config import DEFAULT_REFUSAL_TEXT
from tests.guard.proxy.conftest import ANSWER, REASONING, TOOL_ARGS, TOOL_NAME

LOGPROBS = ["message.output_text.logprobs"]
#: Every piece of the fake upstream's answer a refused reply must not contain.
LEAKS = [ANSWER, "answer is", "42", TOOL_NAME, TOOL_ARGS, '\\"mg\\"', "400", REASONING,
         "Reasoning", "rs_1", "fc_1", "call_1", "msg_1", "hint", "metadata",
         "\"token\"", "-2.0", "top_logprobs"]


def _without_decision(raw: bytes) -> bytes:
    """The bytes of a body or SSE stream with the ``utilityguard`` objects taken out (their
    numbers, such as a threshold of 0.857142..., may contain digits of the answer)."""
    out = []
    for line in raw.decode().splitlines():
        if line.startswith("data: {") or line.startswith("{"):
            data = json.loads(line.removeprefix("data: "))
            data.pop("utilityguard", None)
            line = ("data: " if line.startswith("data:") else "") + json.dumps(data)
        out.append(line)
    return "\n".join(out).encode()


def _assert_no_leak(raw: bytes) -> None:
    clean = _without_decision(raw)
    for token in LEAKS:
        assert token.encode() not in clean, token
    assert b"reasoning" not in clean and b"function_call" not in clean


def test_answer_is_delivered_unchanged(client: openai.OpenAI, fake: Any) -> None:
    raw = client.responses.with_raw_response.create(
        model="fake-model", input="sure question", include=LOGPROBS)  # type: ignore[list-item]
    assert raw.headers["x-utilityguard-decision"] == "answer"
    # p from the output-text logprobs: every token at logprob -0.01
    assert float(raw.headers["x-utilityguard-confidence"]) == pytest.approx(0.990, abs=1e-3)
    response = raw.parse()
    assert response.output_text == ANSWER
    assert [item.type for item in response.output] == ["reasoning", "message"]
    decision = response.model_extra["utilityguard"]  # type: ignore[index]
    assert decision["decision"] == "answer" and decision["mode"] == "enforce"
    assert decision["request_id"] == raw.headers["x-utilityguard-request-id"]
    sent = fake.last_sent()
    assert sent["path"] == "/v1/responses"
    # forwarded as the client sent it: the client asked for the logprobs the guard reads
    assert sent["body"] == {"model": "fake-model", "input": "sure question",
                            "include": LOGPROBS}


def test_query_is_the_last_user_message(client: openai.OpenAI) -> None:
    # dose (L = 20, C_R = 2): threshold 18/21; a confident p = 0.99 still answers, and the
    # cost shows the question priced was the last user message, not the earlier one
    raw = client.responses.with_raw_response.create(model="fake-model", include=LOGPROBS,
                                                    input=[
        {"role": "user", "content": "cheap question"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "input_text", "text": "sure dose question"}]},
    ])  # type: ignore[list-item]
    assert float(raw.headers["x-utilityguard-cost"]) == 20.0
    assert float(raw.headers["x-utilityguard-threshold"]) == pytest.approx(18 / 21)
    assert raw.headers["x-utilityguard-decision"] == "answer"


@pytest.mark.parametrize("question", ["strict dose question", "dose tool question",
                                      "unsure dose question"])
def test_refusal_carries_nothing_of_the_answer(client: openai.OpenAI, fake: Any,
                                               question: str) -> None:
    # without logprobs (an upstream that rejects include, a function call) the no-confidence
    # rule refuses; "unsure" logprobs give p = 0.135
    raw = client.responses.with_raw_response.create(
        model="fake-model", input=question,
        include=LOGPROBS if "unsure" in question else [])  # type: ignore[list-item]
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    body = bytes(raw.http_response.read())
    _assert_no_leak(body)
    response = raw.parse()
    assert response.output_text == DEFAULT_REFUSAL_TEXT
    assert response.id == "resp_fake" and response.status == "completed"
    assert response.usage is not None  # the input's tokens, none of the refused output's
    assert (response.usage.input_tokens, response.usage.output_tokens,
            response.usage.total_tokens) == (5, 0, 5)
    assert response.model_extra["utilityguard"]["decision"] == "refuse"  # type: ignore[index]
    upstream_said = json.dumps(fake.last_sent()["body"])
    assert question in upstream_said  # the upstream was asked, and its answer dropped


def test_function_call_is_an_answer(start_proxy: Callable[..., Any],
                                    make_client: Callable[..., openai.OpenAI]) -> None:
    # no logprobs for a function call: the no-confidence rule decides ("answer" here)
    c = make_client(start_proxy(no_confidence="answer"))
    response = c.responses.create(model="fake-model", input="tool question")
    calls = [item for item in response.output if item.type == "function_call"]
    assert [(f.name, f.arguments) for f in calls] == [(TOOL_NAME, TOOL_ARGS)]  # type: ignore[union-attr]
    assert response.model_extra["utilityguard"]["confidence"] is None  # type: ignore[index]


def _stream(client: openai.OpenAI, question: str) -> tuple[Any, bytes]:
    raw = client.responses.with_raw_response.create(
        model="fake-model", input=question, include=LOGPROBS,  # type: ignore[list-item]
        stream=True)
    return raw.headers, bytes(raw.http_response.read())


def test_stream_answer_is_the_upstreams_events(client: openai.OpenAI, fake: Any) -> None:
    events = list(client.responses.create(model="fake-model", input="sure question",
                                          include=LOGPROBS, stream=True))  # type: ignore[list-item]
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == ANSWER
    assert [e.sequence_number for e in events] == list(range(len(events)))  # the upstream's
    final = events[-1]
    assert final.response.output_text == ANSWER  # type: ignore[union-attr]
    assert final.model_extra["utilityguard"]["decision"] == "answer"  # type: ignore[index]
    assert fake.last_sent()["body"]["stream"] is True


@pytest.mark.parametrize("question", ["unsure dose question", "dose tool question"])
def test_stream_refusal_carries_nothing_of_the_answer(client: openai.OpenAI,
                                                      question: str) -> None:
    headers, body = _stream(client, question)
    assert headers["x-utilityguard-decision"] == "refuse"
    _assert_no_leak(body)
    events = list(client.responses.create(model="fake-model", input=question,
                                          include=LOGPROBS, stream=True))  # type: ignore[list-item]
    assert [e.type for e in events] == [
        "response.created", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.completed"]
    assert [e.sequence_number for e in events] == list(range(8))
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == \
        DEFAULT_REFUSAL_TEXT
    assert events[-1].response.output_text == DEFAULT_REFUSAL_TEXT  # type: ignore[union-attr]
    assert events[-1].model_extra["utilityguard"]["decision"] == "refuse"  # type: ignore[index]


def test_the_upstream_really_sends_the_answer(start_proxy: Callable[..., Any],
                                              make_client: Callable[..., openai.OpenAI]) -> None:
    """The leak tests are not vacuous: in shadow mode the same requests deliver every piece
    the refusals must not contain."""
    c = make_client(start_proxy(mode="shadow"))
    plain = c.responses.with_raw_response.create(model="fake-model", input="dose tool question")
    assert plain.headers["x-utilityguard-decision"] == "refuse"
    streamed = _stream(c, "dose question")[1]
    for body in (bytes(plain.http_response.read()), streamed):
        assert REASONING.encode() in body and b"hint" in body
    assert TOOL_NAME.encode() in bytes(plain.http_response.read())
    assert b"42" in _without_decision(streamed)


def test_bad_request_never_reaches_the_upstream(client: openai.OpenAI, fake: Any) -> None:
    before = len(fake.requests)
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model="fake-model", input=[])
    assert info.value.body["param"] == "input"  # type: ignore[index]
    assert len(fake.requests) == before


def test_overrides_need_permission(client: openai.OpenAI, fake: Any) -> None:
    before = len(fake.requests)
    with pytest.raises(openai.PermissionDeniedError):
        client.responses.create(model="fake-model", input="dose question",
                                extra_headers={"x-utilityguard-mode": "shadow"})
    assert len(fake.requests) == before


def test_counted_as_responses_in_metrics(start_proxy: Callable[..., Any],
                                         make_client: Callable[..., openai.OpenAI]) -> None:
    served = start_proxy()
    make_client(served).responses.create(model="fake-model", input="unsure dose question")
    metrics = httpx.get(served.url + "/metrics", timeout=10.0).text
    assert 'utilityguard_requests_total{endpoint="responses",status="200"} 1.0' in metrics
    assert 'utilityguard_decisions_total{decision="refuse",mode="enforce"} 1.0' in metrics


@pytest.mark.parametrize(("question", "message", "absent"), [
    pytest.param("sure truncated question", "without a response.completed event",
                 ("42", "answer is"), id="no-final-event"),
    pytest.param("sure smuggle question", "does not hold", ("SMUGGLED", "42"),
                 id="deltas-differ-from-final-object"),
])
def test_a_stream_that_cannot_be_decided_delivers_nothing(
        client: openai.OpenAI, question: str, message: str, absent: tuple[str, ...]) -> None:
    """The decision is made on the stream's final response object. A stream that never says
    what the response was, or whose text deltas say something that object does not hold
    ("SMUGGLED"), is an upstream error (502), and none of its text reaches the client."""
    with pytest.raises(openai.APIStatusError) as info:
        list(client.responses.create(model="fake-model", input=question,
                                     include=LOGPROBS, stream=True))  # type: ignore[list-item]
    assert info.value.status_code == 502
    assert message in info.value.message
    # the message names the fake upstream, whose random port may hold "42": look past it
    said = re.sub(r"https?://\S+", "<upstream>", info.value.message)
    for token in absent:
        assert token not in said
