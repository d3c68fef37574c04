"""Who controls the guard: a hostile client cannot switch enforcement off, reach upstream
paths outside ``/v1``, or obtain a key (the upstream echoes what it receives)."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import ValidationError

from guard.proxy.audit.schema import DECISIONS, SECURITY_EVENTS
from guard.proxy.audit.store import read_rows
from guard.proxy.redact import NoQueryStrings
from guard.settings import Settings

REFUSAL = "I cannot answer."
PROXY_KEY = "sk-proxy-HOSTILE-11111"
GRANTED_KEY = "sk-proxy-GRANTED-22222"
UPSTREAM_KEY = "sk-upstream-HOSTILE-99999"
#: Each header alone delivered a refused answer before overrides needed a grant.
WEAKENING = [
    pytest.param({"x-utilityguard-mode": "shadow"}, id="mode-shadow"),
    pytest.param({"x-utilityguard-cost": "0.000001"}, id="cost-tiny"),
    pytest.param({"x-utilityguard-refusal-cost": "1e308"}, id="refusal-cost-huge"),
    pytest.param({"x-utilityguard-confidence": "1"}, id="confidence"),
]


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": question}], **kwargs}


@pytest.mark.parametrize("headers", WEAKENING)
def test_overrides_are_off_by_default(client: openai.OpenAI, chat: Any, fake: Any,
                                      headers: dict[str, str],
                                      caplog: pytest.LogCaptureFixture) -> None:
    before = len(fake.requests)
    with caplog.at_level(logging.WARNING, logger="guard.proxy"), \
            pytest.raises(openai.PermissionDeniedError) as info:
        client.chat.completions.create(**chat("dose unsure"), extra_headers=headers)
    assert info.value.status_code == 403
    err = info.value.body
    assert set(err) == {"message", "type", "param", "code"}
    assert (err["type"], err["code"], err["param"]) == (
        "permission_error", "override_not_allowed", next(iter(headers)))
    assert len(fake.requests) == before, "a forbidden request must not reach the upstream"
    assert any("override_not_allowed" in r.getMessage() for r in caplog.records)
    # and without the header the same question is refused
    plain = client.chat.completions.create(**chat("dose unsure"))
    assert plain.choices[0].message.content == REFUSAL


def test_forbidden_override_is_audited(start_proxy: Callable[..., Any],
                                       make_client: Callable[..., openai.OpenAI], chat: Any,
                                       tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db)
    client = make_client(served)
    raw = client.chat.completions.with_raw_response.create(**chat("sure"))
    with pytest.raises(openai.PermissionDeniedError) as info:
        client.chat.completions.create(**chat("dose unsure"),
                                       extra_headers={"x-utilityguard-cost": "0.000001"})
    rid = info.value.response.headers["x-utilityguard-request-id"]
    served.stop()  # the audit writer flushes on shutdown
    events = list(read_rows(db, SECURITY_EVENTS))
    assert [(e["request_id"], e["kind"]) for e in events] == [(rid, "override_not_allowed")]
    assert "x-utilityguard-cost" in events[0]["detail"] and "0.000001" not in events[0]["detail"]
    decisions = [r["request_id"] for r in read_rows(db, DECISIONS)]
    assert decisions == [raw.headers["x-utilityguard-request-id"]]


def test_overrides_granted_to_named_keys_only(start_proxy: Callable[..., Any],
                                              make_client: Callable[..., openai.OpenAI],
                                              chat: Any) -> None:
    served = start_proxy(api_keys=[PROXY_KEY, GRANTED_KEY], override_api_keys=[GRANTED_KEY])
    shadow = {"x-utilityguard-mode": "shadow"}
    with pytest.raises(openai.PermissionDeniedError):
        make_client(served, api_key=PROXY_KEY).chat.completions.create(
            **chat("dose unsure"), extra_headers=shadow)
    raw = make_client(served, api_key=GRANTED_KEY).chat.completions.with_raw_response.create(
        **chat("dose unsure"), extra_headers=shadow)
    assert raw.headers["x-utilityguard-mode"] == "shadow"
    assert raw.parse().choices[0].message.content != REFUSAL


def test_override_keys_must_be_proxy_keys() -> None:
    with pytest.raises(ValidationError, match="among api_keys"):
        Settings(_env_file=None, api_keys=[PROXY_KEY], override_api_keys=["sk-other"])


def test_caller_confidence_header_is_not_an_override(start_proxy: Callable[..., Any],
                                                     make_client: Callable[..., openai.OpenAI],
                                                     chat: Any) -> None:
    """With --confidence caller the header is the configured source of p, not an override."""
    c = make_client(start_proxy(confidence="caller"))
    raw = c.chat.completions.with_raw_response.create(
        **chat("sure"), extra_headers={"x-utilityguard-confidence": "0.9"})
    assert raw.headers["x-utilityguard-decision"] == "answer"


def raw_get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (no client normalizes dot segments or escapes)."""
    host, port = url.removeprefix("http://").split(":")
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"
                  .encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.fixture
