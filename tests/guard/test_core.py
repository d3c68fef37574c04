"""Guard.decide: the decision table over (L, p, C_R), modes, sources of p and cost, errors."""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import types
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cost_models
from guard import (
    Confidence,
    ConfigError,
    DecisionRecord,
    Guard,
    LogprobExtractor,
    last_decision,
)
from policies import answer_threshold, expected_utility, refusal_expected_utility, should_answer

Q = "What is the maximum daily dose of acetaminophen for an adult?"


@pytest.mark.parametrize(
    ("cost", "p", "c_r", "expected"),
    [
        pytest.param(8.0, 0.9, 2.0, "answer", id="L8-p0.9-answer"),
        pytest.param(8.0, 0.5, 2.0, "refuse", id="L8-p0.5-refuse"),
        pytest.param(8.0, 6 / 9, 2.0, "answer", id="L8-exactly-at-threshold-answers"),
        pytest.param(8.0, math.nextafter(6 / 9, 0.0), 2.0, "refuse", id="L8-just-below-refuses"),
        pytest.param(3.0, 0.5, 1.0, "answer", id="L3-CR1-exact-0.5"),
        pytest.param(3.0, math.nextafter(0.5, 0.0), 1.0, "refuse", id="L3-CR1-below-0.5"),
        pytest.param(20.0, 0.85, 2.0, "refuse", id="L20-threshold-0.857"),
        pytest.param(20.0, 0.86, 2.0, "answer", id="L20-above"),
        pytest.param(2.0, 0.0, 2.0, "answer", id="L-equals-CR-threshold-0"),
        pytest.param(1.0, 0.0, 2.0, "answer", id="cheap-error-always-answer"),
        pytest.param(0.5, 0.3, 0.0, "refuse", id="CR0-threshold-1/3"),
        pytest.param(1.0, 0.5, 0.0, "answer", id="CR0-exact-0.5"),
        pytest.param(100.0, 0.97, 2.0, "refuse", id="L100-needs-0.9703"),
        pytest.param(100.0, 1.0, 2.0, "answer", id="L100-certain"),
    ],
)
def test_decision_table(cost: float, p: float, c_r: float, expected: str) -> None:
    record = Guard(c_r=c_r, policy=None).decide(Q, "400 mg", confidence=p, cost=cost)
    assert record.decision == expected
    assert (record.decision == "answer") == should_answer(p, cost, c_r)
    assert record.threshold == answer_threshold(cost, c_r)
    assert record.expected_utility_answer == pytest.approx(expected_utility(p, cost))
    assert record.expected_utility_refuse == -c_r
    assert (record.cost, record.cost_source, record.p, record.p_source) == (
        cost, "caller", p, "caller")


@pytest.mark.parametrize(
    ("mode", "delivered"),
    [
        pytest.param("enforce", "I cannot answer.", id="enforce-substitutes"),
        pytest.param("shadow", "400 mg", id="shadow-delivers"),
    ],
)
def test_modes_record_the_same_decision(mode: str, delivered: str, guard_with_cost: Any) -> None:
    guard = guard_with_cost(8.0, mode=mode)
    record = guard.decide(Q, "400 mg", confidence=0.5)
    assert record.decision == "refuse"
    assert record.mode == mode
    assert record.substitutes_refusal is (mode == "enforce")
    assert guard.deliver("400 mg", record) == delivered


def test_per_call_overrides_win(guard_with_cost: Any) -> None:
    guard = guard_with_cost(8.0, c_r=2.0)
    assert guard.decide(Q, "400 mg", confidence=0.5).decision == "refuse"
    cheap = guard.decide(Q, "400 mg", confidence=0.5, c_r=7.0)
    assert (cheap.decision, cheap.c_r) == ("answer", 7.0)
    shadow = guard.decide(Q, "400 mg", confidence=0.5, mode="shadow")
    assert shadow.mode == "shadow"
    unsure = guard.decide(Q, "400 mg", confidence=0.5, c_r=1.0, alpha=0.5)
    assert unsure.alpha == 0.5
    assert unsure.threshold == answer_threshold(8.0, 1.0, alpha=0.5)
    assert unsure.expected_utility_refuse == refusal_expected_utility(1.0, alpha=0.5)


def test_cost_from_model_is_called_once_per_decision(fixed_cost: Any) -> None:
    model = fixed_cost(8.0)
    guard = Guard(model, policy=None)
    record = guard.decide(Q, "400 mg", confidence=0.9)
    assert (record.cost, record.cost_source, model.calls) == (8.0, "model", 1)
    guard.decide(Q, "400 mg", confidence=0.9, cost=3.0)
    assert model.calls == 1


