"""Streams relayed without waiting when the decision is known (every p answers, or shadow
mode), and buffered otherwise: real servers on 127.0.0.1, the official client, an upstream
that pauses after its first events until the test releases it (:mod:`tests.guard.proxy.gated`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.guard.proxy.conftest import CLIENT_KEY, UPSTREAM_KEY, Served
from tests.guard.proxy.gated import ANSWER, MAX_PAUSE, WORDS, GatedUpstream

WAIT = MAX_PAUSE  # the longest any test waits for an event that must happen
REFUSAL_TEXT = "I would rather not answer that."


@pytest.fixture
def gated() -> Iterator[tuple[GatedUpstream, Served]]:
    fake = GatedUpstream()
    served = Served(fake.app())
    yield fake, served
    fake.released.set()
    served.stop()


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    return {"model": "gated-model", "messages": [{"role": "user", "content": question}],
            "stream": True, **kwargs}


def decision_of(chunks: list[Any]) -> dict[str, Any]:
    """The ``utilityguard`` object of a stream: on its last chunk, and only there."""
    carrying = [i for i, c in enumerate(chunks) if (c.model_extra or {}).get("utilityguard")]
    assert carrying == [len(chunks) - 1]
    out: dict[str, Any] = chunks[-1].model_extra["utilityguard"]
    return out


def text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_cheap_question_streams_before_the_upstream_finishes(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """L = 0.5 <= C_R = 2: every p answers; the first chunks reach the client while the
    upstream is paused, the request goes upstream as the client sent it."""
    fake, up = gated
    client = make_client(start_proxy(up.url))
    raw = client.chat.completions.with_raw_response.create(**ask("a cheap question"))
    assert raw.headers["x-utilityguard-stream"] == "early"
    assert float(raw.headers["x-utilityguard-threshold"]) < 0
    assert "x-utilityguard-decision" not in raw.headers  # not known before the reply
    it = iter(raw.parse())
    first = [next(it), next(it)]  # the role chunk and the first word
    # the upstream marks its pause once the first word is written, which can be a moment after
    # the client has it (CI, 2026-12-03: the event was not yet set when asserted)
    assert fake.paused.wait(timeout=10.0) and not fake.finished.is_set()
    assert text_of(first) == WORDS[0]
    fake.released.set()
    chunks = first + list(it)
    assert text_of(chunks) == ANSWER
    decision = decision_of(chunks)
    assert decision["decision"] == "answer" and decision["mode"] == "enforce"
    assert decision["threshold"] < 0
    sent = fake.requests[-1]["body"]
    assert "logprobs" not in sent and "top_logprobs" not in sent and "n" not in sent


def test_shadow_mode_streams_early_and_records_the_decision(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served], tmp_path: Path) -> None:
    """Shadow mode, L = 4 (threshold 0.4) and p = exp(-2): the reply streams as it comes,
    the last chunk says the guard would have refused, the audit row is written; the guard
    asked for logprobs, the client (which did not) receives none."""
    fake, up = gated
    db = tmp_path / "audit.db"
    client = make_client(start_proxy(up.url, mode="shadow", audit_path=db))
    it = iter(client.chat.completions.create(**ask("an unsure question")))
    first = [next(it), next(it)]
    assert not fake.finished.is_set()
    fake.released.set()
    chunks = first + list(it)
    assert text_of(chunks) == ANSWER
    assert all(ch.logprobs is None for c in chunks for ch in c.choices)
    decision = decision_of(chunks)
    assert (decision["decision"], decision["mode"]) == ("refuse", "shadow")
    assert decision["confidence"] == pytest.approx(0.1353, abs=1e-3)  # exp(-2)
    assert fake.requests[-1]["body"]["logprobs"] is True
    client.close()
    rid = decision["request_id"]
    for _ in range(200):  # the writer thread writes within its flush interval
        try:
            row = sqlite3.connect(db).execute(
                "SELECT decision, mode, stream FROM decisions WHERE request_id = ?",
                (rid,)).fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is not None:
            break
        threading.Event().wait(0.05)
    assert row == ("refuse", "shadow", 1)


def audit_row(db: Path, request_id: str, columns: str = "decision, mode, stream"
              ) -> tuple[Any, ...] | None:
    """The audit row of ``request_id``, waiting for the writer thread (at most WAIT s)."""
    for _ in range(int(WAIT / 0.05)):
        try:
            row = sqlite3.connect(db).execute(
                f"SELECT {columns} FROM decisions WHERE request_id = ?",
                (request_id,)).fetchone()
        except sqlite3.OperationalError:  # the writer has not made the table yet
            row = None
        if row is not None:
            return tuple(row)
        threading.Event().wait(0.05)
    return None


@pytest.mark.parametrize("mode, question", [("enforce", "a cheap question"),
                                            ("shadow", "an unsure question")])
def test_a_client_that_leaves_an_early_stream_leaves_its_audit_row(
        start_proxy: Callable[..., Served], gated: tuple[GatedUpstream, Served],
        tmp_path: Path, mode: str, question: str) -> None:
    """The client reads the first words and leaves while the upstream is paused: the
    decision is recorded once the response was handed over (in its ``finally``), made on
    what the stream relayed (the answer's first word, its logprob in shadow mode)."""
    fake, up = gated
    db = tmp_path / "audit.db"
    proxy = start_proxy(up.url, mode=mode, audit_path=db, read_timeout=30.0)
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", json=ask(question),
                      timeout=WAIT, headers={"authorization": f"Bearer {CLIENT_KEY}"}) as r:
        assert r.headers["x-utilityguard-stream"] == "early"
        rid = r.headers["x-utilityguard-request-id"]
        received = b""
        for part in r.iter_raw():
            received += part
            if WORDS[0].encode() in received:
                break  # the first word: leave while the upstream is paused
    assert fake.closed.wait(WAIT) and not fake.finished.is_set()
    decided = "answer" if mode == "enforce" else "refuse"  # shadow: p = exp(-2) < 0.4
    assert audit_row(db, rid) == (decided, mode, 1)


