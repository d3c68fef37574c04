"""Real servers on 127.0.0.1 for the proxy tests: a fake OpenAI upstream and the proxy.

Both run under uvicorn in a background thread on a free port and stop at teardown. The fake
upstream is deterministic and records every request it receives (body and headers) for the
tests to inspect. What it answers is a :class:`Scenario`, made from the scenario words of the
last user message through the one explicit map :data:`SCENARIO_WORDS`: whole words only
(``unsure`` is its own entry, not ``sure`` inside a longer word; ``leak-sure`` holds ``leak``
and ``sure``), so a question that merely contains "pressure" or "sleeping" gets the default
scenario. The words and what they set are listed in :data:`SCENARIO_WORDS`; ``dose`` /
``cheap`` set the fake cost (:class:`KeywordCost`: L = 20 / 0.5; default 4). A P(True) call
(``Question: ... Proposed answer: ...``) gets a one-token verdict (:meth:`FakeUpstream._verdict`).
``/v1/responses`` answers the Responses API under the same scenarios
(:meth:`FakeUpstream.responses`).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openai
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from benchmarks.perf.servers import free_port, wait_until_serving
from guard.exceptions import ServerError
from guard.proxy import aio_transport, create_app
from guard.settings import Settings
from tests.guard.proxy.scripted import Script

# The proxy's upstream connections run on aiohttp when the fast-upstream extra is installed
# (it is in the dev extra), on httpx's own transport otherwise, which is what a plain
# `pip install utilityguard` runs. `.ci/run` runs this directory a second time with
# UTILITYGUARD_TEST_UPSTREAM_TRANSPORT=httpx so that both transports pass every proxy test
# (in-process proxies; a `serve` subprocess picks its transport by what is installed).
if os.environ.get("UTILITYGUARD_TEST_UPSTREAM_TRANSPORT") == "httpx":
    aio_transport.available = lambda: False

ANSWER = "The answer is 42."
#: What the fake Responses upstream reasons and calls (searched for in refused replies).
REASONING = "Reasoning: the dose is 400 mg"
TOOL_NAME = "lookup_dose"
TOOL_ARGS = '{"mg": 400}'
#: What the unsure choices after the first say (``mixed``), searched for in delivered replies.
MIXED_LEAK = "Take 400 mg of it"
CLIENT_KEY = "sk-client-SECRET-7f3a9"
UPSTREAM_KEY = "sk-upstream-SECRET-c41d2"
START_TIMEOUT = 15.0


@dataclass(frozen=True)
class Scenario:
    """What the fake upstreams do for one request (the defaults: an ordinary answer)."""

    #: the logprob of every answer token (default p = 0.905)
    logprob: float = -0.1
    #: the verbal confidence a ``Confidence: N%`` prompt gets, and the P(True) verdict
    confident: bool = True
    self_refuse: bool = False
    status: int | None = None  # answer with that HTTP error
    status_text: bool = False  # answer HTTP 418 with a plain-text body
    sleep_s: float = 0.0
    not_json: bool = False
    ignore_n: bool = False  # one choice whatever ``n`` is
    strict: bool = False  # reject a request that asks for logprobs (HTTP 400)
    tool: bool = False  # answer with a tool call / function call
    vary: bool = False  # samples disagree
    mixed: bool = False  # choice 0 as asked, every other choice unsure, saying MIXED_LEAK
    no_verdict: bool = False  # a P(True) verdict that is neither True nor False
    truncated: bool = False  # a Responses stream cut before its final event
    smuggle: bool = False  # Responses text deltas that the final object does not hold
    # the hostile upstream's scenarios
    echo: bool = False
    echo_500: bool = False
    drip: bool = False
    slow: bool = False
    leak: bool = False
    hostile_sure: bool = False
    huge_mib: int | None = None


#: The one map from a scenario word of the question to what it sets in the :class:`Scenario`.
SCENARIO_WORDS: dict[str, dict[str, Any]] = {
    "sure": {"logprob": -0.01, "hostile_sure": True},  # p = 0.99
    "unsure": {"logprob": -2.0, "confident": False},  # p = 0.135; verbal 10%, P(True) 0.05
    "self-refuse": {"self_refuse": True},
    "status-400": {"status": 400}, "status-429": {"status": 429}, "status-503": {"status": 503},
    "status-text": {"status_text": True},
    "sleep": {"sleep_s": 2.0},
    "not-json": {"not_json": True},
    "ignore-n": {"ignore_n": True},
    "strict": {"strict": True},
    "tool": {"tool": True},
    "vary": {"vary": True},
    "mixed": {"mixed": True},
    "no-verdict": {"no_verdict": True},
    "truncated": {"truncated": True},
    "smuggle": {"smuggle": True},
    "echo": {"echo": True}, "echo-500": {"echo": True, "echo_500": True},
    "drip": {"drip": True},
    "slow": {"slow": True},
    "leak": {"leak": True},
}
_WORD = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def scenario_words(text: str) -> set[str]:
    """The words of ``text`` and the parts of its hyphenated words (case kept).

    >>> sorted(scenario_words("unsure? leak-sure status-429, pressure"))
    ['429', 'leak', 'leak-sure', 'pressure', 'status', 'status-429', 'sure', 'unsure']
    """
    words = set(_WORD.findall(text))
    return words | {part for w in words for part in w.split("-")}


def scenario_of(text: str) -> Scenario:
    """The scenario ``text`` (the last user message) asks for, through :data:`SCENARIO_WORDS`
    (``huge-N``: a reply of N MiB)."""
    words = scenario_words(text)
    fields: dict[str, Any] = {}
    for word, sets in SCENARIO_WORDS.items():
        if word in words:
            fields.update(sets)
    if "unsure" in words:  # both words given: the unsure logprob stands
        fields.update(SCENARIO_WORDS["unsure"])
    if (m := re.search(r"\bhuge-(\d+)\b", text)) is not None:
        fields["huge_mib"] = int(m.group(1))
    return Scenario(**fields)


class KeywordCost:
    """The fake cost model: a text with the word ``dose`` -> 20, ``cheap`` -> 0.5, otherwise 4
    (whole words, as :func:`scenario_words` reads them)."""

    def predict(self, texts: Sequence[str]) -> Any:
        return np.array([self.cost(t) for t in texts])

    @staticmethod
    def cost(text: str) -> float:
        words = scenario_words(text)
        return 20.0 if "dose" in words else 0.5 if "cheap" in words else 4.0


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


@dataclass
class FakeUpstream:
    """An OpenAI-compatible upstream with scripted replies (see the module docstring)."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    #: ``len(requests)`` when the running test started (set by ``_mark_test_start``)
    test_start: int = 0

    def last_sent(self) -> dict[str, Any]:
        """The last upstream request made by the running test (never one of an earlier
        test's: fails when this test made none)."""
        mine = self.requests[self.test_start:]
        assert mine, "this test sent no request upstream"
        return mine[-1]

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/v1/models", self.models, methods=["GET"]),
            Route("/v1/embeddings", self.embeddings, methods=["POST"]),
            Route("/v1/responses", self.responses, methods=["POST"]),
            Route("/v1/models/{name}", self.model, methods=["GET"]),
        ])

    async def responses(self, request: Request) -> Response:
        """The Responses API: a reasoning item (:data:`REASONING`), the answer as output text
        (with logprobs when ``include`` asks for them) or, for ``tool``, a function call
        (:data:`TOOL_NAME`, :data:`TOOL_ARGS`); streamed as the Responses API's events
        (``truncated``: without the final ``response.completed``; ``smuggle``: the text
        deltas carry words the final response object does not hold); ``strict`` rejects a
        request that asks for the output-text logprobs (HTTP 400)."""
        body = json.loads(await request.body())
        self.requests.append({"path": "/v1/responses", "body": body,
                              "headers": dict(request.headers)})
        inp = body.get("input")
        sc = scenario_of(inp if isinstance(inp, str) else json.dumps(inp))
        if sc.strict and "message.output_text.logprobs" in (body.get("include") or []):
            return JSONResponse({"error": {"message": "include is not supported", "type":
                                           "invalid_request_error", "param": "include",
                                           "code": None}}, status_code=400)
        lp = sc.logprob
        with_lp = "message.output_text.logprobs" in (body.get("include") or [])
        tokens = [{"token": t, "logprob": lp, "bytes": [], "top_logprobs": []}
                  for t in ANSWER.split(" ")] if with_lp else None
        reasoning = {"type": "reasoning", "id": "rs_1", "summary": [
            {"type": "summary_text", "text": REASONING}]}
        part = {"type": "output_text", "text": ANSWER, "annotations": [],
                **({"logprobs": tokens} if tokens else {})}
        item: dict[str, Any] = {"type": "message", "id": "msg_1", "status": "completed",
                                "role": "assistant", "content": [part]}
        if sc.tool:
            item = {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                    "name": TOOL_NAME, "arguments": TOOL_ARGS, "status": "completed"}
        done = {"id": "resp_fake", "object": "response", "created_at": 1700000000,
                "model": body.get("model", "m"), "status": "completed",
                "output": [reasoning, item], "metadata": {"hint": ANSWER},
                "usage": {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10}}
        if not body.get("stream"):
            return JSONResponse(done)
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {**done, "status": "in_progress",
                                                      "output": []}},
            {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
            {"type": "response.output_item.added", "output_index": 1,
             "item": {**item, "content": []} if "content" in item else item}]
        if "content" in item:
            ids = {"item_id": "msg_1", "output_index": 1, "content_index": 0}
            events.append({"type": "response.content_part.added", **ids,
                           "part": {**part, "text": ""}})
            for k, word in enumerate(ANSWER.split(" ")):
                smuggled = "SMUGGLED " if k == 0 and sc.smuggle else ""
                events.append({"type": "response.output_text.delta", **ids,
                               "delta": smuggled + (word if k == 0 else " " + word),
                               "logprobs": [tokens[k]] if tokens else []})
            events.append({"type": "response.output_text.done", **ids, "text": ANSWER})
            events.append({"type": "response.content_part.done", **ids, "part": part})
        events.append({"type": "response.output_item.done", "output_index": 1, "item": item})
        if not sc.truncated:  # a stream cut before its final event
            events.append({"type": "response.completed", "response": done})
        raw = "".join(f"event: {e['type']}\ndata: "
                      + json.dumps({**e, "sequence_number": i}) + "\n\n"
                      for i, e in enumerate(events))
        return Response(raw.encode(), media_type="text/event-stream")

    async def embeddings(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append({"path": "/v1/embeddings", "body": body,
                              "headers": dict(request.headers)})
        return JSONResponse({"object": "list", "model": body.get("model"), "data": [
            {"object": "embedding", "index": 0, "embedding": [0.25, -0.5, 1.0]}],
            "usage": {"prompt_tokens": 2, "total_tokens": 2}})

    async def models(self, request: Request) -> Response:
        self.requests.append({"path": "/v1/models", "headers": dict(request.headers)})
        return JSONResponse({"object": "list", "data": [
            {"id": "fake-model", "object": "model", "created": 0, "owned_by": "tests"}]})

    async def model(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name != "fake-model":
            return JSONResponse({"error": {"message": f"no model {name}", "type":
                                           "invalid_request_error", "param": None,
                                           "code": "model_not_found"}}, status_code=404)
        return JSONResponse({"id": name, "object": "model", "created": 0, "owned_by": "tests"})

    def _content(self, sc: Scenario, body: dict[str, Any], i: int) -> str:
        if sc.self_refuse:
            return "I cannot answer that question."
        text = ANSWER if not sc.vary or i == 0 else f"The answer is {40 + 7 * i}."
        system = " ".join(str(m.get("content")) for m in body["messages"]
                          if isinstance(m, dict) and m.get("role") == "system")
        if "Confidence: N%" in system:
            text += "\nConfidence: " + ("95%" if sc.confident else "10%")
        return text

    @staticmethod
    def _verdict(sc: Scenario) -> dict[str, Any]:
        """The answer to a P(True) call: True with P(True) 0.9, or 0.05 when the question
        shown is ``unsure``; ``no-verdict``: neither True nor False among the top tokens."""
        p = 0.9 if sc.confident else 0.05
        alts = ([{"token": "Maybe", "logprob": -0.1}] if sc.no_verdict else
                [{"token": "True", "logprob": math.log(p)},
                 {"token": "False", "logprob": math.log(1 - p)}])
        return {"index": 0, "message": {"role": "assistant", "content": alts[0]["token"]},
                "logprobs": {"content": [{**alts[0], "top_logprobs": alts}]},
                "finish_reason": "length"}

    def _choice(self, question: str, body: dict[str, Any], i: int) -> dict[str, Any]:
        sc = scenario_of(question)
        if question.startswith("Question: ") and "\nProposed answer: " in question:
            return self._verdict(sc)
        content = self._content(sc, body, i)
        lp = sc.logprob
        if sc.mixed and i > 0:  # a confident choice 0, unsure others that leak
            content, lp = f"{MIXED_LEAK} (choice {i})", -3.0
        logprobs = None
        if body.get("logprobs"):
            logprobs = {"content": [{"token": t, "logprob": lp, "bytes": None,
                                     "top_logprobs": []} for t in content.split(" ")]}
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if sc.mixed and i > 0:
            message["reasoning_content"] = MIXED_LEAK
        if sc.tool:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "lookup", "arguments": '{"q": "42"}'}}]}
        return {"index": i, "message": message, "logprobs": logprobs,
                "finish_reason": "tool_calls" if sc.tool else "stop"}

    async def chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append({"path": "/v1/chat/completions", "body": body,
                              "headers": dict(request.headers)})
        q = _last_user(body)
        sc = scenario_of(q)
        if (code := sc.status) is not None:
            return JSONResponse({"error": {"message": f"scripted {code}", "type": "test",
                                           "param": None, "code": f"c{code}"}},
                                status_code=code, headers={"retry-after": "7"})
        if sc.strict and "logprobs" in body:
            return JSONResponse({"error": {"message": "logprobs are not supported", "type":
                                           "invalid_request_error", "param": "logprobs",
                                           "code": None}}, status_code=400)
        if sc.status_text:
            return Response("plain failure", status_code=418)
        if sc.sleep_s:
            await asyncio.sleep(sc.sleep_s)
        if sc.not_json:
            return Response(b"<html>oops</html>", media_type="text/html")
        n = 1 if sc.ignore_n else int(body.get("n") or 1)
        choices = [self._choice(q, body, i) for i in range(n)]
        head = {"id": "chatcmpl-fake", "created": 1700000000, "model": body.get("model", "m"),
                "system_fingerprint": "fp_fake"}
        usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
        if not body.get("stream"):
            return JSONResponse({**head, "object": "chat.completion", "choices": choices,
                                 "usage": usage, "x_extra": "kept"})
        return Response(self._sse(head, choices, body, usage), media_type="text/event-stream")

    @staticmethod
    def _sse(head: dict[str, Any], choices: list[dict[str, Any]], body: dict[str, Any],
             usage: dict[str, Any]) -> bytes:
        def chunk(index: int, delta: dict[str, Any], lp: Any = None, finish: Any = None
                  ) -> str:
            return "data: " + json.dumps({**head, "object": "chat.completion.chunk", "choices": [
                {"index": index, "delta": delta, "logprobs": lp, "finish_reason": finish}]}
            ) + "\n\n"

        out = []
        for ch in choices:
            i, msg = ch["index"], ch["message"]
            out.append(chunk(i, {"role": "assistant", "content": ""}))
            tokens = ch["logprobs"]["content"] if ch["logprobs"] else None
            if msg.get("tool_calls"):
                out.append(chunk(i, {"tool_calls": [{"index": 0, **msg["tool_calls"][0]}]},
                                 {"content": tokens} if tokens else None))
            for k, word in enumerate((msg["content"] or "").split(" ") if msg["content"] else []):
                piece = word if k == 0 else " " + word
                lp = {"content": [tokens[k]]} if tokens else None
                out.append(chunk(i, {"content": piece}, lp))
            out.append(chunk(i, {}, finish=ch["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append("data: " + json.dumps({**head, "object": "chat.completion.chunk",
                                              "choices": [], "usage": usage}) + "\n\n")
        out.append(": keep-alive comment\n\ndata: [DONE]\n\n")
        return "".join(out).encode()