@pytest.mark.parametrize(
    ("policy", "cost", "expected", "p", "p_source"),
    [
        pytest.param("refuse", 8.0, "refuse", None, "none", id="refuse-policy"),
        pytest.param("answer", 8.0, "answer", None, "none", id="answer-policy"),
        pytest.param(0.9, 8.0, "answer", 0.9, "prior", id="high-prior"),
        pytest.param(0.2, 8.0, "refuse", 0.2, "prior", id="low-prior"),
        pytest.param("refuse", 1.0, "answer", None, "none", id="every-p-answers-when-threshold<=0"),
    ],
)
def test_no_confidence_policy(policy: Any, cost: float, expected: str, p: float | None,
                              p_source: str) -> None:
    record = Guard(no_confidence=policy, policy=None).decide(Q, "400 mg", cost=cost)
    assert (record.decision, record.p, record.p_source) == (expected, p, p_source)
    assert record.expected_utility_answer is None if p is None else record.margin is not None


@pytest.mark.parametrize(
    ("response", "delivered"),
    [
        pytest.param("I cannot answer.", "I cannot answer.", id="paper-refusal"),
        pytest.param("I'm sorry, but I can't help with that.",
                     "I'm sorry, but I can't help with that.", id="apology"),
        pytest.param("I cannot answer.\nConfidence: 10%", "I cannot answer.",
                     id="with-confidence-line"),
        pytest.param("", "", id="empty"),
        pytest.param(None, None, id="no-content"),
    ],
)
def test_model_refusals_pass_through(response: str | None, delivered: str | None) -> None:
    """The model's own refusal is delivered in its own words (without a confidence line)."""
    guard = Guard(policy=None)
    record = guard.decide(Q, response, confidence=0.99, cost=1.0)
    assert record.decision == "passthrough_refusal"
    assert record.delivered_refusal and not record.substitutes_refusal
    if response is not None:
        assert guard.deliver(response, record) == delivered


class _Doubling:
    signal = "logprob_mean"

    def predict(self, x: Any) -> Any:
        return np.clip(np.exp(np.asarray(x, dtype=float)) / 2.0, 0.0, 1.0)


@pytest.mark.parametrize(
    ("guard_kwargs", "confidence", "p", "p_source", "signal"),
    [
        pytest.param({}, {"logprob_mean": math.log(0.9)}, 0.9, "uncalibrated", "logprob_mean",
                     id="raw-exp-logprob"),
        pytest.param({}, {"verbal": 0.85}, 0.85, "uncalibrated", "verbal", id="raw-verbal"),
        pytest.param({}, {"verbal": 0.85, "logprob_mean": -0.1}, math.exp(-0.1), "uncalibrated",
                     "logprob_mean", id="logprob-preferred"),
        pytest.param({"signal": "verbal"}, {"verbal": 0.85, "logprob_mean": -0.1}, 0.85,
                     "uncalibrated", "verbal", id="signal-chosen"),
        pytest.param({"signal": "verbal"}, {"logprob_mean": -0.1}, None, "none", None,
                     id="chosen-signal-missing"),
        pytest.param({}, {"consistency": 0.6}, 0.6, "uncalibrated", "consistency",
                     id="raw-consistency"),
        pytest.param({}, {"verbal": 0.85, "caller": 0.3}, 0.3, "caller", "caller",
                     id="caller-wins-uncalibrated"),
        pytest.param({"calibrator": _Doubling()}, {"logprob_mean": math.log(0.8), "caller": 0.3},
                     0.4, "calibrated", "logprob_mean", id="calibrated"),
        pytest.param({"calibrator": _Doubling()}, {"verbal": 0.9}, None, "none", None,
                     id="calibrator-signal-missing"),
        pytest.param({"calibrator": _Doubling()}, {"caller": 0.3}, 0.3, "caller", "caller",
                     id="calibrator-signal-missing-caller"),
    ],
)
def test_probability_sources(guard_kwargs: dict[str, Any], confidence: dict[str, float],
                             p: float | None, p_source: str, signal: str | None) -> None:
    record = Guard(**guard_kwargs, policy=None).decide(Q, "400 mg", confidence=confidence,
                                                        cost=8.0)
    assert record.p == (pytest.approx(p) if p is not None else None)
    assert (record.p_source, record.signal) == (p_source, signal)
    assert record.signal_value == (confidence.get(signal) if signal else None)


