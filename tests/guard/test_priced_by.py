"""Where the text that set a request's price sits (``DecisionRecord.priced_by``), as the
shipped guard reads requests: the operator's first question when everything is refused."""

from __future__ import annotations

from typing import Any

import pytest

from guard.asking import AskingConfig
from guard.core import Guard

CAPITAL = "What is the capital of Australia?"
DOSE = "How much acetaminophen can a 2-year-old take?"
SAFETY = ("You are the assistant of a smart home app. If a smoke or carbon monoxide alarm is "
          "triggered, tell the user to leave the home and call emergency services.")


def _chat(*messages: tuple[str, str], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": r, "content": c} for r, c in messages], **extra}


CASES = [
    pytest.param(CAPITAL, "user", id="a plain question"),
    pytest.param(_chat(("system", "Be brief. Be kind."), ("user", DOSE)), "user",
                 id="the last turn under a style prompt"),
    pytest.param(_chat(("system", SAFETY), ("user", CAPITAL)), "system",
                 id="a product prompt's safety rule"),
    pytest.param(_chat(("developer", f"Be brief. {DOSE}"), ("user", CAPITAL)), "developer",
                 id="a question in a developer prompt"),
    pytest.param(_chat(("user", DOSE), ("assistant", "Let me check."), ("user", "thanks")),
                 "history", id="an earlier turn of the user's"),
    pytest.param(_chat(("user", "hi there, what is 2+2?"), tools=[{"type": "function", "function": {
        "name": "dose", "description": "Returns the maximum insulin dose for a blood sugar of "
                                       "300."}}]), "tools", id="a tool definition"),
    pytest.param({"input": DOSE}, "other", id="a Responses input string (no role)"),
    pytest.param(_chat(("user", "I'm on nitroglycerin and my partner has sildenafil."),
                       ("assistant", "Thanks for telling me."),
                       ("user", "Is it ok to mix these?")), "joined",
                 id="the last turn read with what came before"),
]


@pytest.mark.parametrize("request_, where", CASES)
def test_the_record_names_where_the_text_that_set_the_price_sits(
        request_: Any, where: str) -> None:
    guard = Guard()
    record = guard.decide(request_, "", confidence=0.5)
    assert record.cost_source == "model"
    assert record.priced_by == where
    assert guard.price(request_).priced_by == where


@pytest.mark.parametrize("request_, kwargs", [
    pytest.param(_chat(("user", "Hi there!")), {}, id="nothing asked"),
    pytest.param(_chat(("user", DOSE)), {"cost": 3.0}, id="a cost the caller gives"),
    pytest.param({"previous_response_id": "resp_1", "input": "and for a child?"}, {},
                 id="text upstream (a ceiling)"),
])
def test_no_text_sets_the_price(request_: Any, kwargs: dict[str, Any]) -> None:
    record = Guard().decide(request_, "", confidence=0.5, **kwargs)
    assert record.cost_source != "model"
    assert record.priced_by is None


def test_trusting_the_prompt_moves_the_price_to_the_users_question() -> None:
    body = _chat(("system", SAFETY), ("user", CAPITAL))
    record = Guard(asking=AskingConfig.trusting([SAFETY])).decide(body, "", confidence=0.5)
    assert record.priced_by == "user"
    assert record.cost == pytest.approx(Guard().price(CAPITAL).cost)


def test_the_client_is_not_told_which_of_its_texts_set_the_price() -> None:
    # for the operator (audit log, metrics, the dry run); the reply's `utilityguard` object
    # and GET /v1/decisions/{id} carry their own allow-lists of fields, without it
    from guard.proxy.decisions import decision_entry

    record = Guard().decide(_chat(("system", SAFETY), ("user", CAPITAL)), "", confidence=0.5)
    assert record.priced_by == "system"
    for shown in (record.summary(), decision_entry(record, route="*", model="m", created=0)):
        assert "priced_by" not in shown
        assert "system" not in {str(v) for v in shown.values()}
