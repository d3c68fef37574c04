"""``collect`` at scale and with a grader, against real HTTP servers on 127.0.0.1: requests in
flight at once, several upstreams, 429 with retry-after, resuming, and the second grading
stage."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from benchmarks.collect import CollectSettings, collect, regrade, stage_agreement
from benchmarks.grading.model_grader import GraderSettings
from cost_models.datasets import DatasetItem
from guard.cli import main
from guard.exceptions import CollectError

Start = Callable[[Any], str]
# id: (question, answerable, reference, the model's reply)
QUESTIONS = {
    "n1": ("What is 2 + 3?", True, ["5"], "The answer is 5."),
    "n2": ("What is 10 - 4?", True, ["6"], "Maybe 6, or perhaps 7."),  # rules unsure
    "n3": ("What will the stock price be tomorrow?", False, [], "I cannot answer."),
    "n4": ("What is 6 * 7?", True, ["42"], "42"),
    "n5": ("What is 9 - 1?", True, ["8"], "8"),
    "n6": ("What is 3 * 3?", True, ["9"], "9"),
    "n7": ("What is 1 + 1?", True, ["2"], "2"),
    "n8": ("What is 5 + 5?", True, ["10"], "10"),
}


def _items() -> list[DatasetItem]:
    return [DatasetItem(id=i, question=q, answerable=a, cost=2.0, reference=r,
                        answer_type="number") for i, (q, a, r, _) in QUESTIONS.items()]


def _dataset(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": i, "question": q, "answerable": a,
                                        "reference": r, "answer_type": "number"}) + "\n"
                            for i, (q, a, r, _) in QUESTIONS.items()))
    return path


def _completion(text: str) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"completion_tokens": 3}}


def _reply(body: dict[str, Any]) -> str:
    q = body["messages"][-1]["content"]
    return next(v[3] for v in QUESTIONS.values() if v[0] == q)


class Model:
    """A fake model endpoint: optional delay, 429s with retry-after, in-flight counting."""

    def __init__(self, delay: float = 0.0, limited: int = 0, retry_after: str = "1",
                 fail_question: str | None = None) -> None:
        self.delay = delay
        self.limited = limited  # the first N requests get 429
        self.retry_after = retry_after
        self.fail_question = fail_question
        self.events: list[tuple[float, str, int]] = []  # (time, question, status)
        self.in_flight = 0
        self.max_in_flight = 0

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        q = body["messages"][-1]["content"]
        if len(self.events) < self.limited:
            self.events.append((time.monotonic(), q, 429))
            return JSONResponse({"error": {"message": "rate limited"}}, status_code=429,
                                headers={"retry-after": self.retry_after})
        if q == self.fail_question:
            self.events.append((time.monotonic(), q, 400))
            return JSONResponse({"error": {"message": "bad request"}}, status_code=400)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        self.events.append((time.monotonic(), q, 200))
        return JSONResponse(_completion(_reply(body)))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in out.read_text().splitlines()]


def _settings(upstream: str | list[str], **kw: Any) -> CollectSettings:
    return CollectSettings(upstream=upstream, model="m", confidence=(), **kw)


def test_concurrency_keeps_several_requests_in_flight(serve_app: Start, tmp_path: Path) -> None:
    model = Model(delay=0.4)
    url = serve_app(model.app())
    out = tmp_path / "r.jsonl"
    assert asyncio.run(collect(_items(), _settings(url, concurrency=4), out)) == 8
    assert model.max_in_flight >= 3  # up to 4 at once, not one after another (the server
    # counts the requests it holds; no wall-clock bound)
    assert sorted(r["id"] for r in _records(out)) == sorted(QUESTIONS)


def test_several_upstreams_share_the_work(serve_app: Start, tmp_path: Path) -> None:
    a, b = Model(delay=0.05), Model(delay=0.05)
    urls = [serve_app(a.app()), serve_app(b.app())]
    out = tmp_path / "r.jsonl"
    assert asyncio.run(collect(_items(), _settings(urls, concurrency=2), out)) == 8
    assert len(a.events) > 0 and len(b.events) > 0
    assert len(a.events) + len(b.events) == 8  # every item asked exactly once
    assert sorted(r["id"] for r in _records(out)) == sorted(QUESTIONS)


def test_429_with_retry_after_is_honoured(serve_app: Start, tmp_path: Path) -> None:
    model = Model(limited=2, retry_after="1")
    url = serve_app(model.app())
    out = tmp_path / "r.jsonl"
    assert asyncio.run(collect(_items()[:2], _settings(url, retries=5), out)) == 2
    statuses = [s for _, _, s in model.events]
    assert statuses == [429, 429, 200, 200]
    times = [t for t, _, _ in model.events]
    assert times[1] - times[0] >= 0.9 and times[2] - times[1] >= 0.9  # waited retry-after
    assert [r["id"] for r in _records(out)] == ["n1", "n2"]


def test_429_beyond_the_retries_fails_keeping_what_was_written(serve_app: Start,
                                                               tmp_path: Path) -> None:
    model = Model(limited=10**6, retry_after="0")
    url = serve_app(model.app())
    with pytest.raises(CollectError, match=r"failed after 3 tries: upstream answered HTTP 429"):
        asyncio.run(collect(_items(), _settings(url, retries=3), tmp_path / "r.jsonl"))
    assert len(model.events) == 3


def test_a_failed_concurrent_run_resumes_without_duplicates(serve_app: Start,
                                                            tmp_path: Path) -> None:
    model = Model(delay=0.05, fail_question=QUESTIONS["n5"][0])
    url = serve_app(model.app())
    out = tmp_path / "r.jsonl"
    with pytest.raises(CollectError, match="answered HTTP 400"):
        asyncio.run(collect(_items(), _settings(url, concurrency=3), out))
    first = [r["id"] for r in _records(out)]
    assert "n5" not in first
    model.fail_question = None
    asked_before = len(model.events)
    asyncio.run(collect(_items(), _settings(url, concurrency=3), out))
    ids = [r["id"] for r in _records(out)]
    assert sorted(ids) == sorted(QUESTIONS) and len(ids) == len(set(ids))
    assert len(model.events) - asked_before == 8 - len(first)  # only the missing ones


class Grader:
    """A fake model grader (served on 127.0.0.1): answers ``verdict``, records what it was
    asked."""

    def __init__(self, verdict: str = "ANSWERED: yes\nCORRECT: yes") -> None:
        self.verdict = verdict
        self.asked: list[dict[str, Any]] = []

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.asked.append(body)
        return JSONResponse(_completion(self.verdict))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])


def test_the_grader_grades_only_what_the_rules_cannot_settle(serve_app: Start,
                                                            tmp_path: Path) -> None:
    url = serve_app(Model().app())
    grader = Grader("ANSWERED: yes\nCORRECT: yes")
    jurl = serve_app(grader.app())
    out = tmp_path / "r.jsonl"
    s = _settings(url, grader=GraderSettings(upstream=jurl, model="grader-m"))
    asyncio.run(collect(_items(), s, out))
    assert len(grader.asked) == 1  # n2 "Maybe 6, or perhaps 7." only
    asked = grader.asked[0]
    assert asked["model"] == "grader-m" and asked["temperature"] == 0.0
    user = asked["messages"][1]["content"]
    assert "What is 10 - 4?" in user and "Reference answer: 6" in user
    assert "Maybe 6, or perhaps 7." in user
    recs = {r["id"]: r for r in _records(out)}
    assert recs["n2"]["grading"]["stage"] == "model"
    assert recs["n2"]["grading"]["grader"] == "grader-m"
    assert recs["n2"]["grading"]["rules"] == {"answered": True, "correct": False}
    assert (recs["n2"]["answered"], recs["n2"]["correct"]) == (True, True)  # the grader's
    assert all(recs[i]["grading"]["stage"] == "rules" for i in recs if i != "n2")


def test_grader_all_and_the_agreement_report(serve_app: Start, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    url = serve_app(Model().app())
    grader = Grader("ANSWERED: yes\nCORRECT: yes")
    jurl = serve_app(grader.app())
    out = tmp_path / "r.jsonl"
    assert main(["collect", "--data", str(_dataset(tmp_path)), "--upstream", url, "--model",
                 "m", "--confidence", "logprobs", "--grader-upstream", jurl, "--grader-model",
                 "j", "--grade-all", "--out", str(out)]) == 0
    assert len(grader.asked) == 8
    recs = {r["id"]: r for r in _records(out)}
    assert all(r["grading"]["stage"] == "model" for r in recs.values())
    # the grader says "answered, correct" for everything: it agrees with the rules where they
    # said so (n1, n4-n8), not on n2 (rules: wrong) nor n3 (rules: a refusal)
    assert (recs["n3"]["answered"], recs["n3"]["correct"]) == (True, False)  # refusal item
    out_text = capsys.readouterr().out
    assert ("the model grader graded 8 of 8 records; it agreed with the rules on 6 (75.0%)"
            in out_text)


def test_an_unparseable_grader_leaves_the_rules_grade_flagged(serve_app: Start,
                                                             tmp_path: Path) -> None:
    url = serve_app(Model().app())
    grader = Grader("I think it is fine.")
    jurl = serve_app(grader.app())
    out = tmp_path / "r.jsonl"
    asyncio.run(collect(_items(), _settings(url, grader=GraderSettings(jurl, "j")), out))
    assert len(grader.asked) == 3  # one question, asked three times
    n2 = next(r for r in _records(out) if r["id"] == "n2")
    assert n2["grading"]["stage"] == "rules"
    assert "grader_unparseable" in n2["grading"]["flags"]
    assert (n2["answered"], n2["correct"]) == (True, False)


def test_regrade_with_a_model_grader(serve_app: Start, tmp_path: Path) -> None:
    url = serve_app(Model().app())
    out = tmp_path / "r.jsonl"
    asyncio.run(collect(_items(), _settings(url), out))
    grader = Grader("ANSWERED: no\nCORRECT: n/a")
    jurl = serve_app(grader.app())
    assert regrade(_items(), out, GraderSettings(jurl, "j")) == (8, 1)
    n2 = next(r for r in _records(out) if r["id"] == "n2")
    assert (n2["answered"], n2["correct"], n2["grading"]["stage"]) == (False, None, "model")


def test_grader_flags_go_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["collect", "--data", str(_dataset(tmp_path)), "--upstream", "http://x/v1",
                 "--model", "m", "--grader-upstream", "http://j/v1", "--out",
                 str(tmp_path / "r.jsonl")])
    assert code == 2
    assert "--grader-upstream and --grader-model go together" in capsys.readouterr().err


def test_the_former_judge_options_still_work_and_warn(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["collect", "--data", str(_dataset(tmp_path)), "--upstream", "http://x/v1",
                 "--model", "m", "--judge-upstream", "http://j/v1", "--judge-all", "--out",
                 str(tmp_path / "r.jsonl")])
    assert code == 2  # parsed as --grader-upstream and --grade-all: the model is missing
    err = capsys.readouterr().err
    assert "--judge-upstream is deprecated; use --grader-upstream" in err
    assert "--judge-all is deprecated; use --grade-all" in err
    assert "--grader-upstream and --grader-model go together" in err


def test_the_agreement_counts_records_graded_before_the_rename() -> None:
    rules = {"answered": True, "correct": False}
    records = [{"answered": True, "correct": False, "grading": {"stage": "judge", "rules": rules}},
               {"answered": True, "correct": True, "grading": {"stage": "model", "rules": rules}},
               {"answered": True, "correct": True, "grading": {"stage": "rules"}}]
    assert stage_agreement(records) == (1, 2)