@pytest.mark.slow  # hypothesis: many examples (make test-fast leaves it out)
@settings(max_examples=300, deadline=None)
@given(
    cost=st.floats(1e-3, 1e3),
    p=st.floats(0.0, 1.0),
    c_r=st.floats(0.0, 50.0),
    alpha=st.one_of(st.none(), st.floats(0.0, 1.0)),
)
def test_decide_agrees_with_should_answer(cost: float, p: float, c_r: float,
                                          alpha: float | None) -> None:
    guard = Guard(c_r=c_r, alpha=alpha, policy=None)
    record = guard.decide(Q, "400 mg", confidence=Confidence(caller=p), cost=cost)
    al = 1.0 if alpha is None else alpha
    assert (record.decision == "answer") == should_answer(p, cost, c_r, alpha=al)
    assert record.threshold == answer_threshold(cost, c_r, alpha=al)


class _Cost:
    def __init__(self, cost: float) -> None:
        self.cost = cost

    def predict(self, texts: Any) -> Any:
        return np.full(len(texts), self.cost)


@pytest.mark.slow  # hypothesis: many examples (make test-fast leaves it out)
@settings(max_examples=100, deadline=None)
@given(cost=st.floats(1e-3, 1e3), lp=st.floats(-20.0, 0.0), c_r=st.floats(0.0, 10.0))
def test_decide_with_model_cost_agrees_with_should_answer(cost: float, lp: float,
                                                          c_r: float) -> None:
    record = Guard(_Cost(cost), c_r=c_r, policy=None).decide(
        Q, "400 mg", confidence={"logprob_mean": lp})
    assert record.p == pytest.approx(math.exp(lp))
    assert (record.decision == "answer") == should_answer(record.p, cost, c_r)


def test_default_cost_model_is_loaded_lazily_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[int] = []

    def load_default() -> _Cost:
        loads.append(1)
        return _Cost(4.0)

    monkeypatch.setattr(cost_models, "load_default", load_default, raising=False)
    guard = Guard(policy=None)
    assert loads == []
    guard.decide(Q, "400 mg", confidence=0.9)
    record = guard.decide(Q, "400 mg", confidence=0.9)
    assert (loads, record.cost, record.cost_source) == ([1], 4.0, "model")


def test_default_cost_model_is_the_shipped_one() -> None:
    question = "What is the capital of France?"
    guard = Guard(policy=None)
    record = guard.decide(question, "Paris", confidence=0.99)
    expected = float(cost_models.load_default().predict([question])[0])
    assert (record.cost_source, record.cost) == ("model", pytest.approx(expected))
    assert record.cost > 0.0 and guard.cost_model is guard.cost_model


def test_missing_default_cost_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # a cost_models without load_default (e.g. a stripped-down install)
    monkeypatch.setitem(sys.modules, "cost_models", types.ModuleType("cost_models"))
    with pytest.raises(ConfigError, match="load_default"):
        Guard(policy=None).decide(Q, "400 mg", confidence=0.9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        pytest.param({"c_r": -1.0}, "c_r must be a finite number >= 0", id="negative-c_r"),
        pytest.param({"c_r": math.inf}, "c_r must be a finite", id="infinite-c_r"),
        pytest.param({"mode": "log"}, "mode must be 'enforce' or 'shadow'", id="mode"),
        pytest.param({"no_confidence": "maybe"}, "no_confidence must be", id="policy-word"),
        pytest.param({"no_confidence": 1.5}, r"no_confidence must be a finite number in \[0",
                     id="policy-prior"),
        pytest.param({"alpha": 2.0}, "alpha must be", id="alpha"),
        pytest.param({"signal": "vibes"}, "unknown confidence signal 'vibes'", id="signal"),
        pytest.param({"signal": "verbal", "calibrator": _Doubling()}, "calibrator reads",
                     id="signal-vs-calibrator"),
        pytest.param({"refusal_text": "  "}, "refusal_text", id="refusal-text"),
    ],
)
def test_bad_configuration_is_refused(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Guard(**kwargs)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        pytest.param({"query": None}, "needs the query text", id="no-query-no-cost"),
        pytest.param({"cost": 0.0}, "cost must be a finite number > 0", id="zero-cost"),
        pytest.param({"cost": float("nan")}, "cost must be a finite", id="nan-cost"),
        pytest.param({"confidence": 1.2}, "confidence caller", id="p-above-1"),
        pytest.param({"confidence": {"logprob_mean": 0.5}}, "logprob_mean", id="positive-logprob"),
        pytest.param({"confidence": {"gut": 0.5}}, "gut", id="unknown-signal"),
        pytest.param({"confidence": "high"}, "must be a probability", id="string-confidence"),
        pytest.param({"mode": "dry-run"}, "mode must be", id="mode"),
    ],
)
def test_bad_calls_are_refused(call: dict[str, Any], match: str) -> None:
    kwargs: dict[str, Any] = {"query": Q, "confidence": 0.5, **call}
    query = kwargs.pop("query")
    with pytest.raises(ValueError, match=match):
        Guard(_Cost(8.0), policy=None).decide(query, "400 mg", **kwargs)


