"""Secrets and upstream words (issue 36, item 6), against a real proxy on 127.0.0.1.

A scripted upstream (:mod:`tests.guard.proxy.scripted`) writes a configured secret into its
reply in each form the hostile run got past the exact-string redaction: split across two
stream deltas, base64, upper-cased, spaced out, the ``Basic`` form of URL credentials. The
raw bytes the client receives are searched for the secret in that very form (and the reply
is decoded as JSON to show it stayed valid). An upstream error's text never reaches the
client; it reaches the operator's log with its secrets masked.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.guard.proxy.conftest import Served
from tests.guard.proxy.scripted import Script, chunk, completion

PROXY_KEY = "sk-proxy-SPLIT-8c1e0d42"
UPSTREAM_KEY = "sk-upstream-SPLIT-77a9f310"


def _proxy(start_proxy: Callable[..., Served], scripted: tuple[Script, Served],
           **extra: Any) -> Served:
    return start_proxy(scripted[1].url, api_keys=[PROXY_KEY], upstream_api_key=UPSTREAM_KEY,
                       **extra)


def _post(served: Served, **body: Any) -> httpx.Response:
    return httpx.post(served.url + "/v1/chat/completions", timeout=10,
                      headers={"authorization": f"Bearer {PROXY_KEY}"},
                      json={"model": "m", "messages": [{"role": "user", "content": "hi"}],
                            **body})


def _texts(raw: bytes) -> str:
    """The content the client assembles from a reply or a stream."""
    if raw.startswith(b"data:"):
        out = []
        for line in raw.decode().split("\n\n"):
            if line.startswith("data: {"):
                for ch in json.loads(line[6:]).get("choices") or []:
                    out.append((ch.get("delta") or {}).get("content") or "")
        return "".join(out)
    return str(json.loads(raw)["choices"][0]["message"]["content"])


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


FORMS = [
    pytest.param(lambda k: f"the key is {k.upper()}", lambda k: k.upper(), id="upper-cased"),
    pytest.param(lambda k: "the key is " + " ".join(k), lambda k: " ".join(k), id="spaced"),
    pytest.param(lambda k: "the key is\n" + "\n".join(k.split("-")),
                 lambda k: k.split("-")[-1], id="split-by-newlines"),
    pytest.param(lambda k: f"the key is {_b64('config=' + k)}",
                 lambda k: _b64("config=" + k)[12:-4], id="base64"),
    pytest.param(lambda k: f"the key is in Authorization: Basic {_b64('guard:' + k)}",
                 lambda k: _b64("guard:" + k)[8:-4], id="basic-url-credentials"),
]


@pytest.mark.parametrize("secret", [PROXY_KEY, UPSTREAM_KEY], ids=["proxy-key", "upstream-key"])
@pytest.mark.parametrize(("write", "form"), FORMS)
def test_a_secret_in_a_reply_is_masked_in_every_form(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served], secret: str,
        write: Callable[[str], str], form: Callable[[str], str]) -> None:
    served = _proxy(start_proxy, scripted, mode="shadow")  # every reply delivered
    scripted[0].reply(completion(write(secret), [-0.01]))
    r = _post(served)
    assert r.status_code == 200, r.text
    assert form(secret) in write(secret), "control: the form is in what the upstream sent"
    assert form(secret).encode() not in r.content
    assert secret.lower().encode() not in r.content.lower()
    text = _texts(r.content)  # the reply itself is delivered, valid JSON, masked in place
    assert text.startswith("the key is") and len(text) == len(write(secret))


@pytest.mark.parametrize("early", [True, False], ids=["relayed-as-it-arrives", "buffered"])
@pytest.mark.parametrize("secret", [PROXY_KEY, UPSTREAM_KEY], ids=["proxy-key", "upstream-key"])
def test_a_secret_split_across_stream_deltas_is_masked(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served], secret: str,
        early: bool) -> None:
    """Shadow mode relays a stream as it arrives (each delta its own event); enforce mode
    buffers it, decides, and replays the upstream's chunks."""
    served = _proxy(start_proxy, scripted, mode="shadow" if early else "enforce")
    cut1, cut2 = 5, 14
    parts = ["Your key: ", secret[:cut1], secret[cut1:cut2], secret[cut2:], " — keep it."]
    scripted[0].stream([*(chunk(p) for p in parts), chunk(None, finish="stop")])
    r = _post(served, stream=True, logprobs=True)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    text = _texts(r.content)
    assert text.startswith("Your key: ") and text.endswith(" — keep it.")
    assert secret not in text and secret[cut1:cut2] not in text
    assert len(text) == len("".join(parts))  # masked in place, nothing dropped


def test_an_ordinary_stream_passes_unchanged(start_proxy: Callable[..., Served],
                                              scripted: tuple[Script, Served]) -> None:
    """Control: words that merely begin like a key ("s", "sk") are held for an event, then
    delivered as they were."""
    served = _proxy(start_proxy, scripted, mode="shadow")
    parts = ["Ask ", "sk", "eptics: ", "s", "k", "y is blue."]
    scripted[0].stream([*(chunk(p) for p in parts), chunk(None, finish="stop")])
    r = _post(served, stream=True)
    assert _texts(r.content) == "".join(parts)


@pytest.mark.parametrize(("status", "seen"), [(400, 400), (422, 422), (500, 502)])
def test_an_upstream_error_text_stays_in_the_operator_log(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served], status: int,
        seen: int, caplog: pytest.LogCaptureFixture) -> None:
    """An upstream's error quoting the answer (and echoing the key it received) reaches the
    client as its status and a fixed message; the operator's log has the words, the key
    masked."""
    served = _proxy(start_proxy, scripted)
    scripted[0].fail(status, {"error": {
        "message": f"content filter: the reply 'Take 4 g of acetaminophen' was blocked "
                   f"(key {UPSTREAM_KEY})", "type": "invalid_request_error",
        "code": "content_filter"}})
    with caplog.at_level(logging.WARNING, logger="guard.proxy.errors"):
        r = _post(served)
    assert r.status_code == seen
    assert b"4 g" not in r.content and b"acetaminophen" not in r.content
    assert UPSTREAM_KEY.encode() not in r.content
    err = r.json()["error"]
    assert f"HTTP {status}" in err["message"]
    if status < 500:
        assert err["code"] == "content_filter"  # a plain token passes
    assert "Take 4 g of acetaminophen" in caplog.text  # the operator reads the words
    assert UPSTREAM_KEY not in caplog.text and UPSTREAM_KEY.lower() not in caplog.text.lower()


def test_an_upstream_stream_error_event_stays_in_the_operator_log(
        start_proxy: Callable[..., Served], scripted: tuple[Script, Served],
        caplog: pytest.LogCaptureFixture) -> None:
    served = _proxy(start_proxy, scripted)
    scripted[0].stream([chunk("Take"), json.dumps({"error": {
        "message": f"generation failed after 'Take 4 g' ({PROXY_KEY.upper()})"}})])
    with caplog.at_level(logging.WARNING):
        r = _post(served, stream=True)
    assert b"4 g" not in r.content and b"generation failed" not in r.content
    assert "generation failed after 'Take 4 g'" in caplog.text
    assert PROXY_KEY.lower() not in caplog.text.lower()