class Served:
    """An ASGI app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_config=None, access_log=False, ws="none",
                                lifespan="on", http="h11", loop="asyncio",
                                timeout_graceful_shutdown=5)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(START_TIMEOUT)
        self.sock.close()
        if self.thread.is_alive():
            raise RuntimeError("the server did not stop")


@pytest.fixture(scope="session", autouse=True)
def _clean_environment() -> Iterator[None]:
    """No UTILITYGUARD_* variable of the developer's shell leaks into the proxies under test."""
    with pytest.MonkeyPatch.context() as mp:
        for name in [n for n in os.environ if n.upper().startswith("UTILITYGUARD_")]:
            mp.delenv(name)
        yield


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[Script, Served]]:
    """An upstream that replies as each test scripts it (:mod:`tests.guard.proxy.scripted`),
    one per test module."""
    script = Script()
    served = Served(script.app())
    yield script, served
    served.stop()


@pytest.fixture(scope="session")
def upstream() -> Iterator[tuple[FakeUpstream, Served]]:
    fake = FakeUpstream()
    served = Served(fake.app())
    yield fake, served
    served.stop()


@pytest.fixture(scope="session")
def fake(upstream: tuple[FakeUpstream, Served]) -> FakeUpstream:
    return upstream[0]


@pytest.fixture(autouse=True)
def _mark_test_start(request: pytest.FixtureRequest) -> None:
    """Tests that read the fake upstream's requests see only their own."""
    if "fake" in request.fixturenames:
        fake_upstream: FakeUpstream = request.getfixturevalue("fake")
        fake_upstream.test_start = len(fake_upstream.requests)