def test_bad_cost_model_output_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"the cost model returned -1\.0"):
        Guard(_Cost(-1.0), policy=None).decide(Q, "400 mg", confidence=0.5)


def test_record_is_a_json_row_with_the_design_fields() -> None:
    record = Guard(policy=None).decide(Q, "400 mg", confidence=0.5, cost=8.0, request_id="req-1")
    row = record.model_dump(mode="json")
    design = {"request_id", "cost", "cost_source", "p", "p_source", "threshold", "c_r",
              "expected_utility_answer", "expected_utility_refuse", "decision", "mode",
              "latency_ms"}
    assert design <= set(row)
    assert set(row) - design == {"alpha", "signal", "signal_value", "policy", "priced_by"}
    assert DecisionRecord.model_validate_json(record.model_dump_json()) == record
    assert row["request_id"] == "req-1" and row["latency_ms"] >= 0.0
    assert len(Guard(policy=None).decide(Q, "x", confidence=0.5, cost=8.0).request_id) == 32


def test_last_decision_is_per_thread_and_per_task() -> None:
    guard = Guard(c_r=2.0, policy=None)
    mine = guard.decide(Q, "400 mg", confidence=0.9, cost=8.0)
    seen: list[Any] = []

    def other_thread() -> None:
        seen.append(last_decision())
        seen.append(guard.decide(Q, "400 mg", confidence=0.1, cost=8.0))

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen[0] is None
    assert last_decision() is mine

    async def task(p: float) -> Any:
        record = guard.decide(Q, "400 mg", confidence=p, cost=8.0)
        await asyncio.sleep(0)
        return record, last_decision()

    async def main() -> list[Any]:
        return list(await asyncio.gather(task(0.1), task(0.9)))

    for record, latest in asyncio.run(main()):
        assert latest is record
    assert last_decision() is mine


def test_extract_clean_and_request_overrides() -> None:
    guard = Guard(policy=None)
    body = {"model": "m", "messages": [{"role": "user", "content": Q}]}
    new = guard.request_overrides(body)
    assert body == {"model": "m", "messages": [{"role": "user", "content": Q}]}
    assert new["logprobs"] is True and new["messages"][0]["role"] == "system"
    assert guard.extract("4 g.\nConfidence: 70%") == Confidence(verbal=0.7)
    assert guard.clean("4 g.\nConfidence: 70%") == "4 g."
    plain = Guard(extractors=[LogprobExtractor()], policy=None)
    assert plain.clean("4 g.\nConfidence: 70%") == "4 g.\nConfidence: 70%"
    assert plain.request_overrides(body) == {**body, "logprobs": True, "top_logprobs": 1}


def test_apply_on_text_reads_verbal_confidence(guard_with_cost: Any) -> None:
    guard = guard_with_cost(8.0)
    delivered, record = guard.apply(Q, "4 g per day.\nConfidence: 95%")
    assert (delivered, record.decision, record.p_source) == ("4 g per day.", "answer",
                                                            "uncalibrated")
    delivered, record = guard.apply(Q, "4 g per day.\nConfidence: 40%")
    assert (delivered, record.decision) == ("I cannot answer.", "refuse")
    with pytest.raises(ConfigError, match="must be a str or a chat completion"):
        guard.apply(Q, 42)


def test_a_calibrator_must_read_a_signal_the_extractors_provide() -> None:
    from guard import ConsistencyExtractor, VerbalExtractor
    from guard.decision_config import DecisionConfig

    class Reads:
        def __init__(self, signal: str) -> None:
            self.signal = signal

        def predict(self, x: Any) -> Any:
            return np.full(len(x), 0.5)

    with pytest.raises(ConfigError, match="reads 'consistency', which the guard's extractors"):
        Guard(calibrator=Reads("consistency"), extractors=[VerbalExtractor()])
    Guard(calibrator=Reads("consistency"), extractors=[ConsistencyExtractor(n=3)])
    Guard(calibrator=Reads("caller"), extractors=[])  # a caller's p needs no extractor
    cfg = DecisionConfig.build(c_r=5.0, mode="shadow")
    g = Guard(config=cfg, c_r=1.0)  # the value object wins over the keywords
    assert (g.c_r, g.mode, g.config) == (5.0, "shadow", cfg)