def test_a_client_that_leaves_an_early_responses_stream_leaves_its_audit_row(
        start_proxy: Callable[..., Served], gated: tuple[GatedUpstream, Served],
        tmp_path: Path) -> None:
    fake, up = gated
    db = tmp_path / "audit.db"
    proxy = start_proxy(up.url, audit_path=db, read_timeout=30.0)
    body = {"model": "gated-model", "input": "cheap", "stream": True}
    with httpx.stream("POST", proxy.url + "/v1/responses", json=body, timeout=WAIT,
                      headers={"authorization": f"Bearer {CLIENT_KEY}"}) as r:
        rid = r.headers["x-utilityguard-request-id"]
        received = b""
        for part in r.iter_raw():
            received += part
            if b"response.output_text.delta" in received:
                break
    assert fake.closed.wait(WAIT) and not fake.finished.is_set()
    assert audit_row(db, rid) == ("answer", "enforce", 1)


def _headers_arrive(url: str, body: dict[str, Any], arrived: threading.Event,
                    finished_then: list[bool], fake: GatedUpstream, out: list[bytes]) -> None:
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=WAIT,
                      headers={"authorization": f"Bearer {CLIENT_KEY}"}) as r:
        finished_then.append(fake.finished.is_set())
        arrived.set()
        out.append(r.read())
        out.append(r.headers.get("x-utilityguard-decision", "").encode())


@pytest.mark.parametrize("question", ["an unsure question", "a sure question"])
def test_a_decision_that_depends_on_p_is_still_buffered(
        start_proxy: Callable[..., Served], gated: tuple[GatedUpstream, Served],
        question: str) -> None:
    """Threshold 0.4 in enforce mode: nothing (not even the headers) reaches the client
    before the upstream has finished; the refusal carries nothing of the answer."""
    fake, up = gated
    proxy = start_proxy(up.url, refusal_text=REFUSAL_TEXT)
    arrived, finished_then, out = threading.Event(), [], []
    t = threading.Thread(target=_headers_arrive, args=(
        proxy.url, ask(question), arrived, finished_then, fake, out))
    t.start()
    assert fake.paused.wait(WAIT)
    assert not arrived.wait(0.5)  # the upstream is paused: a buffering proxy sends nothing
    fake.released.set()
    t.join(WAIT)
    assert finished_then == [True]
    text = out[0].decode()
    events = [json.loads(line[6:]) for line in text.splitlines()
              if line.startswith("data: {")]
    content = "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])
    decision = events[-1]["utilityguard"]["decision"]
    if "unsure" in question:
        assert (content, decision) == (REFUSAL_TEXT, "refuse")
        assert ANSWER not in text and WORDS[-1] not in text  # nothing of the answer
    else:
        assert (content, decision) == (ANSWER, "answer")