def proxy_settings(upstream_url: str, **overrides: Any) -> Settings:
    # the bare rule unless a test names a policy: these tests check the rule's arithmetic
    values: dict[str, Any] = {"upstream": upstream_url + "/v1", "read_timeout": 1.0,
                              "connect_timeout": 1.0, "policy": "none", **overrides}
    return Settings(_env_file=None, **values)


@pytest.fixture
def start_proxy(upstream: tuple[FakeUpstream, Served]) -> Iterator[Callable[..., Served]]:
    """Start a proxy with settings overrides; every one started is stopped at teardown."""
    started: list[Served] = []

    def start(upstream_url: str | None = None, *, cost_model: Any = None,
              **overrides: Any) -> Served:
        # a fake cost model prices keywords: every sentence priced (no request detector)
        settings = proxy_settings(upstream_url or upstream[1].url,
                                  **{"request_detector": "none", **overrides})
        served = Served(create_app(settings, cost_model=cost_model or KeywordCost()))
        started.append(served)
        return served

    yield start
    for served in started:
        if served.thread.is_alive():
            served.stop()


@pytest.fixture(scope="session")
def proxy(upstream: tuple[FakeUpstream, Served]) -> Iterator[Served]:
    """The shared proxy: logprob confidence, C_R = 2, enforce, no auth, no audit log."""
    served = Served(create_app(proxy_settings(upstream[1].url, request_detector="none"),
                               cost_model=KeywordCost()))
    yield served
    served.stop()


