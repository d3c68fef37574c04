"""Every error mapping, in the OpenAI envelope; auth; the proxy never crashes on bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.perf.servers import refusing_port

CLIENT_KEY = "sk-client-SECRET-7f3a9"
UPSTREAM_KEY = "sk-upstream-SECRET-c41d2"
ENVELOPE_KEYS = {"message", "type", "param", "code"}


def envelope(r: httpx.Response) -> dict[str, Any]:
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) >= ENVELOPE_KEYS, body
    err: dict[str, Any] = body["error"]
    return err


def post(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", timeout=10, **kwargs)


@pytest.mark.parametrize("question, status, code, said", [
    pytest.param("status-400", 400, "c400", "scripted 400", id="400-passthrough"),
    pytest.param("status-429", 429, "c429", "scripted 429", id="429-passthrough"),
    pytest.param("status-text", 418, "upstream_418", "plain failure", id="418-wrapped"),
    pytest.param("status-503", 502, "upstream_error", "scripted 503", id="503-to-502"),
    pytest.param("not-json", 502, "upstream_error", None, id="garbage-to-502"),
])
def test_upstream_status_mapping(client: openai.OpenAI, chat: Any, question: str, status: int,
                                 code: str, said: str | None,
                                 caplog: pytest.LogCaptureFixture) -> None:
    """The status and the upstream's code pass; its words go to the operator's log only
    (issue 36: an upstream's error text may quote the answer or echo a credential)."""
    with caplog.at_level("WARNING", logger="guard.proxy.errors"), \
            pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(**chat(question))
    err = info.value
    assert err.status_code == status and err.body["code"] == code
    assert set(err.body) >= ENVELOPE_KEYS
    if said is not None:
        assert said not in err.response.text
        assert said in caplog.text
        assert f"HTTP {status if status != 502 else 503}" in err.message
    else:
        assert "not JSON" in err.message  # the proxy's own words
    if status == 429:
        assert err.response.headers["retry-after"] == "7"


def test_upstream_rejecting_guard_fields_gets_the_request_as_sent(
        client: openai.OpenAI, chat: Any, fake: Any) -> None:
    before = len(fake.requests)
    raw = client.chat.completions.with_raw_response.create(**chat("strict sure"))
    assert [r["body"].get("logprobs") for r in fake.requests[before:]] == [True, None]
    assert raw.parse().choices[0].message.content == "I cannot answer."  # no signal: refuse
    assert raw.headers["x-utilityguard-confidence"] == "none"
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(**chat("strict sure", logprobs=True))  # client's own
    assert info.value.body["param"] == "logprobs"  # a plain token passes, the words do not
    assert "logprobs are not supported" not in info.value.response.text


def test_upstream_timeout_is_504(start_proxy: Any, make_client: Any, chat: Any) -> None:
    c = make_client(start_proxy(read_timeout=0.2))
    with pytest.raises(openai.APIStatusError) as info:
        c.chat.completions.create(**chat("sleep"))
    assert info.value.status_code == 504 and info.value.body["code"] == "upstream_timeout"


def test_connection_refused_is_502_naming_upstream(start_proxy: Any, make_client: Any,
                                                   chat: Any) -> None:
    with refusing_port() as port:  # held, so the proxy cannot draw it as its own port
        c = make_client(start_proxy(f"http://user:pw@127.0.0.1:{port}"))
        for request in (lambda: c.chat.completions.create(**chat("sure")), c.models.list):
            with pytest.raises(openai.InternalServerError) as info:
                request()
            assert info.value.status_code == 502
            assert f"http://127.0.0.1:{port}/v1" in info.value.message
            assert "pw" not in info.value.message
            assert info.value.body["code"] == "upstream_unavailable"


@pytest.mark.parametrize("content, param, code", [
    pytest.param(b"{not json", None, "invalid_json", id="invalid-json"),
    pytest.param(b"\xff\xfe", None, "invalid_json", id="not-utf8"),
    pytest.param(b"", None, "invalid_json", id="empty"),
    pytest.param(b"[1, 2]", None, "invalid_request", id="array"),
    pytest.param(b'{"model": "m"}', "messages", "invalid_request", id="no-messages"),
    pytest.param(b'{"messages": []}', "messages", "invalid_request", id="empty-messages"),
    pytest.param(b'{"messages": [1]}', "messages[0]", "invalid_request", id="bad-message"),
    pytest.param(b'{"messages": [{"role": "user"}], "stream": "yes"}', "stream",
                 "invalid_request", id="bad-stream"),
    pytest.param(b'{"messages": [{"role": "user"}], "n": 0}', "n", "invalid_request",
                 id="bad-n"),
    pytest.param(b'{"prompt": "legacy completion"}', "messages", "invalid_request",
                 id="completion-not-chat"),
])
def test_bad_requests_are_400(proxy: Any, content: bytes, param: str | None, code: str
                              ) -> None:
    r = post(proxy.url, content=content, headers={"content-type": "application/json"})
    assert r.status_code == 400
    err = envelope(r)
    assert (err["param"], err["code"], err["type"]) == (param, code, "invalid_request_error")


def test_body_too_large_is_413(start_proxy: Any, make_client: Any, chat: Any) -> None:
    served = start_proxy(max_body_bytes=2000)
    c = make_client(served)
    with pytest.raises(openai.APIStatusError) as info:
        c.chat.completions.create(**chat("sure " * 1000))
    assert info.value.status_code == 413 and info.value.body["code"] == "request_too_large"

    def chunks() -> Iterator[bytes]:  # no content-length: counted while reading
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}]}'

    r = post(served.url, content=chunks())
    assert r.status_code == 413 and envelope(r)["code"] == "request_too_large"
    assert c.chat.completions.create(**chat("sure")).choices  # small bodies still pass