def test_consistency_makes_no_samples_when_every_p_answers(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """Consistency needs n samples (and extra calls from an upstream that ignores n); a
    cheap question needs none: one upstream call, as the client sent it."""
    fake, up = gated
    client = make_client(start_proxy(up.url, confidence="consistency"))
    fake.released.set()
    chunks = list(client.chat.completions.create(**ask("cheap ignore-n")))
    assert text_of(chunks) == ANSWER
    assert len(fake.requests) == 1 and "n" not in fake.requests[0]["body"]
    assert decision_of(chunks)["decision"] == "answer"


def test_shadow_consistency_samples_stay_out_of_the_client_stream(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """Shadow mode keeps the signal: the n = 5 samples are asked for, the client (n = 1)
    receives choice 0 only, and the decision reads the samples' agreement."""
    fake, up = gated
    client = make_client(start_proxy(up.url, confidence="consistency", mode="shadow"))
    fake.released.set()
    chunks = list(client.chat.completions.create(**ask("a question")))
    assert {ch.index for c in chunks for ch in c.choices} == {0}
    assert text_of(chunks) == ANSWER
    assert fake.requests[0]["body"]["n"] == 5
    decision = decision_of(chunks)
    assert decision["mode"] == "shadow" and decision["confidence"] is not None


def test_secrets_are_scrubbed_from_relayed_chunks(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url, upstream_api_key=UPSTREAM_KEY))
    fake.released.set()
    chunks = list(client.chat.completions.create(**ask("cheap echo")))
    text = text_of(chunks)
    assert UPSTREAM_KEY not in text and "*" * len(UPSTREAM_KEY) in text


def test_the_deadline_ends_a_stream_under_way(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url, request_timeout=1.0, read_timeout=30.0))
    it = iter(client.chat.completions.create(**ask("cheap")))
    assert text_of([next(it), next(it)]) == WORDS[0]
    with pytest.raises(openai.APIError, match="deadline of 1 s"):
        list(it)  # the upstream stays paused
    assert fake.closed.wait(WAIT)  # and its connection was closed


def test_the_size_limit_ends_a_stream_under_way(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url, max_upstream_bytes=16384))
    fake.released.set()
    with pytest.raises(openai.APIError, match="larger than the proxy's limit"):
        list(client.chat.completions.create(**ask("cheap huge")))


def test_a_finished_stream_keeps_the_upstream_connection_alive(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """The upstream's body is read to its end after the last event, so the next early
    stream reuses the connection (a connection dropped early makes every stream wait for
    a new one)."""
    fake, up = gated
    client = make_client(start_proxy(up.url))
    fake.released.set()
    for _ in range(3):
        assert text_of(list(client.chat.completions.create(**ask("cheap")))) == ANSWER
    peers = {tuple(r["peer"]) for r in fake.requests}
    assert len(fake.requests) == 3 and len(peers) == 1


def test_an_upstream_that_holds_its_body_open_after_done_is_closed(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """A hostile upstream that keeps the body open after ``[DONE]``: the client gets the
    whole stream and its decision while the upstream still holds, and the proxy closes the
    upstream's connection instead of waiting for it."""
    fake, up = gated
    client = make_client(start_proxy(up.url, read_timeout=30.0))
    chunks = list(client.chat.completions.create(**ask("cheap linger")))
    assert text_of(chunks) == ANSWER and decision_of(chunks)["decision"] == "answer"
    assert not fake.released.is_set()  # the upstream never ended its body
    assert fake.closed.wait(WAIT)


def test_a_client_that_leaves_closes_the_upstream_stream(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url, read_timeout=30.0))
    stream = client.chat.completions.create(**ask("cheap"))
    it = iter(stream)
    next(it)
    stream.close()
    assert fake.closed.wait(WAIT) and not fake.finished.is_set()


def test_an_upstream_that_ignores_stream_is_decided_as_before(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url))
    chunks = list(client.chat.completions.create(**ask("cheap json")))
    assert text_of(chunks) == ANSWER and decision_of(chunks)["decision"] == "answer"
    assert len(fake.requests) == 1