@pytest.fixture(scope="session")
def overriding_client(upstream: tuple[FakeUpstream, Served]) -> Iterator[openai.OpenAI]:
    """A client of a proxy like the shared one, whose operator allows client overrides."""
    served = Served(create_app(proxy_settings(upstream[1].url, allow_client_overrides=True),
                               cost_model=KeywordCost()))
    c = openai_client(served)
    yield c
    c.close()
    served.stop()


#: Every client :func:`openai_client` made (see :func:`_close_the_tests_own_clients`).
_MADE: list[openai.OpenAI] = []


def openai_client(served: Served, api_key: str = CLIENT_KEY, **kwargs: Any) -> openai.OpenAI:
    """The official sync client of ``served``; one a test makes is closed when the test ends
    (one a fixture makes, by the fixture)."""
    c = openai.OpenAI(base_url=served.url + "/v1", api_key=api_key, max_retries=0,
                      timeout=10.0, **kwargs)
    _MADE.append(c)
    return c


@pytest.fixture(autouse=True)
def _close_the_tests_own_clients() -> Iterator[None]:
    """Close the clients the test made with :func:`openai_client` when it ends. A client left
    to the garbage collector keeps its connection's socket open until a collection that may
    run during a later test, where the socket's ResourceWarning is an error of that test
    (CI once failed ``test_wrapped_parity`` so). Fixtures (module or session scope) are set up
    before this one, so the clients they make are theirs to close."""
    start = len(_MADE)
    yield
    for c in _MADE[start:]:
        c.close()
    del _MADE[start:]


