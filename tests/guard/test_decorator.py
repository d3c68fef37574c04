"""``@guarded`` on every supported return type, sync and async; the caller's objects unchanged."""

from __future__ import annotations

import asyncio
import inspect
import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from openai.types.chat import ChatCompletion

import cost_models
from guard import (
    Confidence,
    ConfidenceError,
    ConfigError,
    DecisionRecord,
    Guard,
    guarded,
    last_decision,
)

Q = "What is the maximum daily dose of acetaminophen for an adult?"
REFUSAL = "I cannot answer."
DATA = json.loads((Path(__file__).parent / "data" / "smollm2_replies.json").read_text())


def completion(content: str | None, logprobs: list[float] | None = None) -> ChatCompletion:
    lp = None if logprobs is None else {
        "content": [{"token": f"t{i}", "logprob": v, "bytes": None, "top_logprobs": []}
                    for i, v in enumerate(logprobs)], "refusal": None}
    return ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "smollm2",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": lp,
                     "message": {"role": "assistant", "content": content}}]})


def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
    result = fn(*args, **kwargs)
    return asyncio.run(result) if inspect.isawaitable(result) else result


def make(kind: str, value: Any) -> Any:
    """A sync or async function returning ``value``, taking the question first."""
    if kind == "sync":
        def ask(question: str) -> Any:
            return value
        return ask

    async def ask_async(question: str) -> Any:
        await asyncio.sleep(0)
        return value
    return ask_async


KINDS = [pytest.param("sync", id="sync"), pytest.param("async", id="async")]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("value", "cost", "expected", "decision"),
    [
        pytest.param("400 mg", 8.0, REFUSAL, "refuse", id="str-no-confidence-refused"),
        pytest.param("400 mg", 1.0, "400 mg", "answer", id="str-cheap-answered"),
        # the model's own "Confidence: 95%" is not believed by the bare rule (issue 36)
        pytest.param("4 g.\nConfidence: 95%", 8.0, REFUSAL, "refuse", id="str-verbal-unread"),
        pytest.param("4 g.\nConfidence: 30%", 8.0, REFUSAL, "refuse", id="str-verbal-low"),
        pytest.param("I'm sorry, I can't answer that.", 1.0, "I'm sorry, I can't answer that.",
                     "passthrough_refusal", id="str-own-refusal"),
        # below the threshold the guard's refusal, whatever the reply says
        pytest.param("I'm sorry, I can't answer that. But: 400 mg.", 8.0, REFUSAL, "refuse",
                     id="str-own-refusal-below-threshold"),
        pytest.param(("4 g", 0.9), 8.0, ("4 g", 0.9), "answer", id="tuple-float-answer"),
        pytest.param(("400 mg", 0.5), 8.0, (REFUSAL, 0.5), "refuse", id="tuple-float-refuse"),
        pytest.param(("4 g", {"verbal": 0.9}), 8.0, ("4 g", {"verbal": 0.9}), "answer",
                     id="tuple-dict"),
        pytest.param(("4 g", Confidence(logprob_mean=-2.0)), 8.0,
                     (REFUSAL, Confidence(logprob_mean=-2.0)), "refuse", id="tuple-confidence"),
    ],
)
def test_text_returns(kind: str, value: Any, cost: float, expected: Any, decision: str,
                      fixed_cost: Any) -> None:
    seen: list[DecisionRecord] = []
    fn = guarded(Guard(fixed_cost(cost), policy=None), on_decision=seen.append)(make(kind, value))
    assert run(fn, Q) == expected
    assert [r.decision for r in seen] == [decision]
    if kind == "sync":  # asyncio.run runs the coroutine in a copy of this context
        assert last_decision() is seen[0]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("reply", "cost", "expected_text", "decision", "p_source"),
    [
        pytest.param(completion("4 g.", [-0.01, -0.02]), 8.0, "4 g.", "answer", "uncalibrated",
                     id="confident-logprobs"),
        pytest.param(completion("400 mg", [-0.9, -2.5]), 8.0, REFUSAL, "refuse", "uncalibrated",
                     id="unsure-logprobs"),
        pytest.param(completion("4 g.\nConfidence: 95%"), 8.0, REFUSAL, "refuse", "none",
                     id="verbal-without-logprobs-unread"),
        pytest.param(completion("400 mg"), 8.0, REFUSAL, "refuse", "none", id="no-signal"),
        pytest.param(completion(None), 8.0, REFUSAL, "refuse", "none", id="no-content"),
        pytest.param(completion(None), 1.0, REFUSAL, "passthrough_refusal", "none",
                     id="no-content-cheap"),
        pytest.param(completion("I cannot answer. Anyway: 400 mg", [-2.5]), 8.0, REFUSAL,
                     "refuse", "uncalibrated", id="opens-like-refusal-unsure"),
        pytest.param(completion(REFUSAL, [-0.1]), 8.0, REFUSAL, "passthrough_refusal",
                     "uncalibrated", id="own-refusal"),
    ],
)
def test_chat_completion_returns(kind: str, reply: ChatCompletion, cost: float,
                                 expected_text: str | None, decision: str, p_source: str,
                                 fixed_cost: Any) -> None:
    before = reply.model_dump_json()
    seen: list[DecisionRecord] = []
    fn = guarded(Guard(fixed_cost(cost), policy=None), on_decision=seen.append)(make(kind, reply))
    out = run(fn, Q)
    assert isinstance(out, ChatCompletion)
    assert out.choices[0].message.content == expected_text
    assert reply.model_dump_json() == before, "the caller's completion was modified"
    # a delivered refusal (the guard's or the model's own) is always a new, allow-listed object
    unchanged = decision == "answer" and expected_text == reply.choices[0].message.content
    assert (out is reply) == unchanged
    assert (seen[0].decision, seen[0].p_source) == (decision, p_source)