@pytest.mark.parametrize("method, path, status, code", [
    pytest.param("GET", "/v1/chat/completions", 405, "method_not_allowed", id="405"),
    pytest.param("POST", "/v1/audio/speech", 404, "not_found", id="404"),
    pytest.param("GET", "/docs", 404, "not_found", id="no-docs"),
])
def test_routing_errors_in_envelope(proxy: Any, method: str, path: str, status: int,
                                    code: str) -> None:
    r = httpx.request(method, proxy.url + path, timeout=10)
    assert r.status_code == status and envelope(r)["code"] == code


def test_client_api_keys(start_proxy: Any, make_client: Any, chat: Any, fake: Any) -> None:
    served = start_proxy(api_keys=f"other-key,{CLIENT_KEY}")
    assert make_client(served).chat.completions.create(**chat("sure")).choices
    # the proxy key authenticates at the proxy; it is never forwarded to the provider
    assert "authorization" not in fake.last_sent()["headers"]
    wrong = make_client(served, api_key="sk-wrong")
    with pytest.raises(openai.AuthenticationError) as info:
        wrong.chat.completions.create(**chat("sure"))
    assert info.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()
    r = post(served.url, json=chat("sure"))
    assert r.status_code == 401 and envelope(r)["type"] == "invalid_request_error"
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200


def test_authorization_forwarded_or_replaced(client: openai.OpenAI, start_proxy: Any,
                                             make_client: Any, chat: Any, fake: Any) -> None:
    client.chat.completions.create(**chat("sure"))
    assert fake.last_sent()["headers"]["authorization"] == f"Bearer {CLIENT_KEY}"
    replaced = make_client(start_proxy(upstream_api_key=UPSTREAM_KEY))
    replaced.chat.completions.create(**chat("sure"))
    assert fake.last_sent()["headers"]["authorization"] == f"Bearer {UPSTREAM_KEY}"
    replaced.models.list()
    assert fake.last_sent()["headers"]["authorization"] == f"Bearer {UPSTREAM_KEY}"


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)
_message = st.dictionaries(st.sampled_from(["role", "content", "name"]),
                           st.sampled_from(["user", "system", "assistant"]) | _json, max_size=3)
_body = st.fixed_dictionaries({}, optional={
    "model": _json, "messages": st.lists(_message, max_size=3) | _json,
    "stream": st.booleans() | _json, "n": st.integers(-2, 3) | _json,
    "logprobs": st.booleans() | _json, "stream_options": _json, "temperature": _json,
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=st.binary(max_size=200) | _json.map(lambda v: json.dumps(v).encode())
       | _body.map(lambda v: json.dumps(v).encode()))
def test_garbage_never_crashes(proxy: Any, content: bytes) -> None:
    r = post(proxy.url, content=content, headers={"content-type": "application/json"})
    assert r.status_code in (200, 400), r.text
    if r.status_code == 400:
        envelope(r)
    else:
        assert r.headers["x-utilityguard-decision"]