@pytest.fixture(scope="session")
def client(proxy: Served) -> Iterator[openai.OpenAI]:
    """The official sync client pointed at the shared proxy."""
    c = openai_client(proxy)
    yield c
    c.close()


@pytest.fixture
def make_client() -> Iterator[Callable[..., openai.OpenAI]]:
    """A factory of sync clients for proxies a test starts itself (closed at teardown)."""
    made: list[openai.OpenAI] = []

    def make(served: Served, api_key: str = CLIENT_KEY, **kwargs: Any) -> openai.OpenAI:
        c = openai_client(served, api_key, **kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def async_client(proxy: Served) -> openai.AsyncOpenAI:
    """The official async client pointed at the shared proxy (one per test: one event loop)."""
    return openai.AsyncOpenAI(base_url=proxy.url + "/v1", api_key=CLIENT_KEY, max_retries=0,
                              timeout=10.0)


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    """Arguments for ``chat.completions.create`` asking ``question``."""
    return {"model": "fake-model", "messages": [{"role": "user", "content": question}],
            **kwargs}


@pytest.fixture(scope="session")
def chat() -> Callable[..., dict[str, Any]]:
    return ask


@dataclass
class HostileUpstream:
    """A misbehaving OpenAI-compatible upstream, served for real on 127.0.0.1.

    Keywords in the last user message choose the attack: ``leak`` (an answer hidden in every
    field, :class:`HostileAnswer`; ``leak-sure`` with confident logprobs), ``drip`` (a 200
    that sends one byte every 0.2 s, for at most 20 s), ``huge-N`` (a reply of N MB, JSON or
    SSE), ``echo`` (HTTP 401 / 500 whose body and headers echo the ``Authorization`` header it
    received), ``slow`` (answers after 5 s; records ``"disconnected"`` when the proxy hung up
    first, else ``"finished"``).
    ``GET`` on any path answers ``{"path": ...}`` and is recorded (path traversal tests).
    """

    hostile: Any
    requests: list[dict[str, Any]] = field(default_factory=list)
    slow_outcomes: list[str] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/{path:path}", self.get, methods=["GET"]),
        ])

    async def get(self, request: Request) -> Response:
        self.requests.append({"path": request.url.path, "raw_path": request.scope["raw_path"],
                              "headers": dict(request.headers)})
        if "echo" in request.url.path:
            return JSONResponse({"error": {"message": "bad key " + request.headers.get(
                "authorization", "")}}, status_code=401)
        return JSONResponse({"object": "model", "id": request.url.path, "path":
                             request.url.path})

    async def chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append({"path": request.url.path, "body": body,
                              "headers": dict(request.headers)})
        sc = scenario_of(_last_user(body))
        stream = bool(body.get("stream"))
        n = int(body.get("n") or 1)
        if sc.echo:
            auth = request.headers.get("authorization", "")
            status = 500 if sc.echo_500 else 401
            return JSONResponse({"error": {"message": f"invalid key: {auth}", "type": "auth",
                                           "param": None, "code": None, "echo": auth}},
                                status_code=status, headers={"x-echo": auth,
                                                             "retry-after": auth})
        if sc.drip:
            async def drip() -> Any:
                for _ in range(100):
                    yield b" "
                    await asyncio.sleep(0.2)
            return StreamingResponse(drip(), media_type="application/json")
        if sc.slow:
            for _ in range(50):
                await asyncio.sleep(0.1)
                if await request.is_disconnected():
                    self.slow_outcomes.append("disconnected")
                    return Response(status_code=499)
            self.slow_outcomes.append("finished")
        if sc.huge_mib is not None:
            text = "x" * (sc.huge_mib * 1024 * 1024)
            reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                     "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                  "message": {"role": "assistant", "content": text}}]}
            if stream:
                return Response(b"data: " + json.dumps({**reply, "object":
                                "chat.completion.chunk", "choices": [{"index": 0, "delta":
                                {"content": text}}]}).encode() + b"\n\ndata: [DONE]\n\n",
                                media_type="text/event-stream")
            return JSONResponse(reply)
        logprob = -0.001 if sc.hostile_sure else -3.0
        if sc.leak and stream:
            events = self.hostile.chunks(logprob=logprob, n=max(n, 1))
            raw = "".join("data: " + json.dumps(e) + "\n\n" for e in events)
            return Response((raw + "data: [DONE]\n\n").encode(),
                            media_type="text/event-stream")
        if sc.leak:
            return JSONResponse(self.hostile.reply(logprob=logprob, n=max(n, 1)))
        reply = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": i, "finish_reason": "stop",
                              "logprobs": self.hostile.logprobs("Paris", logprob),
                              "message": {"role": "assistant", "content": "Paris"}}
                             for i in range(n)]}
        return JSONResponse(reply)


