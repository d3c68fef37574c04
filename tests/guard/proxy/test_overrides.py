"""Per-request header overrides, shadow mode, and the four confidence sources."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

ANSWER = "The answer is 42."
REFUSAL = "I cannot answer."


@pytest.fixture
def client(overriding_client: openai.OpenAI) -> openai.OpenAI:
    """Here: a client of a proxy whose operator allows client overrides; without
    --allow-client-overrides every override header is refused (test_override_permissions.py).
    """
    return overriding_client


def create(client: openai.OpenAI, request: dict[str, Any], **headers: str) -> Any:
    return client.chat.completions.with_raw_response.create(**request, extra_headers=headers)


def test_shadow_header_delivers_answer_and_records_refusal(client: openai.OpenAI,
                                                           chat: Any) -> None:
    raw = create(client, chat("dose unsure"), **{"x-utilityguard-mode": "shadow"})
    assert raw.parse().choices[0].message.content == ANSWER
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert raw.headers["x-utilityguard-mode"] == "shadow"


def test_shadow_setting_and_enforce_header(start_proxy: Any, make_client: Any,
                                           chat: Any) -> None:
    c = make_client(start_proxy(mode="shadow", allow_client_overrides=True))
    assert c.chat.completions.create(**chat("dose unsure")).choices[0].message.content == ANSWER
    raw = create(c, chat("dose unsure", stream=True), **{"x-utilityguard-mode": "enforce"})
    assert "".join(ch.choices[0].delta.content or "" for ch in raw.parse()) == REFUSAL


@pytest.mark.parametrize("headers, decision, threshold", [
    pytest.param({}, "refuse", "0.4", id="default-c_r"),
    pytest.param({"x-utilityguard-refusal-cost": "4"}, "answer", "0", id="c_r-4"),
    pytest.param({"x-utilityguard-refusal-cost": "0"}, "refuse", "0.8", id="c_r-0"),
    pytest.param({"x-utilityguard-cost": "0.5"}, "answer", "-1", id="cheap-cost"),
    pytest.param({"x-utilityguard-cost": "100"}, "refuse", "0.970297", id="dear-cost"),
])
def test_cost_and_refusal_cost_headers(client: openai.OpenAI, chat: Any,
                                       headers: dict[str, str], decision: str,
                                       threshold: str) -> None:
    raw = create(client, chat("unsure"), **headers)  # L = 4, p = 0.135
    assert raw.headers["x-utilityguard-decision"] == decision
    assert raw.headers["x-utilityguard-threshold"] == threshold
    expected_cost = headers.get("x-utilityguard-cost", "4")
    assert raw.headers["x-utilityguard-cost"] == expected_cost


@pytest.mark.parametrize("name", ["x-utilityguard-c-r", "x-utilityguard-refusal-cost"])
def test_c_r_header_under_its_name_and_its_older_one(client: openai.OpenAI, chat: Any,
                                                     name: str) -> None:
    """C_R is set by the header that reports it (``x-utilityguard-c-r``) and still by its
    older name; sent under both it is refused (400), whichever the values."""
    raw = create(client, chat("unsure"), **{name: "4"})  # L = 4, p = 0.135
    assert raw.headers["x-utilityguard-decision"] == "answer"
    assert raw.headers["x-utilityguard-c-r"] == "4"
    with pytest.raises(openai.BadRequestError) as info:
        create(client, chat("unsure"), **{"x-utilityguard-c-r": "4",
                                           "x-utilityguard-refusal-cost": "4"})
    assert info.value.body["code"] == "invalid_header"


def test_c_r_header_needs_the_operators_grant(proxy: Any, make_client: Any, chat: Any) -> None:
    with pytest.raises(openai.PermissionDeniedError):  # the shared proxy grants none
        create(make_client(proxy), chat("unsure"), **{"x-utilityguard-c-r": "4"})


@pytest.mark.parametrize("name, value", [
    pytest.param("x-utilityguard-cost", "0", id="cost-zero"),
    pytest.param("x-utilityguard-cost", "abc", id="cost-text"),
    pytest.param("x-utilityguard-cost", "nan", id="cost-nan"),
    pytest.param("x-utilityguard-cost", "inf", id="cost-inf"),
    pytest.param("x-utilityguard-refusal-cost", "-1", id="c_r-negative"),
    pytest.param("x-utilityguard-c-r", "-1", id="c-r-negative"),
    pytest.param("x-utilityguard-mode", "loud", id="mode"),
    pytest.param("x-utilityguard-confidence", "1.5", id="confidence"),
])
def test_invalid_header_is_400(client: openai.OpenAI, chat: Any, name: str, value: str
                               ) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        create(client, chat("sure"), **{name: value})
    err = info.value.body
    assert err["param"] == name and err["code"] == "invalid_header"
    assert err["type"] == "invalid_request_error" and name in err["message"]


@pytest.mark.parametrize("confidence, decision, p", [
    pytest.param("0.95", "answer", "0.95", id="high"),
    pytest.param("0.2", "refuse", "0.2", id="low"),
    pytest.param(None, "refuse", "none", id="missing"),
])
def test_caller_confidence(start_proxy: Any, make_client: Any, chat: Any, fake: Any,
                           confidence: str | None, decision: str, p: str) -> None:
    c = make_client(start_proxy(confidence="caller"))
    headers = {} if confidence is None else {"x-utilityguard-confidence": confidence}
    raw = create(c, chat("dose"), **headers)
    assert (raw.headers["x-utilityguard-decision"], raw.headers["x-utilityguard-confidence"]) \
        == (decision, p)
    assert "logprobs" not in fake.last_sent()["body"]


def test_no_confidence_prior(start_proxy: Any, make_client: Any, chat: Any) -> None:
    c = make_client(start_proxy(confidence="caller", no_confidence=0.5))
    assert create(c, chat("sure")).headers["x-utilityguard-decision"] == "answer"  # 0.5 >= 0.4
    assert create(c, chat("dose")).headers["x-utilityguard-decision"] == "refuse"


@pytest.mark.parametrize("stream", [pytest.param(False, id="json"),
                                    pytest.param(True, id="stream")])
def test_verbal_confidence(start_proxy: Any, make_client: Any, chat: Any, fake: Any,
                           stream: bool) -> None:
    c = make_client(start_proxy(confidence="verbal"))

    def text(raw: Any) -> str:
        if stream:
            return "".join(ch.choices[0].delta.content or "" for ch in raw.parse())
        return str(raw.parse().choices[0].message.content)

    ok = create(c, chat("dose sure", stream=stream))
    assert (ok.headers["x-utilityguard-decision"], text(ok)) == ("answer", ANSWER)
    assert ok.headers["x-utilityguard-confidence"] == "0.95"
    system = fake.last_sent()["body"]["messages"][0]
    assert system["role"] == "system" and "Confidence: N%" in system["content"]
    refused = create(c, chat("dose unsure", stream=stream))
    assert (refused.headers["x-utilityguard-decision"], text(refused)) == ("refuse", REFUSAL)


@pytest.mark.parametrize("question, decision, calls", [
    pytest.param("dose sure", "answer", 1, id="agree"),
    pytest.param("dose vary", "refuse", 1, id="disagree"),
    pytest.param("dose ignore-n", "answer", 3, id="upstream-ignores-n"),
])
def test_consistency_confidence(start_proxy: Any, make_client: Any, chat: Any, fake: Any,
                                question: str, decision: str, calls: int) -> None:
    c = make_client(start_proxy(confidence="consistency", consistency_samples=3))
    before = len(fake.requests)
    raw = create(c, chat(question, temperature=0))
    completion = raw.parse()
    assert raw.headers["x-utilityguard-decision"] == decision
    assert len(completion.choices) == 1
    assert len(fake.requests) - before == calls
    sent = fake.requests[before]["body"]
    assert (sent["n"], sent["temperature"]) == (3, 0.7)


def test_consistency_stream_returns_one_choice(start_proxy: Any, chat: Any) -> None:
    served = start_proxy(confidence="consistency", consistency_samples=3)
    r = httpx.post(served.url + "/v1/chat/completions", json=chat("sure", stream=True),
                   timeout=10)
    assert r.headers["x-utilityguard-confidence"] == "1"
    assert '"index":1' not in r.text and r.text.endswith("data: [DONE]\n\n")