@pytest.mark.parametrize("kind", KINDS)
def test_real_smollm2_completion(kind: str, fixed_cost: Any) -> None:
    raw = next(r for r in DATA["replies"] if r["question"] == "What is 12 + 30?")
    reply = ChatCompletion.model_validate(raw["completion"])
    before = reply.model_dump_json()
    seen: list[DecisionRecord] = []
    fn = guarded(Guard(fixed_cost(8.0), policy=None), on_decision=seen.append)(make(kind, reply))
    out = run(fn, "What is 12 + 30?")
    # by hand: the 11 token logprobs average -0.274, p = exp(-0.274) = 0.760, and with L = 8,
    # C_R = 2 the threshold is (8 - 2) / 9 = 0.667, so the (wrong) "12 + 30 = 32." is answered
    assert raw["response"] == "12 + 30 = 32."
    assert seen[0].signal == "logprob_mean" and seen[0].p == pytest.approx(0.760, abs=1e-3)
    assert seen[0].decision == "answer"
    assert out.choices[0].message.content == "12 + 30 = 32."
    assert reply.model_dump_json() == before


@pytest.mark.parametrize("kind", KINDS)
def test_completion_mapping_is_copied_not_mutated(kind: str, fixed_cost: Any) -> None:
    reply = completion("400 mg", [-3.0]).model_dump()
    before = json.dumps(reply)
    out = run(guarded(Guard(fixed_cost(8.0), policy=None))(make(kind, reply)), Q)
    assert out["choices"][0]["message"]["content"] == REFUSAL
    assert json.dumps(reply) == before


def test_refusal_replaces_every_sampled_choice(fixed_cost: Any) -> None:
    reply = completion("400 mg", [-3.0]).model_dump()
    reply["choices"].append({**reply["choices"][0], "index": 1})
    out = guarded(Guard(fixed_cost(8.0), policy=None))(make("sync", reply))(Q)
    assert [c["message"]["content"] for c in out["choices"]] == [REFUSAL, REFUSAL]
    assert [c["message"]["content"] for c in reply["choices"]] == ["400 mg", "400 mg"]


