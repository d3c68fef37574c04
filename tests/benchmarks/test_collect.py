"""``collect``: asking an OpenAI-compatible upstream, grading, append-only resumable output."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import benchmarks.cli_collect as cli_collect
from benchmarks.collect import CollectSettings, collect, regrade
from benchmarks.resume import prepare_resume
from cost_models.datasets import DatasetItem
from guard.cli import main
from guard.confidence import VERBAL_INSTRUCTION
from guard.exceptions import CollectError
from guard.refusal_detection import REFUSAL_HINT

QUESTIONS = {  # id: (question, answerable, reference, what the fake model says)
    "q1": ("What is 2 + 3?", True, ["5"], "The answer is 5."),
    "q2": ("What is 10 - 4?", True, ["6"], "It is 7."),
    "q3": ("What will the stock price be tomorrow?", False, [], "I cannot answer."),
    "q4": ("What is 6 * 7?", True, ["42"], "42"),
    "q5": ("How many legs does my neighbour's cat have today?", False, [], "Four."),
}
RECORD_FIELDS = {"id", "response", "answered", "correct", "confidence", "grading"}
CONFIDENCE_FIELDS = {"verbal", "logprob_mean", "logprob_low10", "consistency"}


def _items(ids: str = "q1 q2 q3 q4 q5") -> list[DatasetItem]:
    return [DatasetItem(id=i, question=QUESTIONS[i][0], answerable=QUESTIONS[i][1], cost=2.0,
                        reference=QUESTIONS[i][2], answer_type="number") for i in ids.split()]


def completion(text: str, *, logprobs: bool) -> dict[str, Any]:
    tokens = text.split() or [""]
    lp = {"content": [{"token": t, "logprob": -0.1 * (k + 1), "top_logprobs": []}
                      for k, t in enumerate(tokens)]} if logprobs else None
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop", "logprobs": lp}],
            "usage": {"prompt_tokens": 20, "completion_tokens": len(tokens), "total_tokens": 30}}


def _reply_for(body: dict[str, Any]) -> str:
    question = body["messages"][-1]["content"]
    text = next(v[3] for v in QUESTIONS.values() if v[0] == question)
    if VERBAL_INSTRUCTION in body["messages"][0]["content"]:
        text += "\nConfidence: 80%"
    return text


class FakeUpstream:
    """An OpenAI-compatible chat endpoint; records every request body. ``fail`` maps a
    request number (1-based) to an HTTP status to answer instead."""

    def __init__(self, fail: dict[int, int] | None = None,
                 reply: Callable[[dict[str, Any]], str] = _reply_for) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.requests: list[httpx.Request] = []
        self.fail = fail or {}
        self.reply = reply

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content)
        self.bodies.append(body)
        status = self.fail.get(len(self.bodies))
        if status:
            return httpx.Response(status, json={"error": {"message": f"boom {status}"}})
        return httpx.Response(200, json=completion(self.reply(body),
                                                   logprobs=bool(body.get("logprobs"))))

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    def questions(self) -> list[str]:
        return [b["messages"][-1]["content"] for b in self.bodies]


def _settings(**kw: Any) -> CollectSettings:
    return CollectSettings(**{"upstream": "http://upstream.test/v1", "model": "fake-model",
                              **kw})


def _run(items: list[DatasetItem], out: Path, upstream: FakeUpstream, **kw: Any) -> int:
    return asyncio.run(collect(items, _settings(**kw), out, transport=upstream.transport))


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the retry back-off instead of waiting it out. ``asyncio.sleep`` is patched for
    the whole process, so a server thread's own ticks (the fake upstream's uvicorn loop) sleep
    for real and are not recorded: only this thread's calls are the back-off."""
    delays: list[float] = []
    real_sleep = asyncio.sleep
    here = threading.current_thread()

    async def fake_sleep(seconds: float, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not here:
            return await real_sleep(seconds, *args, **kwargs)
        delays.append(seconds)
        return None

    monkeypatch.setattr("utilityguard_base.upstream.asyncio.sleep", fake_sleep)
    monkeypatch.setattr("utilityguard_base.upstream.random.random", lambda: 0.0)  # no jitter
    return delays


# --- requests and records -------------------------------------------------------------------

def test_requests_carry_the_refusal_hint_greedy_with_logprobs(tmp_path: Path) -> None:
    up = FakeUpstream()
    out = tmp_path / "r.jsonl"
    assert _run(_items("q1 q2"), out, up, api_key="sk-test", max_tokens=64) == 2
    assert len(up.bodies) == 2
    for req, body, q in zip(up.requests, up.bodies, ("q1", "q2"), strict=True):
        assert str(req.url) == "http://upstream.test/v1/chat/completions"
        assert req.method == "POST"
        assert req.headers["authorization"] == "Bearer sk-test"
        assert body["messages"] == [{"role": "system", "content": REFUSAL_HINT},
                                    {"role": "user", "content": QUESTIONS[q][0]}]
        assert body["temperature"] == 0.0
        assert body["model"] == "fake-model"
        assert body["max_tokens"] == 64
        assert body["logprobs"] is True and body["top_logprobs"] == 1


class FakeBaseModel:
    """A legacy ``/completions`` endpoint (a base model): answers the last ``Question:`` of the
    prompt with a leading space, as base models do, and legacy-format logprobs."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = json.loads(request.content)
        self.bodies.append(body)
        question = body["prompt"].rsplit("Question: ", 1)[1].removesuffix("\nAnswer:")
        text = " " + next(v[3] for v in QUESTIONS.values() if v[0] == question)
        tokens = text.split()
        lp = {"tokens": tokens, "token_logprobs": [-0.5] * len(tokens),
              "top_logprobs": [{t: -0.5} for t in tokens]} if body.get("logprobs") else None
        return httpx.Response(200, json={
            "id": "cmpl-1", "object": "text_completion", "model": "base",
            "choices": [{"index": 0, "text": text, "logprobs": lp, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": len(tokens),
                      "total_tokens": 50 + len(tokens)}})


def test_completion_style_asks_a_base_model_with_a_text_prompt(tmp_path: Path) -> None:
    up = FakeBaseModel()
    out = tmp_path / "r.jsonl"
    n = asyncio.run(collect(_items("q1 q2 q3"), _settings(prompt_style="completion",
                                                          max_tokens=32),
                            out, transport=httpx.MockTransport(up)))
    assert n == 3
    for req, body, q in zip(up.requests, up.bodies, ("q1", "q2", "q3"), strict=True):
        assert str(req.url) == "http://upstream.test/v1/completions"
        assert "messages" not in body
        prompt = body["prompt"]
        assert prompt.startswith(REFUSAL_HINT + "\n\n")  # the same instruction as chat
        assert prompt.endswith(f"Question: {QUESTIONS[q][0]}\nAnswer:")
        assert prompt.count("Question: ") == 3  # two worked examples, then the item
        assert "Answer: I cannot answer.\n" in prompt  # one example refuses in the hint's words
        assert "\nQuestion:" in body["stop"]
        assert body["temperature"] == 0.0 and body["max_tokens"] == 32
        assert body["logprobs"] == 1  # the legacy API's integer form
    recs = {r["id"]: r for r in _records(out)}
    assert recs["q1"]["response"] == "The answer is 5."  # the base model's space stripped
    assert (recs["q1"]["answered"], recs["q1"]["correct"]) == (True, True)
    assert (recs["q2"]["answered"], recs["q2"]["correct"]) == (True, False)
    assert recs["q3"]["answered"] is False
    assert recs["q1"]["confidence"]["logprob_mean"] == pytest.approx(-0.5)
    assert {r["prompt_style"] for r in recs.values()} == {"completion"}


def test_unknown_prompt_style_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="prompt style"):
        _run(_items("q1"), tmp_path / "r.jsonl", FakeUpstream(), prompt_style="base")


def test_without_logprobs_none_are_asked_for(tmp_path: Path) -> None:
    up = FakeUpstream()
    out = tmp_path / "r.jsonl"
    _run(_items("q1"), out, up, confidence=())
    assert "logprobs" not in up.bodies[0] and "authorization" not in up.requests[0].headers
    rec = _records(out)[0]
    assert rec["confidence"] == {"verbal": None, "logprob_mean": None, "logprob_low10": None,
                                 "consistency": None}


def test_records_are_graded_response_records(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    seen: list[str] = []
    n = asyncio.run(collect(_items(), _settings(), out, transport=FakeUpstream().transport,
                            on_done=lambda r: seen.append(r["id"])))
    assert n == 5 and seen == ["q1", "q2", "q3", "q4", "q5"]
    recs = {r["id"]: r for r in _records(out)}
    for rec in recs.values():
        assert set(rec) >= RECORD_FIELDS
        assert set(rec["confidence"]) == CONFIDENCE_FIELDS
        assert rec["model"] == "fake-model" and rec["finish_reason"] == "stop"
        assert isinstance(rec["completion_tokens"], int) and rec["latency_ms"] >= 0
    assert recs["q1"]["response"] == "The answer is 5."
    got = {i: (r["answered"], r["correct"]) for i, r in recs.items()}
    assert got == {"q1": (True, True), "q2": (True, False), "q3": (False, None),
                   "q4": (True, True), "q5": (True, False)}
    lp = recs["q1"]["confidence"]  # tokens "The answer is 5." -> -0.1 .. -0.4
    assert lp["logprob_mean"] == pytest.approx(-0.25)
    assert lp["logprob_low10"] == pytest.approx(-0.4)


def test_verbal_confidence_asks_a_second_time(tmp_path: Path) -> None:
    up = FakeUpstream()
    out = tmp_path / "r.jsonl"
    _run(_items("q1 q4"), out, up, confidence=("logprobs", "verbal"))
    assert len(up.bodies) == 4
    verbal = [b for b in up.bodies if VERBAL_INSTRUCTION in b["messages"][0]["content"]]
    assert len(verbal) == 2
    for b in verbal:
        assert b["messages"][0]["content"] == REFUSAL_HINT + " " + VERBAL_INSTRUCTION
        assert b["temperature"] == 0.0 and "logprobs" not in b
    for rec in _records(out):
        assert rec["confidence"]["verbal"] == 0.8
        assert rec["verbal_response"].endswith("Confidence: 80%")
        assert "Confidence" not in rec["response"]  # graded on the plain reply
        assert rec["confidence"]["logprob_mean"] is not None


def test_a_temperature_samples_the_reply_and_the_verbal_pass(tmp_path: Path) -> None:
    up = FakeUpstream()
    _run(_items("q1"), tmp_path / "r.jsonl", up, confidence=("verbal",), temperature=0.8)
    assert [b["temperature"] for b in up.bodies] == [0.8, 0.8]


@pytest.mark.parametrize("t", [-0.1, 2.5])
def test_a_temperature_out_of_range_is_refused(t: float) -> None:
    with pytest.raises(ValueError, match="temperature"):
        _settings(temperature=t)


def test_consistency_samples(tmp_path: Path) -> None:
    samples = iter(["The answer is 5.", "5", "6", "I cannot answer."])

    def reply(body: dict[str, Any]) -> str:
        return next(samples)

    up = FakeUpstream(reply=reply)
    out = tmp_path / "r.jsonl"
    _run(_items("q1"), out, up, confidence=("consistency",), samples=3)
    assert [b["temperature"] for b in up.bodies] == [0.0, 0.7, 0.7, 0.7]
    rec = _records(out)[0]
    # the greedy reply "5" agrees with itself and one sample of four replies
    assert rec["confidence"]["consistency"] == 0.5
    assert rec["sample_modal_share"] == 0.5
    assert rec["response"] == "The answer is 5." and rec["correct"] is True


def test_unknown_confidence_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown confidence 'vibes'; allowed: logprobs"):
        _run(_items("q1"), tmp_path / "r.jsonl", FakeUpstream(), confidence=("vibes",))


# --- resume -----------------------------------------------------------------------------------

def test_resume_asks_only_for_the_missing_items(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert _run(_items("q1 q2 q3"), out, FakeUpstream()) == 3
    before = out.read_bytes()
    up = FakeUpstream()
    assert _run(_items(), out, up) == 2
    assert up.questions() == [QUESTIONS["q4"][0], QUESTIONS["q5"][0]]
    assert out.read_bytes().startswith(before)  # append-only
    assert [r["id"] for r in _records(out)] == ["q1", "q2", "q3", "q4", "q5"]
    up = FakeUpstream()
    assert _run(_items(), out, up) == 0 and up.bodies == []
    assert prepare_resume(out) == {"q1", "q2", "q3", "q4", "q5"}


def test_a_torn_last_line_is_moved_aside_and_redone(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _run(_items("q1 q2 q3"), out, FakeUpstream())
    whole = out.read_bytes()
    cut = whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 1 + 25]  # q3's line, torn
    out.write_bytes(cut)
    up = FakeUpstream()
    assert _run(_items(), out, up) == 3
    assert up.questions() == [QUESTIONS[i][0] for i in ("q3", "q4", "q5")]
    torn = tmp_path / "r.jsonl.torn"
    assert torn.read_bytes() == cut[cut.rindex(b"\n") + 1:]
    assert [r["id"] for r in _records(out)] == ["q1", "q2", "q3", "q4", "q5"]


def test_a_last_record_without_its_newline_is_kept_and_ended(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _run(_items("q1 q2"), out, FakeUpstream())
    out.write_bytes(out.read_bytes().rstrip(b"\n"))  # killed between the record and "\n"
    up = FakeUpstream()
    assert _run(_items("q1 q2 q3"), out, up) == 1
    assert up.questions() == [QUESTIONS["q3"][0]]
    assert [r["id"] for r in _records(out)] == ["q1", "q2", "q3"]
    assert not (tmp_path / "r.jsonl.torn").exists()


def test_a_broken_line_before_the_end_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _run(_items("q1 q2"), out, FakeUpstream())
    lines = out.read_text().splitlines()
    out.write_text("\n".join([lines[0], "{broken", lines[1]]) + "\n")
    up = FakeUpstream()
    with pytest.raises(CollectError, match=r"r\.jsonl, line 2: not a response record"):
        _run(_items(), out, up)
    assert up.bodies == []


def test_a_killed_run_keeps_every_record_it_wrote(tmp_path: Path) -> None:
    """Each record is on disk (flushed) before the next request is sent."""
    out = tmp_path / "r.jsonl"
    on_disk: list[int] = []

    def reply(body: dict[str, Any]) -> str:
        on_disk.append(len(out.read_text().splitlines()) if out.exists() else 0)
        return _reply_for(body)

    _run(_items(), out, FakeUpstream(reply=reply))
    assert on_disk == [0, 1, 2, 3, 4]


# --- upstream failures --------------------------------------------------------------------------

def test_server_errors_are_retried_then_raised(tmp_path: Path, no_sleep: list[float]) -> None:
    out = tmp_path / "r.jsonl"
    up = FakeUpstream(fail={3: 500, 4: 500, 5: 500})
    with pytest.raises(CollectError, match=r"failed after 3 tries: upstream answered HTTP 500"):
        _run(_items(), out, up)
    assert len(up.bodies) == 5  # q1, q2, then q3 three times
    assert no_sleep == [0.5, 1.0]  # back-off between tries, none after the last
    assert [r["id"] for r in _records(out)] == ["q1", "q2"]


@pytest.mark.parametrize("status", [pytest.param(500, id="500"), pytest.param(503, id="503"),
                                    pytest.param(429, id="429-rate-limited")])
def test_a_transient_error_is_retried(tmp_path: Path, no_sleep: list[float],
                                      status: int) -> None:
    up = FakeUpstream(fail={1: status})
    assert _run(_items("q1"), tmp_path / "r.jsonl", up) == 1
    assert len(up.bodies) == 2 and no_sleep == [0.5]


@pytest.mark.parametrize("status", [pytest.param(s, id=str(s)) for s in (400, 401, 404, 422)])
def test_a_client_error_fails_at_once(tmp_path: Path, no_sleep: list[float],
                                      status: int) -> None:
    up = FakeUpstream(fail={1: status})
    out = tmp_path / "r.jsonl"
    with pytest.raises(CollectError, match=rf"answered HTTP {status}: .*boom {status}"):
        _run(_items(), out, up)
    assert len(up.bodies) == 1 and no_sleep == []
    assert out.read_text() == ""


def test_connection_errors_are_retried(tmp_path: Path, no_sleep: list[float]) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(CollectError, match=r"upstream http://upstream.test/v1 failed after "
                                           r"3 tries: cannot reach the upstream at "
                                           r"http://upstream.test/v1: connection refused"):
        asyncio.run(collect(_items("q1"), _settings(), tmp_path / "r.jsonl",
                            transport=httpx.MockTransport(refuse)))
    assert no_sleep == [0.5, 1.0]


def test_a_reply_without_choices_is_not_recorded_as_a_refusal(tmp_path: Path) -> None:
    def error_body(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"error": {"message": "model not loaded"}})

    out = tmp_path / "r.jsonl"
    with pytest.raises(CollectError, match=r"upstream reply has no choices: .*model not loaded"):
        asyncio.run(collect(_items("q1"), _settings(), out,
                            transport=httpx.MockTransport(error_body)))
    assert out.read_text() == ""


# --- regrade ------------------------------------------------------------------------------------

def test_regrade_recomputes_grades_and_keeps_replies(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _run(_items(), out, FakeUpstream())
    recs = _records(out)
    recs[0]["correct"] = False        # q1 "The answer is 5." is right
    recs[2]["answered"] = True        # q3 "I cannot answer." is a refusal
    recs[2]["correct"] = False
    out.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert regrade(_items(), out) == (5, 2)
    after = _records(out)
    assert [r["response"] for r in after] == [r["response"] for r in recs]
    assert [r["confidence"] for r in after] == [r["confidence"] for r in recs]
    assert (after[0]["answered"], after[0]["correct"]) == (True, True)
    assert (after[2]["answered"], after[2]["correct"]) == (False, None)
    assert regrade(_items(), out) == (5, 0)
    assert not (tmp_path / "r.jsonl.tmp").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param('{"id": "q9", "response": "5"}', r"line 2: id 'q9' is not in the dataset",
                     id="unknown-id"),
        pytest.param('{"id": "q2", "resp', r"line 2: invalid JSON", id="invalid-json"),
        pytest.param("[1, 2]", r"line 2: expected a JSON object", id="not-an-object"),
        pytest.param('{"id": "q2", "response": "5", "answered": "maybe"}',
                     r"line 2 \(id 'q2'\), field 'answered'", id="not-a-response-record"),
    ],
)
def test_regrade_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    out = tmp_path / "r.jsonl"
    original = '{"id": "q1", "response": "5", "answered": true, "correct": true}\n' + line + "\n"
    out.write_text(original)
    with pytest.raises(CollectError, match=message):
        regrade(_items(), out)
    assert out.read_text() == original


# --- the CLI ------------------------------------------------------------------------------------

def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": i, "question": q, "answerable": a, "reference": r,
                                        "answer_type": "number"}) + "\n"
                            for i, (q, a, r, _) in QUESTIONS.items()))
    return path


def test_cli_upstream_failure_exits_2_keeping_what_was_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_sleep: list[float],
        capsys: pytest.CaptureFixture[str]) -> None:
    up = FakeUpstream(fail={3: 500, 4: 500, 5: 500})
    monkeypatch.setattr(cli_collect, "collect", functools.partial(collect,
                                                                  transport=up.transport))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "r.jsonl"
    code = main(["collect", "--data", str(_dataset(tmp_path)), "--upstream", "http://u.test/v1",
                 "--model", "m", "--retries", "3", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [
        "utilityguard: error: upstream http://u.test/v1 failed after 3 tries: upstream "
        'answered HTTP 500: {"error":{"message":"boom 500"}} (records written so far are kept '
        f"in {out})"]
    assert [r["id"] for r in _records(out)] == ["q1", "q2"]
    # the rerun resumes where it stopped
    up.fail = {}
    assert main(["collect", "--data", str(_dataset(tmp_path)), "--upstream", "http://u.test/v1",
                 "--model", "m", "--out", str(out)]) == 0
    assert "wrote 3 new records" in capsys.readouterr().out
    assert [r["id"] for r in _records(out)] == ["q1", "q2", "q3", "q4", "q5"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--model", "m"], "--upstream and --model are required (unless --regrade)",
                     id="no-upstream"),
        pytest.param(["--upstream", "http://x"], "--upstream and --model are required",
                     id="no-model"),
        pytest.param(["--upstream", "http://x", "--model", "m", "--confidence", "logprobs,vibes"],
                     "--confidence: unknown vibes; allowed: logprobs, verbal, consistency",
                     id="unknown-confidence"),
        pytest.param(["--regrade"], "no such file to re-grade", id="regrade-missing-file"),
        pytest.param(["--upstream", "http://x", "--model", "m", "--temperature", "3"],
                     "--temperature must be between 0 and 2; got 3.0", id="temperature"),
    ],
)
def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                          message: str) -> None:
    code = main(["collect", "--data", str(_dataset(tmp_path)), "--out",
                 str(tmp_path / "r.jsonl"), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("utilityguard: error: ")
    assert message in err


def test_cli_regrade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text('{"id": "q1", "response": "The answer is 5.", "answered": true, '
                   '"correct": false}\n')
    assert main(["collect", "--data", str(_dataset(tmp_path)), "--out", str(out),
                 "--regrade"]) == 0
    assert f"re-graded 1 records in {out}; 1 changed" in capsys.readouterr().out
    assert _records(out)[0]["correct"] is True
    out.write_text('{"id": "zz", "response": "5"}\n')
    assert main(["collect", "--data", str(_dataset(tmp_path)), "--out", str(out),
                 "--regrade"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"utilityguard: error: {out}, line 1: id 'zz' is not in the dataset"]


# --- a real local server ------------------------------------------------------------------------

@pytest.fixture
def real_upstream(serve_app: Callable[[Any], str]) -> tuple[str, list[dict[str, Any]]]:
    """An OpenAI-compatible endpoint served by uvicorn on 127.0.0.1 in a thread."""
    seen: list[dict[str, Any]] = []

    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({"body": body, "auth": request.headers.get("authorization")})
        return JSONResponse(completion(_reply_for(body), logprobs=bool(body.get("logprobs"))))

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    return serve_app(app), seen


def test_cli_against_a_real_local_server(real_upstream: tuple[str, list[dict[str, Any]]],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    url, seen = real_upstream
    monkeypatch.setenv("UG_TEST_KEY", "sk-local")
    out = tmp_path / "r.jsonl"
    args = ["collect", "--data", str(_dataset(tmp_path)), "--upstream", url, "--model", "m",
            "--confidence", "logprobs,verbal", "--api-key-env", "UG_TEST_KEY", "--out", str(out)]
    assert main([*args, "--limit", "3"]) == 0
    assert "wrote 3 new records" in capsys.readouterr().out
    assert len(seen) == 6  # a plain and a verbal request per item
    assert all(s["auth"] == "Bearer sk-local" for s in seen)
    assert seen[0]["body"]["messages"][0]["content"] == REFUSAL_HINT
    assert seen[0]["body"]["logprobs"] is True and seen[0]["body"]["temperature"] == 0
    recs = _records(out)
    assert [r["id"] for r in recs] == ["q1", "q2", "q3"]
    assert all(set(r) >= RECORD_FIELDS and r["confidence"]["verbal"] == 0.8 for r in recs)
    assert [(r["answered"], r["correct"]) for r in recs] == [(True, True), (True, False),
                                                             (False, None)]
    assert main(args) == 0  # resumes: only q4 and q5
    assert "wrote 2 new records" in capsys.readouterr().out
    assert len(seen) == 10
    assert [r["id"] for r in _records(out)] == ["q1", "q2", "q3", "q4", "q5"]
