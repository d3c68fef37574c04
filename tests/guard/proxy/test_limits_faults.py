"""Limits and faults of issue 36 (item 5), each against a real proxy on 127.0.0.1.

A scripted upstream (a real server too, :mod:`tests.guard.proxy.scripted`) answers what a test
sets and records the raw bytes it receives, so that what the proxy forwards is checked as
bytes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.guard.proxy.conftest import Served
from tests.guard.proxy.scripted import Script, completion

ADMIN = "sk-admin-limits-1"


@pytest.fixture
def script(scripted: tuple[Script, Served]) -> Script:
    s = scripted[0]
    s.received.clear()
    s.reply(completion("Paris", [-0.01]))
    return s


@pytest.fixture
def guarded(start_proxy: Callable[..., Served], scripted: tuple[Script, Served],
            tmp_path: Path) -> Served:
    return start_proxy(scripted[1].url, audit_path=tmp_path / "audit.db")


def ask(question: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": question}], **extra}


def test_a_long_model_string_is_400_and_goes_nowhere(guarded: Served, script: Script,
                                                     tmp_path: Path) -> None:
    r = httpx.post(guarded.url + "/v1/chat/completions", json={**ask("hi"), "model": "m" * 100_000},
                   timeout=10)
    assert r.status_code == 400 and r.json()["error"]["param"] == "model", r.text
    assert script.received == []
    ok = httpx.post(guarded.url + "/v1/chat/completions", json={**ask("hi"), "model": "m" * 256},
                    timeout=10)
    assert ok.status_code == 200, ok.text  # the default bound is 256 characters
    guarded.stop()
    with sqlite3.connect(tmp_path / "audit.db") as db:
        models = [m for (m,) in db.execute("SELECT model FROM decisions")]
    assert models == ["m" * 256]


def test_the_model_bound_is_configurable(start_proxy: Callable[..., Served], script: Script,
                                         scripted: tuple[Script, Served]) -> None:
    served = start_proxy(scripted[1].url, max_model_chars=8)
    r = httpx.post(served.url + "/v1/chat/completions", json={**ask("hi"), "model": "m" * 9},
                   timeout=10)
    assert r.status_code == 400 and "--max-model-chars" in r.json()["error"]["message"]
    r = httpx.post(served.url + "/v1/chat/completions", json={**ask("hi"), "model": 7},
                   timeout=10)
    assert r.status_code == 400 and r.json()["error"]["param"] == "model"


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_standard_numbers_are_400_and_go_nowhere(guarded: Served, script: Script,
                                                     literal: bytes) -> None:
    body = b'{"model": "m", "temperature": ' + literal + \
        b', "messages": [{"role": "user", "content": "hi"}]}'
    r = httpx.post(guarded.url + "/v1/chat/completions", content=body, timeout=10,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json", r.text
    assert literal.decode().lstrip("-") in r.json()["error"]["message"]
    assert script.received == []


def test_lone_surrogates_reach_the_upstream_as_replacement_characters(
        guarded: Served, script: Script) -> None:
    body = (b'{"model": "m", "messages": [{"role": "user", "content": "a\\ud800b"}], '
            b'"metadata": {"k\\udfff": "v"}}')
    r = httpx.post(guarded.url + "/v1/chat/completions", content=body, timeout=10,
                   headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    [raw] = script.received
    assert not re.search(rb"\\u[dD][89a-fA-F]", raw)  # no surrogate escape
    sent = json.loads(raw.decode("utf-8"))  # strict UTF-8: no encoded surrogate either
    assert sent["messages"][0]["content"] == "a\ufffdb"
    assert sent["metadata"] == {"k\ufffd": "v"}


def test_a_lone_surrogate_with_the_smollm2_policy_is_priced_not_a_500(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served],
        script: Script) -> None:
    from cost_models import load_default

    served = start_proxy(scripted[1].url, policy="smollm2", cost_model=load_default())
    body = (b'{"model": "m", "messages": [{"role": "user", "content": '
            b'"What is the maximum daily dose of acetaminophen? \\ud800"}]}')
    r = httpx.post(served.url + "/v1/chat/completions", content=body, timeout=30,
                   headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.headers["x-utilityguard-policy"].startswith("smollm2@")


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("choices", [5, "x", [5], [None], {"0": {}}])
def test_a_malformed_upstream_reply_is_502_without_a_traceback(
        guarded: Served, script: Script, stream: bool, choices: Any) -> None:
    if stream:
        script.stream([json.dumps({"id": "c1", "object": "chat.completion.chunk",
                                   "choices": choices})])
    else:
        script.reply({"id": "c1", "object": "chat.completion", "choices": choices})
    r = httpx.post(guarded.url + "/v1/chat/completions", json=ask("hi", stream=stream),
                   timeout=10)
    if stream and r.status_code == 200:  # relayed early: the stream ends in an error event
        assert b'"upstream_error"' in r.content, r.text
    else:
        assert r.status_code == 502, r.text
        assert r.json()["error"]["code"] == "upstream_error"
    assert b"Traceback" not in r.content and b"TypeError" not in r.content


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_positive_logprob_is_malformed_not_p_1(guarded: Served, script: Script,
                                                 stream: bool) -> None:
    """+5 used to be clamped to 0, i.e. p = 1: the costliest question answered."""
    if stream:
        lp = {"content": [{"token": "P", "logprob": 5.0, "top_logprobs": []}]}
        script.stream([json.dumps({"id": "c1", "object": "chat.completion.chunk",
                                   "choices": [{"index": 0, "logprobs": lp,
                                                "delta": {"content": "Paris"}}]}),
                       json.dumps({"id": "c1", "object": "chat.completion.chunk",
                                   "choices": [{"index": 0, "delta": {},
                                                "finish_reason": "stop"}]})])
    else:
        script.reply(completion("Take 4 g.", [5.0, -0.01]))
    r = httpx.post(guarded.url + "/v1/chat/completions",
                   json=ask("What is the maximum daily dose of acetaminophen?", stream=stream),
                   timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["x-utilityguard-confidence"] == "none"
    assert r.headers["x-utilityguard-decision"] == "refuse"
    assert b"4 g" not in r.content and b"Paris" not in r.content


def test_upstream_nan_is_relayed_as_standard_json(guarded: Served, script: Script) -> None:
    reply = completion("Paris", [-0.01])
    raw = json.dumps(reply).replace('"created": 0', '"created": 0, "score": NaN')
    script.body, script.content_type = raw.encode(), "application/json"
    r = httpx.post(guarded.url + "/v1/chat/completions", json=ask("What is 2 + 2?"),
                   timeout=10)
    assert r.status_code == 200, r.text
    assert b"NaN" not in r.content
    json.loads(r.content, parse_constant=lambda name: pytest.fail(f"{name} in the reply"))


@pytest.mark.parametrize("policy", ["a\x00b", "x" * 5000, "\x1b[31m"])
def test_a_control_character_in_an_admin_reload_path_is_400(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served], policy: str) -> None:
    served = start_proxy(scripted[1].url, admin_api_key=ADMIN)
    r = httpx.post(served.url + "/admin/reload", json={"policy": policy}, timeout=10,
                   headers={"authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "policy", r.text


def test_feedback_on_an_unknown_id_is_answered_from_an_index(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served],
        tmp_path: Path) -> None:
    """A label for an id this process did not decide is looked up by the indexed
    ``request_id`` (it used to scan the whole log: 4.1 s at 738k rows). An audit log written
    before the index existed gets it when the proxy opens it."""
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:  # a log of an older version: decisions, no index
        conn.execute("CREATE TABLE decisions (id INTEGER PRIMARY KEY, request_id TEXT, "
                     "decision TEXT)")
        conn.executemany("INSERT INTO decisions (request_id, decision) VALUES (?, 'answer')",
                         ((f"{i:032x}",) for i in range(200_000)))
    served = start_proxy(scripted[1].url, audit_path=db)
    r = httpx.post(served.url + "/v1/feedback", json={"request_id": "f" * 32, "correct": True},
                   timeout=10)
    assert r.status_code == 404 and r.json()["error"]["param"] == "request_id"
    known = httpx.post(served.url + "/v1/feedback", timeout=10,
                       json={"request_id": f"{123_456:032x}", "correct": True})
    assert known.status_code == 200, known.text
    with sqlite3.connect(db) as conn:
        plan = " ".join(str(row) for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM decisions WHERE request_id = ? "
            "ORDER BY id DESC LIMIT 1", ("f" * 32,)))
    assert "SEARCH decisions USING" in plan and "INDEX decisions_request_id" in plan, plan
