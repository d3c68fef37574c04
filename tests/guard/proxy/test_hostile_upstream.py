"""No request can take the proxy down: a hostile upstream (slow drip, huge replies, a slow
reply the client abandons) and a hostile client (a huge ``n``, a full pool) meet explicit,
configurable limits, each answered in the OpenAI envelope."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from guard.confidence.verbal import parse_verbal_confidence
from guard.refusal_detection import is_refusal


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": question}], **kwargs}


def test_n_is_bounded(client: openai.OpenAI, fake: Any) -> None:
    before = len(fake.requests)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(**ask("sure", n=10**9))
    assert (info.value.body["code"], info.value.body["param"]) == ("n_too_large", "n")
    assert len(fake.requests) == before, "nothing is sent upstream"
    assert len(client.chat.completions.create(**ask("sure", n=8)).choices) == 8  # the default


def test_no_extra_upstream_calls_without_consistency(client: openai.OpenAI, fake: Any) -> None:
    """An upstream that ignores ``n`` is not topped up with extra calls (logprobs signal)."""
    before = len(fake.requests)
    completion = client.chat.completions.create(**ask("sure ignore-n", n=5))
    assert len(fake.requests) - before == 1
    assert len(completion.choices) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_total_deadline_stops_a_slow_drip(start_proxy: Callable[..., Any],
                                          hostile_upstream: Any,
                                          make_client: Callable[..., openai.OpenAI],
                                          stream: bool) -> None:
    served = start_proxy(hostile_upstream[1].url, read_timeout=30.0, request_timeout=1.5)
    with pytest.raises(openai.APIStatusError) as info:
        make_client(served).chat.completions.create(**ask("drip", stream=stream))
    assert info.value.status_code == 504
    assert info.value.body["code"] == "upstream_timeout"
    # the drip sends a byte every 0.2 s, within the 30 s read timeout: the message names the
    # total deadline that stopped it (said by the error, not timed)
    assert "--request-timeout" in info.value.body["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_upstream_reply_size_is_bounded(start_proxy: Callable[..., Any], hostile_upstream: Any,
                                        make_client: Callable[..., openai.OpenAI],
                                        stream: bool) -> None:
    served = start_proxy(hostile_upstream[1].url, max_upstream_bytes=1024 * 1024)
    with pytest.raises(openai.APIStatusError) as info:
        make_client(served).chat.completions.create(**ask("huge-2", stream=stream))
    assert info.value.status_code == 502
    assert info.value.body["code"] == "upstream_reply_too_large"
    assert httpx.get(served.url + "/healthz", timeout=5).status_code == 200


def test_reply_under_the_limit_is_judged(start_proxy: Callable[..., Any],
                                         hostile_upstream: Any,
                                         make_client: Callable[..., openai.OpenAI]) -> None:
    """A 3 MB reply (under the 8 MB default) is read and decided (no signal: refused)."""
    served = start_proxy(hostile_upstream[1].url)
    raw = make_client(served).chat.completions.with_raw_response.create(**ask("huge-3"))
    assert raw.headers["x-utilityguard-decision"] == "refuse"


def test_refusal_detection_reads_the_opening_and_ending_only() -> None:
    long = "x" * 20_000_000
    assert is_refusal("I cannot answer. " + long)
    assert not is_refusal("Paris. " + long)
    assert is_refusal("It depends. " + long + " It is not possible to provide an exact answer.")


def test_client_disconnect_cancels_the_upstream_call(start_proxy: Callable[..., Any],
                                                     hostile_upstream: Any) -> None:
    fake = hostile_upstream[0]
    served = start_proxy(hostile_upstream[1].url, read_timeout=30.0)
    before = len(fake.slow_outcomes)
    with openai.OpenAI(base_url=served.url + "/v1", api_key="k", max_retries=0,
                       timeout=0.5) as c, pytest.raises(openai.APITimeoutError):
        c.chat.completions.create(**ask("slow"))
    deadline = time.monotonic() + 4.0  # the upstream would answer after 5 s
    while len(fake.slow_outcomes) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.slow_outcomes[before:] == ["disconnected"]


def test_pool_exhaustion_says_so(start_proxy: Callable[..., Any], hostile_upstream: Any,
                                 make_client: Callable[..., openai.OpenAI]) -> None:
    served = start_proxy(hostile_upstream[1].url, read_timeout=30.0, max_connections=1,
                         pool_timeout=0.3)
    busy = threading.Thread(target=lambda: httpx.post(
        served.url + "/v1/chat/completions", json=ask("slow"), timeout=10))
    busy.start()
    try:
        time.sleep(0.5)  # the one pooled connection is now held by the slow request
        with pytest.raises(openai.APIStatusError) as info:
            make_client(served).chat.completions.create(**ask("sure"))
        assert info.value.status_code == 504
        assert info.value.body["code"] == "upstream_pool_exhausted"
        assert "pool" in info.value.body["message"] and "exhausted" in info.value.body["message"]
    finally:
        busy.join(15)


def test_verbal_confidence_reads_a_bounded_tail() -> None:
    """The stated-confidence search reads the reply's end, however long the reply."""
    long = "x" * 8_000_000
    assert parse_verbal_confidence(long) is None
    found = parse_verbal_confidence(long + ". It is probably Lyon.")
    assert found is not None and found.value == 0.7
    line = parse_verbal_confidence(long + "\nConfidence: 85%")
    assert line is not None and line.value == 0.85
