"""Readiness (/readyz checks the upstream, /healthz does not), the hint for an upstream URL
without /v1, and a client's own logprobs request passed on as sent."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from benchmarks.perf.servers import refusing_port


def test_readyz_when_the_upstream_answers(proxy: Any, upstream: Any) -> None:
    r = httpx.get(proxy.url + "/readyz", timeout=10)
    assert r.status_code == 200
    assert r.json() == {"status": "ready", "upstream": upstream[1].url + "/v1",
                        "detail": f"the upstream at {upstream[1].url}/v1 answered HTTP 200"}


def test_readyz_503_while_healthz_stays_ok(start_proxy: Any) -> None:
    with refusing_port() as port:  # held, so the proxy cannot draw it as its own port
        served = start_proxy(f"http://127.0.0.1:{port}")
        assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
        r = httpx.get(served.url + "/readyz", timeout=10)
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "unavailable"
    assert f"cannot reach the upstream at http://127.0.0.1:{port}/v1" in body["detail"]


def test_upstream_without_v1_gets_a_hint_on_404(start_proxy: Any, make_client: Any,
                                                chat: Any, upstream: Any) -> None:
    bare = upstream[1].url  # the fake upstream serves /v1/chat/completions only
    client = make_client(start_proxy(upstream=bare))
    with pytest.raises(openai.NotFoundError) as info:
        client.chat.completions.create(**chat("sure"))
    assert info.value.status_code == 404
    assert f"start the proxy with --upstream {bare}/v1" in info.value.message
    assert info.value.body["code"] == "upstream_not_found"


def test_no_hint_when_the_url_has_v1(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        client.models.retrieve("no-such-model")
    assert "--upstream" not in info.value.message


def test_client_logprobs_without_top_logprobs_as_upstream_sends(
        client: openai.OpenAI, chat: Any, upstream: Any, fake: Any) -> None:
    request = chat("a cheap question, sure", logprobs=True)
    via_proxy = client.chat.completions.create(**request)
    sent = fake.last_sent()["body"]
    assert sent["logprobs"] is True and "top_logprobs" not in sent
    with openai.OpenAI(base_url=upstream[1].url + "/v1", api_key="k", max_retries=0) as direct:
        expected = direct.chat.completions.create(**request)
    assert via_proxy.choices[0].logprobs == expected.choices[0].logprobs
    assert via_proxy.choices[0].logprobs is not None