def hostile_proxy(start_proxy: Callable[..., Any], hostile_upstream: Any) -> Any:
    return start_proxy(hostile_upstream[1].url, upstream_api_key=UPSTREAM_KEY)


@pytest.mark.parametrize("path", [
    "/v1/models/..%2F..%2Fadmin", "/v1/models/..%2f..%2fadmin", "/v1/models/%2e%2e/%2e%2e/admin",
    "/v1/models/../../admin", "/models/../admin", "/v1/models/a/../../../admin",
    "/v1/models/a%2Fb", "/v1/models/.hidden", "/v1/models/a//b", "/v1/models/a\\..\\admin",
    "/v1/models/" + "a" * 300,
])
def test_model_path_traversal_is_rejected(hostile_proxy: Any, hostile_upstream: Any,
                                          path: str) -> None:
    fake = hostile_upstream[0]
    before = len(fake.requests)
    status, body = raw_get(hostile_proxy.url, path)
    assert status in (400, 404), body
    assert b'"error"' in body
    assert all(r["path"].startswith("/v1/models") for r in fake.requests[before:])
    assert len(fake.requests) == before


def test_valid_model_ids_reach_the_upstream(hostile_proxy: Any, hostile_upstream: Any) -> None:
    fake = hostile_upstream[0]
    for model in ("fake-model", "meta-llama/Llama-3.1-8B", "org/m:q4_0"):
        status, _ = raw_get(hostile_proxy.url, f"/v1/models/{model}")
        assert status == 200
        assert fake.requests[-1]["path"] == f"/v1/models/{model}"


@pytest.mark.parametrize("question, status", [("echo", 401), ("echo-500", 502)])
def test_upstream_key_echo_is_redacted(hostile_proxy: Any, make_client: Any, hostile_upstream: Any,
                                       question: str, status: int) -> None:
    raw = make_client(hostile_proxy).chat.completions.with_raw_response
    with pytest.raises(openai.APIStatusError) as info:
        raw.create(**ask(question))
    response = info.value.response
    assert response.status_code == status
    assert hostile_upstream[0].requests[-1]["headers"]["authorization"] == \
        f"Bearer {UPSTREAM_KEY}", "control: the upstream did receive the key it echoes"
    assert UPSTREAM_KEY.encode() not in response.content
    assert all(UPSTREAM_KEY not in v for v in response.headers.values())
    status_, body = raw_get(hostile_proxy.url, "/v1/models/echo")
    assert status_ == 401 and UPSTREAM_KEY.encode() not in body and b"*****" in body


def test_proxy_keys_never_reach_the_upstream(start_proxy: Callable[..., Any],
                                             hostile_upstream: Any,
                                             make_client: Callable[..., openai.OpenAI]) -> None:
    served = start_proxy(hostile_upstream[1].url, api_keys=[PROXY_KEY])
    with pytest.raises(openai.AuthenticationError) as info:
        make_client(served, api_key=PROXY_KEY).chat.completions.create(**ask("echo"))
    assert PROXY_KEY.encode() not in info.value.response.content
    assert "authorization" not in hostile_upstream[0].requests[-1]["headers"]
    make_client(served, api_key=PROXY_KEY).models.retrieve("fake-model")
    assert "authorization" not in hostile_upstream[0].requests[-1]["headers"]


def test_access_log_has_no_query_strings() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                               '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/v1/models?api_key=sk-abc", "1.1", 200),
                               None)
    assert NoQueryStrings().filter(record)
    assert record.getMessage() == '127.0.0.1:5 - "GET /v1/models HTTP/1.1" 200'


def test_access_log_filter_is_installed(proxy: Any) -> None:
    assert any(isinstance(f, NoQueryStrings)
               for f in logging.getLogger("uvicorn.access").filters)
