"""``utilityguard decide`` previews the guard users run (issue 38): on a table of 50
questions and for the policies ``default`` (what ``serve`` and ``Guard()`` use when given
nothing), ``smollm2`` and ``none`` (the bare rule), ``decide``, ``Guard.decide``,
``@guarded`` and ``utilityguard serve`` (a real process on 127.0.0.1, in front of a stand-in
upstream that replies what the table says) reach the same decision, cost ``L``, threshold,
``alpha`` and ``p`` on every question.

Nothing expected is written down: each path is computed live and compared with the others,
so the test stays true when the shipped policies are refit. Half the questions carry a
caller's ``p`` (the ``x-utilityguard-confidence`` header, a ``(reply, p)`` return, ``--p``),
the other half token logprobs (the upstream's, a completion's, ``--signal``); every tenth
reply is the model's own refusal. ``serve`` also warns at start-up exactly when
:func:`guard.reach.reach` says the policy's calibrator cannot reach ordinary thresholds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from guard import Guard, guarded
from guard.cli import main
from guard.reach import reach
from tests.guard.proxy.conftest import Served

pytestmark = pytest.mark.slow

QUESTIONS = (
    "What is the maximum daily dose of acetaminophen for an adult?",
    "What is the capital of France?",
    "How many milligrams of ibuprofen can a child of 20 kg take?",
    "Who wrote Pride and Prejudice?",
    "Can I mix bleach and ammonia to clean my bathroom?",
    "What is 17 times 23?",
    "Is it legal to record a phone call without telling the other person in California?",
    "Thanks, that was helpful!",
    "What year did the Berlin Wall fall?",
    "How long should I boil an egg for a runny yolk?",
    "What is the lethal dose of caffeine for an adult?",
    "Which planet is closest to the sun?",
    "Can I take warfarin with aspirin?",
    "What is the boiling point of water at sea level in Fahrenheit?",
    "How do I file for bankruptcy in Texas?",
    "Hello there.",
    "What is the speed of light in a vacuum?",
    "My chest hurts and my left arm is numb. What should I do?",
    "Who painted the Mona Lisa?",
    "How much insulin should I inject for a blood sugar of 300?",
    "What is the square root of 144?",
    "Is it safe to drive after two beers?",
    "What is the chemical symbol for gold?",
    "How do I reset my router?",
    "What dose of amoxicillin is right for a toddler with an ear infection?",
    "Translate 'good morning' into Spanish.",
    "What is the tallest mountain in Africa?",
    "Can a landlord keep my deposit for normal wear and tear?",
    "How many bones are in the adult human body?",
    "What is the statute of limitations for fraud in New York?",
    "I have a rash on my arm. What cream should I use?",
    "What does DNA stand for?",
    "How much weight can a 2x4 beam hold over a 10 foot span?",
    "What is the freezing point of mercury?",
    "¿Cuál es la dosis máxima de paracetamol para un adulto?",
    "Who was the first person to walk on the moon?",
    "Should I stop taking my antidepressants if I feel better?",
    "What is the largest ocean on Earth?",
    "How do I treat a second-degree burn at home?",
    "What is the population of Tokyo?",
    "Is it safe to eat raw cookie dough?",
    "What is the main ingredient of guacamole?",
    "How many volts does a US wall outlet supply?",
    "Can I give my dog grapes?",
    "What is the difference between a virus and a bacterium?",
    "Write a haiku about autumn.",
    "How much potassium chloride is safe to take in one day?",
    "Which element has atomic number 6?",
    "What should I do if my child swallowed a button battery?",
    "What is the capital of Australia?",
)
REFUSAL = "I'm sorry, but I can't help with that."


def case(i: int) -> dict[str, Any]:
    """What question ``i`` is given: its reply, and a caller's ``p`` or the reply's mean token
    logprob (spread over the range, deterministically)."""
    reply = REFUSAL if i % 10 == 7 else f"Here is my answer to question {i}."
    if i % 2 == 0:
        return {"question": QUESTIONS[i], "reply": reply, "p": ((i * 37) % 100 + 0.5) / 100}
    return {"question": QUESTIONS[i], "reply": reply, "logprob_mean": -((i * 13) % 40) / 16}


CASES = [case(i) for i in range(len(QUESTIONS))]
BY_QUESTION = {c["question"]: c for c in CASES}
#: the guard each policy is, as a library user builds it
GUARDS: dict[str, Callable[[], Guard]] = {
    "default": lambda: Guard(),
    "smollm2": lambda: Guard.from_policy("smollm2"),
    "none": lambda: Guard(policy=None),
}
#: the flags that name the policy to decide and serve (none: the default)
FLAGS = {"default": [], "smollm2": ["--policy", "smollm2"], "none": ["--policy", "none"]}
COMPARED = ("decision", "cost", "threshold", "alpha", "p", "p_source", "cost_source",
            "policy")


def completion(c: dict[str, Any]) -> dict[str, Any]:
    """The upstream's reply to a case: its text, with one token logprob (= the case's mean)
    when the case gives logprobs."""
    logprobs = None
    if "logprob_mean" in c:
        logprobs = {"content": [{"token": c["reply"], "logprob": c["logprob_mean"],
                                 "bytes": None, "top_logprobs": []}]}
    return {"id": "chatcmpl-agree", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": logprobs,
                         "message": {"role": "assistant", "content": c["reply"]}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 9, "total_tokens": 18}}


async def _chat(request: Request) -> JSONResponse:
    body = await request.json()
    question = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return JSONResponse(completion(BY_QUESTION[question]))


async def _models(request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [{"id": "m", "object": "model"}]})


@pytest.fixture(scope="module")
def table_upstream() -> Iterator[Served]:
    app = Starlette(routes=[Route("/v1/chat/completions", _chat, methods=["POST"]),
                            Route("/v1/models", _models, methods=["GET"])])
    served = Served(app)
    yield served
    served.stop()


def by_guard(make: Callable[[], Guard]) -> list[dict[str, Any]]:
    guard = make()
    out = []
    for c in CASES:
        confidence = c["p"] if "p" in c else {"logprob_mean": c["logprob_mean"]}
        out.append(guard.decide(c["question"], c["reply"], confidence=confidence).model_dump())
    return out


def by_decorator(make: Callable[[], Guard]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    @guarded(make(), on_decision=lambda r: seen.append(r.model_dump()))
    def ask(question: str) -> Any:
        c = BY_QUESTION[question]
        return (c["reply"], c["p"]) if "p" in c else completion(c)

    for c in CASES:
        ask(c["question"])
    return seen


def by_decide(policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
              ) -> list[dict[str, Any]]:
    table = tmp_path / f"{policy}.jsonl"
    table.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    capsys.readouterr()
    assert main(["decide", "--from", str(table), "--json", *FLAGS[policy]]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def by_serve(policy: str, upstream: Served, serve_process: Any) -> tuple[list[dict[str, Any]],
                                                                          str]:
    served = serve_process(["--upstream", upstream.url + "/v1", "--allow-client-overrides",
                            "--log-level", "info", *FLAGS[policy]], timeout=120, bare=False)
    out = []
    with httpx.Client(base_url=served.url, timeout=60) as client:
        for c in CASES:
            headers = {"x-utilityguard-confidence": str(c["p"])} if "p" in c else {}
            r = client.post("/v1/chat/completions", headers=headers, json={
                "model": "m", "messages": [{"role": "user", "content": c["question"]}]})
            assert r.status_code == 200, r.text
            body = r.json()["utilityguard"]
            kept = client.get(f"/v1/decisions/{body['request_id']}").json()
            out.append({**body, "p": body["confidence"], "p_source": kept["p_source"],
                        "cost_source": kept["cost_source"]})
    return out, served.stop()


@pytest.mark.parametrize("policy", list(GUARDS))
def test_decide_guard_decorator_and_serve_agree(
        policy: str, table_upstream: Served, serve_process: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert len(CASES) == 50
    paths = {"Guard": by_guard(GUARDS[policy]), "@guarded": by_decorator(GUARDS[policy]),
             "decide": by_decide(policy, tmp_path, capsys)}
    paths["serve"], log = by_serve(policy, table_upstream, serve_process)
    reference = paths["Guard"]
    for name, rows in paths.items():
        assert len(rows) == len(CASES), name
        for c, ref, row in zip(CASES, reference, rows, strict=True):
            got = {k: row[k] for k in COMPARED}
            want = {k: ref[k] for k in COMPARED}
            assert got == want, f"{policy}: {name} differs from Guard on {c['question']!r}"
    decisions = {r["decision"] for r in reference}
    assert len(decisions) >= 2, f"{policy}: the table decides everything alike: {decisions}"
    # every decision had a p (a caller's, or the calibrator's on the reply: a policy whose
    # calibrator reads the reply's text reads it before a caller's p)
    assert all(r["p"] is not None for r in reference)
    if policy == "default":
        assert reference[0]["policy"].startswith("default@")
    # the start-up warning is the one guard.reach computes for this guard (or none)
    bound = reach(GUARDS[policy]())
    warning = bound.warning() if bound is not None else None
    if warning is None:
        assert "the guard can answer few questions" not in log
    else:
        assert warning in log
