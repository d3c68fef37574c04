"""The app in-process: ``create_app(settings, transport=httpx.MockTransport(...))`` driven by
Starlette's TestClient, for upstream behaviours a real server would rarely produce."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from starlette.testclient import TestClient

from guard.calibration import Calibrator
from guard.exceptions import ConfigError
from guard.proxy import create_app
from guard.proxy.streaming import assemble, parse_sse
from guard.settings import Settings

Handler = Callable[[httpx.Request], httpx.Response]
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
COMPLETION = {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"},
                           "logprobs": {"content": [{"token": "Paris", "logprob": -0.01}]},
                           "finish_reason": "stop"}]}


class FixedCost:
    def __init__(self, cost: float = 4.0) -> None:
        self.cost = cost

    def predict(self, texts: Sequence[str]) -> Any:
        if any("boom" in t for t in texts):
            raise RuntimeError("the cost model broke")
        return np.full(len(texts), self.cost)


def app_client(handler: Handler, cost: float = 4.0, **settings: Any) -> TestClient:
    # the bare rule unless a test names a policy (these check the rule's arithmetic)
    s = Settings(_env_file=None, upstream="http://upstream.test/v1",
                 **{"policy": "none", "request_detector": "none", **settings})
    app = create_app(s, httpx.MockTransport(handler), cost_model=FixedCost(cost))
    return TestClient(app, raise_server_exceptions=False)


def sse(*events: Any, done: bool = True, sep: str = "\n") -> bytes:
    body = "".join(f"data: {json.dumps(e)}{sep}{sep}" for e in events)
    return (body + (f"data: [DONE]{sep}{sep}" if done else "")).encode()


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {**CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@pytest.mark.parametrize("content, status, message", [
    # the upstream's own words stay in the operator's log (issue 36: they may quote the
    # answer); the client is told the stream failed
    pytest.param(sse(chunk("Pa"), {"error": {"message": "model crashed"}}), 502,
                 "failed during the stream", id="error-event"),
    pytest.param(b"data: {broken\n\n", 502, "not JSON", id="broken-event"),
    pytest.param(b": only a comment\n\n", 502, "no stream events", id="no-events"),
])
def test_bad_upstream_streams(content: bytes, status: int, message: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type":
                                                              "text/event-stream"})

    with app_client(handler) as c:
        r = c.post("/v1/chat/completions", json={**REQUEST, "stream": True})
    assert r.status_code == status and message in r.json()["error"]["message"]
    assert b"model crashed" not in r.content


@pytest.mark.parametrize("content", [
    pytest.param(sse(chunk("Par"), chunk("is", "stop"), done=False), id="no-done"),
    pytest.param(sse(chunk("Par"), chunk("is", "stop"), sep="\r\n"), id="crlf"),
])
def test_tolerated_upstream_streams(content: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type":
                                                              "text/event-stream"})

    with app_client(handler, cost=0.5) as c:
        r = c.post("/v1/chat/completions", json={**REQUEST, "stream": True})
    assert r.status_code == 200 and r.text.endswith("data: [DONE]\n\n")
    assert assemble(parse_sse(r.content))["choices"][0]["message"]["content"] == "Paris"


def test_stream_with_legacy_logprobs() -> None:
    def with_lp(c: dict[str, Any], lp: float) -> dict[str, Any]:
        c["choices"][0]["logprobs"] = {"tokens": ["x"], "token_logprobs": [lp],
                                       "top_logprobs": [None], "text_offset": [0]}
        return c

    content = sse(with_lp(chunk("Par"), -0.1), with_lp(chunk("is", "stop"), -0.3))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type":
                                                              "text/event-stream"})

    with app_client(handler) as c:
        r = c.post("/v1/chat/completions", json={**REQUEST, "stream": True})
    assert r.headers["x-utilityguard-confidence"] == "0.818731"  # exp(-0.2)
    assert all(e["choices"][0]["logprobs"] is None for e in parse_sse(r.content))


def test_upstream_ignoring_stream_gets_a_stream() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=COMPLETION)

    with app_client(handler) as c:
        r = c.post("/v1/chat/completions", json={**REQUEST, "stream": True, "logprobs": True})
    assert r.headers["x-utilityguard-decision"] == "answer"
    events = parse_sse(r.content)
    assert [e["choices"][0]["delta"] for e in events] == [
        {"role": "assistant", "content": ""}, {"content": "Paris"}, {}]
    assert r.text.endswith("data: [DONE]\n\n")


@pytest.mark.parametrize("reply", [
    pytest.param([1, 2], id="json-list"),
    pytest.param({"object": "chat.completion"}, id="no-choices"),
])
def test_unusable_replies_are_502(reply: Any) -> None:
    with app_client(lambda request: httpx.Response(200, json=reply)) as c:
        r = c.post("/v1/chat/completions", json=REQUEST)
    assert r.status_code == 502 and r.json()["error"]["type"] == "upstream_error"


def test_unexpected_failure_is_500_envelope(caplog: pytest.LogCaptureFixture) -> None:
    boom = {**REQUEST, "messages": [{"role": "user", "content": "boom"}]}
    with app_client(lambda request: httpx.Response(200, json=COMPLETION)) as c:
        r = c.post("/v1/chat/completions", json=boom)
    assert r.status_code == 500
    assert r.json()["error"] == {"message": "internal error in the utilityguard proxy",
                                 "type": "server_error", "param": None,
                                 "code": "internal_error"}
    assert "the cost model broke" in caplog.text and "Traceback" not in r.text


def test_transport_errors_are_translated() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("peer closed connection", request=request)

    with app_client(handler) as c:
        r = c.post("/v1/chat/completions", json=REQUEST)
    err = r.json()["error"]
    assert r.status_code == 502 and err["code"] == "upstream_unavailable"
    assert "http://upstream.test/v1" in err["message"]


def test_no_upstream_fails_at_startup() -> None:
    app = create_app(Settings(_env_file=None), cost_model=FixedCost())
    with pytest.raises(ConfigError, match="no upstream"), TestClient(app):
        pass


def test_calibrator_must_match_the_confidence(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.random(60)
    Calibrator(signal="verbal").fit(x, rng.random(60) < x).save(tmp_path / "cal")
    settings = Settings(_env_file=None, upstream="http://u/v1", calibrator=tmp_path / "cal",
                        confidence="logprobs")
    with pytest.raises(ConfigError, match="reads 'verbal'"):
        create_app(settings, cost_model=FixedCost())
    for kind in ("verbal", "auto"):  # auto: the source the calibrator reads
        ok = settings.model_copy(update={"confidence": kind})
        assert create_app(ok, cost_model=FixedCost()).state.proxy.guard.calibrator is not None