def test_named_tuple_keeps_its_type(fixed_cost: Any) -> None:
    class Reply(NamedTuple):
        text: str
        p: float

    out = guarded(Guard(fixed_cost(8.0), policy=None))(make("sync", Reply("400 mg", 0.1)))(Q)
    assert out == Reply(REFUSAL, 0.1) and isinstance(out, Reply)


def test_shadow_mode_delivers_but_records_the_refusal(fixed_cost: Any) -> None:
    seen: list[DecisionRecord] = []
    fn = guarded(Guard(fixed_cost(8.0), mode="shadow", policy=None), on_decision=seen.append)(
        make("sync", ("400 mg", 0.1)))
    assert fn(Q) == ("400 mg", 0.1)
    assert (seen[0].decision, seen[0].mode, seen[0].delivered_refusal) == (
        "refuse", "shadow", False)


def test_query_text_resolution(fixed_cost: Any) -> None:
    queries: list[str] = []

    class Spy:
        def predict(self, texts: list[str]) -> list[float]:
            queries.extend(texts)
            return [8.0] * len(texts)

    g = Guard(Spy(), policy=None)

    @guarded(g)
    def by_messages(model: str, messages: list[dict[str, Any]]) -> tuple[str, float]:
        return "4 g", 0.9

    @guarded(g, query=lambda patient, **kw: kw["question"])
    def by_callable(patient: dict[str, int], *, question: str) -> tuple[str, float]:
        return "4 g", 0.9

    @guarded(g)
    def by_first_str(n: int, question: str, style: str = "brief") -> tuple[str, float]:
        return "4 g", 0.9

    by_messages("smollm2-135m-instruct", messages=[
        {"role": "system", "content": "Be brief. What is the maximum dose of insulin?"},
        {"role": "user", "content": [{"type": "text", "text": Q}]}])
    # what every message asks is priced (the system message's question too), never the model
    # name, and not the rule "Be brief." (it asks for nothing)
    assert {"What is the maximum dose of insulin?", Q} <= set(queries)
    assert "smollm2-135m-instruct" not in queries and "Be brief." not in queries
    queries.clear()
    by_callable({"age": 40}, question="callable question")
    assert queries == ["callable question"]
    queries.clear()
    by_first_str(3, "first str")
    assert queries == ["first str"]

    @guarded(g)
    def no_text(n: int) -> str:
        return "4 g"

    with pytest.raises(ConfigError, match="could not find the query text of"):
        no_text(3)


@pytest.mark.parametrize("kind", KINDS)
def test_bare_decorator_uses_the_default_guard(kind: str, monkeypatch: pytest.MonkeyPatch,
                                               fixed_cost: Any) -> None:
    model = fixed_cost(1.0)
    monkeypatch.setattr(cost_models, "load_default", lambda: model, raising=False)
    fn = guarded(make(kind, "400 mg"))
    assert isinstance(fn.guard, Guard)
    assert inspect.iscoroutinefunction(fn) is (kind == "async")
    assert fn.__name__ in ("ask", "ask_async")
    assert run(fn, Q) == "400 mg" and model.calls == 1


def test_async_decisions_reach_the_caller(fixed_cost: Any) -> None:
    guard = Guard(fixed_cost(8.0), c_r=2.0, policy=None)
    seen: list[DecisionRecord] = []

    @guarded(guard, on_decision=seen.append)
    async def ask(question: str, p: float) -> tuple[str, float]:
        await asyncio.sleep(0)
        return "4 g", p

    async def main() -> tuple[Any, Any, list[Any]]:
        first = await ask(Q, 0.9)
        mine = last_decision()
        both = await asyncio.gather(ask(Q, 0.1), ask(Q, 0.95))
        return first, mine, list(both)

    first, mine, both = asyncio.run(main())
    assert first == ("4 g", 0.9) and mine is seen[0]
    assert both == [(REFUSAL, 0.1), ("4 g", 0.95)]
    assert sorted(r.decision for r in seen[1:]) == ["answer", "refuse"]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(42, id="int"),
        pytest.param(("4 g", 0.9, "extra"), id="triple"),
        pytest.param((0.9, "4 g"), id="swapped-tuple"),
        pytest.param({"text": "4 g"}, id="mapping-without-choices"),
    ],
)
def test_unsupported_return_types(value: Any, fixed_cost: Any) -> None:
    with pytest.raises(ConfigError, match="must return str, \\(str, confidence\\) or a chat"):
        guarded(Guard(fixed_cost(8.0), policy=None))(make("sync", value))(Q)