@pytest.fixture(scope="session")
def hostile_upstream(hostile: Any) -> Iterator[tuple[HostileUpstream, Served]]:
    """The hostile upstream (see :class:`HostileUpstream`), one for the session."""
    fake = HostileUpstream(hostile)
    served = Served(fake.app())
    yield fake, served
    served.stop()


class ServeProcess:
    """``utilityguard serve`` as a process on 127.0.0.1 (see the ``serve_process`` fixture)."""

    def __init__(self, args: Sequence[str], env: dict[str, str], cwd: str,
                 timeout: float, bare: bool = True) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # the bare rule unless the test names a policy (as proxy_settings does) or asks for
        # serve's own default (bare=False: the shipped default policy)
        named = "--policy" in args or "--config" in args
        policy = ["--policy", "none"] if bare and not named else []
        cmd = [sys.executable, "-m", "guard.cli", "serve", "--port", str(self.port), *policy,
               *args]
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.output = ""
        try:
            wait_until_serving(self.url + "/healthz", self.proc, timeout=timeout, poll=0.1)
        except ServerError as exc:
            if self.proc.returncode is None:
                self.proc.kill()
            pytest.fail(f"utilityguard serve did not start: {exc}\n"
                        f"{self.proc.communicate()[0].decode()}")

    def stop(self, timeout: float = 60.0) -> str:
        """SIGTERM, wait, and return everything the process printed (idempotent)."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            self.output = self.proc.communicate(timeout=timeout)[0].decode()
        return self.output


@pytest.fixture
def serve_process(tmp_path: Any) -> Iterator[Callable[..., ServeProcess]]:
    """A factory ``serve_process(args, env=None, timeout=30, bare=True)`` starting
    ``utilityguard serve ARGS --port FREE`` (with ``--policy none`` unless ARGS name a policy
    or a config, or ``bare=False``) and waiting until /healthz answers; ``env`` defaults to
    this process's environment without ``UTILITYGUARD_*``. Every one started is stopped at
    teardown."""
    started: list[ServeProcess] = []

    def start(args: Sequence[str], env: dict[str, str] | None = None,
              timeout: float = 30.0, bare: bool = True) -> ServeProcess:
        if env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
        served = ServeProcess(args, env, str(tmp_path), timeout, bare)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()