def test_usage_chunk_is_last_and_carries_the_decision(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    fake, up = gated
    client = make_client(start_proxy(up.url))
    fake.released.set()
    chunks = list(client.chat.completions.create(
        **ask("cheap", stream_options={"include_usage": True})))
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 7
    assert decision_of(chunks)["decision"] == "answer"


def test_responses_stream_early(start_proxy: Callable[..., Served],
                                make_client: Callable[..., openai.OpenAI],
                                gated: tuple[GatedUpstream, Served]) -> None:
    """/v1/responses: the first delta reaches the client while the upstream is paused; the
    final response.completed carries the decision. The order is read on the raw stream: the
    official client (3.x) reads one event ahead before it yields a delta, so it cannot show
    that a delta arrived while the upstream still held the rest."""
    fake, up = gated
    served = start_proxy(up.url)
    body = {"model": "gated-model", "input": "cheap", "stream": True}
    finished_at_delta: list[bool] = []
    raw = b""
    with httpx.stream("POST", served.url + "/v1/responses", json=body, timeout=WAIT,
                      headers={"authorization": f"Bearer {CLIENT_KEY}"}) as r:
        for chunk in r.iter_raw():
            raw += chunk
            if not finished_at_delta and b"response.output_text.delta" in raw:
                finished_at_delta.append(fake.finished.is_set())
                fake.released.set()
    assert finished_at_delta == [False]
    last = json.loads(raw.rstrip().rsplit(b"data: ", 1)[1])
    assert last["type"] == "response.completed"
    assert last["utilityguard"]["decision"] == "answer"
    # the official client reads the same stream whole: the answer and the decision
    events = list(make_client(served).responses.create(model="gated-model", input="cheap",
                                                       stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == ANSWER
    assert (events[-1].model_extra or {})["utilityguard"]["decision"] == "answer"


def test_responses_stream_buffered_when_p_decides(
        start_proxy: Callable[..., Served], make_client: Callable[..., openai.OpenAI],
        gated: tuple[GatedUpstream, Served]) -> None:
    """Threshold 0.4 and p = exp(-2) from the logprobs the guard asked for: refused; the
    refusal stream carries nothing of the answer."""
    fake, up = gated
    client = make_client(start_proxy(up.url))
    fake.released.set()
    events = list(client.responses.create(model="gated-model", input="an unsure question",
                                          stream=True))
    assert fake.finished.is_set()
    deltas = "".join(getattr(e, "delta", "") for e in events)
    assert "42" not in deltas
    assert (events[-1].model_extra or {})["utilityguard"]["decision"] == "refuse"


def test_buffer_streams_turns_early_streaming_off(
        start_proxy: Callable[..., Served], gated: tuple[GatedUpstream, Served]) -> None:
    """--buffer-streams: a cheap question's stream waits for the upstream's end again, and
    carries the decision header (for clients that read only headers of a stream)."""
    fake, up = gated
    proxy = start_proxy(up.url, buffer_streams=True)
    arrived, finished_then, out = threading.Event(), [], []
    t = threading.Thread(target=_headers_arrive, args=(
        proxy.url, ask("a cheap question"), arrived, finished_then, fake, out))
    t.start()
    assert fake.paused.wait(WAIT)
    assert not arrived.wait(0.5)
    fake.released.set()
    t.join(WAIT)
    assert finished_then == [True]
    assert b'"decision":"answer"' in out[0] and out[1] == b"answer"