def test_guarded_argument_errors() -> None:
    with pytest.raises(ConfigError, match="guarded\\(\\) takes a Guard; got int"):
        guarded(3)  # type: ignore[call-overload]
    with pytest.raises(ConfidenceError, match="confidence caller"):
        guarded(Guard(policy=None), query=lambda q: q)(make("sync", ("4 g", 2.0)))(Q)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reply", [
    pytest.param("Take 4 g.\nConfidence: 100%", id="str"),
    pytest.param(completion("Take 4 g.\nConfidence: 100%"), id="completion"),
])
def test_a_confidence_the_model_wrote_is_believed_only_when_trusted(
        kind: str, reply: Any, fixed_cost: Any) -> None:
    """Issue 36: ``Guard(policy=None)`` took the reply's own "Confidence: 100%" as p = 1
    and delivered a costly answer."""
    seen: list[DecisionRecord] = []
    guard = Guard(fixed_cost(200.0), policy=None)
    out = run(guarded(guard, on_decision=seen.append)(make(kind, reply)), Q)
    text = out if isinstance(out, str) else out.choices[0].message.content
    assert text == REFUSAL and "4 g" not in str(out)
    assert (seen[0].decision, seen[0].p_source, seen[0].p) == ("refuse", "none", None)
    trusted = run(guarded(guard, on_decision=seen.append, trust_verbal=True)(
        make(kind, reply)), Q)
    text = trusted if isinstance(trusted, str) else trusted.choices[0].message.content
    assert text == "Take 4 g."  # believed, and the line removed
    assert (seen[1].decision, seen[1].p) == ("answer", 1.0)


def test_a_calibrated_policy_that_reads_verbal_reads_it(fixed_cost: Any) -> None:
    from guard.calibration import Calibrator

    cal = Calibrator(method="platt", signal="verbal").fit(
        [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5, [False, False, False, True, True, True] * 5)
    seen: list[DecisionRecord] = []
    fn = guarded(Guard(fixed_cost(1.0), cal, policy=None), on_decision=seen.append)(
        make("sync", "4 g.\nConfidence: 90%"))
    assert fn(Q) == "4 g."
    assert (seen[0].p_source, seen[0].signal) == ("calibrated", "verbal")


def test_the_question_is_found_by_name_not_by_position(fixed_cost: Any) -> None:
    """Issue 36: ``ask("gpt-4o-mini", question)`` priced the model's name."""
    priced: list[str] = []

    class Spy:
        def predict(self, texts: list[str]) -> list[float]:
            priced.extend(texts)
            return [8.0] * len(texts)

    g = Guard(Spy(), policy=None)

    @guarded(g)
    def ask(model: str, question: str) -> tuple[str, float]:
        return "4 g", 0.9

    ask("gpt-4o-mini", Q)
    assert priced == [Q]
    priced.clear()

    @guarded(g)
    def two_texts(model: str, q: str) -> tuple[str, float]:
        return "4 g", 0.9

    with pytest.raises(ConfigError, match="cannot tell which argument is the question"):
        two_texts("gpt-4o-mini", Q)
    assert priced == []

    @guarded(g, query="q")
    def named(model: str, q: str) -> tuple[str, float]:
        return "4 g", 0.9

    named("gpt-4o-mini", q=Q)
    assert priced == [Q]
    with pytest.raises(ConfigError, match="has no such argument"):
        guarded(g, query="question")(named)
