"""Confidence extractors on realistic and real (SmolLM2-135M) replies, including no-signal cases."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai.types.chat import ChatCompletion

from guard import (
    Confidence,
    ConfidenceError,
    ConfigError,
    ConsistencyExtractor,
    Extractor,
    LogprobExtractor,
    VerbalExtractor,
    consistency,
)
from guard.confidence import VERBAL_INSTRUCTION, parse_verbal_confidence
from guard.confidence.extractors import apply_overrides, extract_confidence
from guard.response_records import parse_response_record

DATA = json.loads((Path(__file__).parents[1] / "data" / "smollm2_replies.json").read_text())
SERVER = [r for r in DATA["replies"] if r["source"] == "llama_server"]


def _chat(content: Any, **choice: Any) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}, **choice}]}


def test_every_extractor_satisfies_the_protocol() -> None:
    for ex in (LogprobExtractor(), VerbalExtractor(), ConsistencyExtractor()):
        assert isinstance(ex, Extractor)


@pytest.mark.parametrize("reply", [pytest.param(r, id=r["id"]) for r in SERVER])
def test_logprobs_of_real_smollm2_completions(reply: dict[str, Any]) -> None:
    values = [t["logprob"] for t in reply["completion"]["choices"][0]["logprobs"]["content"]]
    k = max(1, math.ceil(0.1 * len(values)))
    conf = LogprobExtractor().extract(reply["completion"])
    assert conf.logprob_mean == pytest.approx(sum(values) / len(values))
    assert conf.logprob_low10 == pytest.approx(sum(sorted(values)[:k]) / k)
    as_openai = ChatCompletion.model_validate(reply["completion"])
    assert LogprobExtractor().extract(as_openai) == conf


def test_collected_record_is_read_by_the_one_reader() -> None:
    """A record ``utilityguard collect`` wrote parses as a response record, and its signals
    obey the definition (the mean of the lowest 10% of logprobs is <= their mean <= 0)."""
    raw = next(r for r in DATA["replies"] if r["source"] == "collect_run")["record"]
    rec = parse_response_record(raw, "collect_run")
    assert rec.confidence.logprob_low10 is not None and rec.confidence.logprob_mean is not None
    assert rec.confidence.logprob_low10 <= rec.confidence.logprob_mean <= 0.0
    assert rec.answered is raw["answered"] and rec.response == raw.get("response")


def test_logprob_signal_by_hand() -> None:
    """20 tokens: the lowest 10% are the two lowest (-3 and -2), mean -2.5; the mean of all
    is (-3 - 2 - 18 * 0.5) / 20 = -0.7."""
    tokens = [{"token": "t", "logprob": v} for v in [-3.0, -2.0] + [-0.5] * 18]
    conf = LogprobExtractor().extract(_chat("x", logprobs={"content": tokens}))
    assert conf.logprob_low10 == pytest.approx(-2.5)
    assert conf.logprob_mean == pytest.approx(-0.7)


@pytest.mark.parametrize(
    "completion",
    [
        pytest.param(_chat("Paris", logprobs=None), id="logprobs-null"),
        pytest.param(_chat("Paris", logprobs={"content": None}), id="content-null"),
        pytest.param(_chat("Paris", logprobs={"content": []}), id="content-empty"),
        pytest.param(_chat("Paris", logprobs={"content": [{"token": "P", "logprob": None}]}),
                     id="token-logprob-null"),
        pytest.param(_chat("Paris", logprobs={"refusal": None}), id="no-content-key"),
        pytest.param(_chat("Paris"), id="logprobs-key-missing"),
        pytest.param({"choices": []}, id="no-choices"),
        pytest.param({}, id="empty-object"),
        pytest.param("Paris", id="plain-text"),
        pytest.param(ChatCompletion.model_validate(_chat("Paris")), id="openai-no-logprobs"),
    ],
)
def test_missing_logprobs_give_no_signal(completion: Any) -> None:
    assert LogprobExtractor().extract(completion).is_empty


def test_legacy_completions_logprobs_format() -> None:
    conf = LogprobExtractor().extract(
        {"choices": [{"text": "Paris", "logprobs": {"token_logprobs": [-0.5, -1.5]}}]})
    assert (conf.logprob_mean, conf.logprob_low10) == (-1.0, -1.5)


@pytest.mark.parametrize(
    ("text", "value", "cleaned"),
    [
        pytest.param("The capital is Paris.\nConfidence: 85%", 0.85, "The capital is Paris.",
                     id="percent"),
        pytest.param("42\nConfidence: 0.85", 0.85, "42", id="decimal"),
        pytest.param("B) Ammonia\nConfidence: 8/10", 0.8, "B) Ammonia", id="out-of-ten"),
        pytest.param("4 g\n**Confidence:** 90%", 0.9, "4 g", id="markdown-bold"),
        pytest.param("4 g\nConfidence level: 7 out of 10", 0.7, "4 g", id="out-of"),
        pytest.param("4 g\nConfidence: high", 0.8, "4 g", id="level-high"),
        pytest.param("4 g\nConfidence: very low", 0.15, "4 g", id="level-very-low"),
        pytest.param("4 g\nCertainty - almost certain", 0.95, "4 g", id="phrase-on-line"),
        pytest.param("It is probably Lyon.", 0.7, "It is probably Lyon.", id="hedge-in-text"),
        pytest.param("Lyon, but I'm not very confident.", 0.3,
                     "Lyon, but I'm not very confident.", id="negated"),
    ],
)
def test_verbal_confidence(text: str, value: float, cleaned: str) -> None:
    ex = VerbalExtractor()
    assert ex.extract(text).verbal == value
    assert ex.extract(_chat(text)).verbal == value
    assert ex.clean(text) == cleaned


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Confidence intervals are wider for small samples.", id="not-a-label-line"),
        pytest.param("The capital of Japan is Tokyo.", id="smollm2-ignored-the-instruction"),
        pytest.param("Confidence: 150%", id="out-of-range"),
    ],
)
def test_verbal_no_signal_and_no_stripping(text: str) -> None:
    assert VerbalExtractor().extract(text).is_empty
    if not text.startswith("Confidence:"):
        assert VerbalExtractor().clean(text) == text


def test_smollm2_replies_to_the_verbal_instruction_give_no_signal() -> None:
    asked = [r for r in SERVER if "verbal" in r["prompt"]]
    assert asked
    for reply in asked:
        assert VERBAL_INSTRUCTION in reply["request"]["messages"][0]["content"]
        # read: none of these replies states a confidence (server-06 "The capital of Japan
        # is Tokyo.", server-07 and -08 run out of tokens mid-sentence)
        assert "confidence" not in reply["response"].lower()
        assert VerbalExtractor().extract(reply["completion"]).is_empty
        assert parse_verbal_confidence(reply["response"]) is None


def test_verbal_request_overrides_never_mutate_and_never_duplicate() -> None:
    ex = VerbalExtractor()
    body = {"messages": [{"role": "system", "content": "Be brief."},
                         {"role": "user", "content": "Capital of France?"}]}
    snapshot = json.dumps(body)
    new = ex.request_overrides(body)
    assert json.dumps(body) == snapshot
    assert new["messages"][0]["content"] == f"Be brief. {VERBAL_INSTRUCTION}"
    again = ex.request_overrides({**body, **new})
    assert again["messages"][0]["content"].count(VERBAL_INSTRUCTION) == 1
    bare = ex.request_overrides({"messages": [{"role": "user", "content": "Hi"}]})
    assert bare["messages"][0] == {"role": "system", "content": VERBAL_INSTRUCTION}
    assert ex.request_overrides({}) == {"messages": [{"role": "system",
                                                      "content": VERBAL_INSTRUCTION}]}


@pytest.mark.parametrize(
    ("answers", "answer_type", "reference", "expected"),
    [
        pytest.param(["42", "The answer is 42.", "41", "42.0"], "number", None, 0.75, id="numbers"),
        pytest.param(["$1,200", "1200 dollars", "It costs 1200."], "number", None, 1.0,
                     id="number-formats"),
        pytest.param(["B", "(B)", "The answer is B", "C) soap"], "choice", None, 0.75,
                     id="choice-letters"),
        pytest.param(["Paris", "paris!", "The Paris", "Lyon"], "text", None, 0.75, id="text"),
        pytest.param(["I cannot answer.", "I don't know.", "Paris"], "text", None, 2 / 3,
                     id="refusals-are-one-answer"),
        pytest.param(["Paris", "Lyon", "Lyon"], "text", "Paris", 1 / 3, id="agreement"),
        pytest.param(["x"], "text", None, 1.0, id="single"),
    ],
)
def test_consistency(answers: list[str], answer_type: str, reference: str | None,
                     expected: float) -> None:
    assert consistency(answers, answer_type, reference=reference) == pytest.approx(expected)


def test_consistency_edge_cases() -> None:
    assert consistency([]) is None
    with pytest.raises(ConfidenceError, match="answer_type must be one of"):
        consistency(["a"], "essay")
    q = "Which is a base?\nA) Water\nB) Ammonia\nC) Soap"
    assert consistency(["Ammonia.", "B", "b) ammonia"], "choice", q) == 1.0


def test_consistency_extractor() -> None:
    ex = ConsistencyExtractor(n=4, answer_type="number")
    assert ex.request_overrides({"temperature": 0}) == {"n": 4, "temperature": 0.7}
    assert ex.request_overrides({"temperature": 1.0}) == {"n": 4}
    reply = {"choices": [{"message": {"content": c}} for c in ("12", "It is 12.", "13", None)]}
    assert ex.extract(reply).consistency == 0.5
    assert ex.extract(_chat("12")).is_empty
    assert ex.extract("12").is_empty
    with pytest.raises(ConfigError, match="n >= 2"):
        ConsistencyExtractor(n=1)
    with pytest.raises(ConfigError, match="answer_type"):
        ConsistencyExtractor(answer_type="essay")


def test_extractors_combine() -> None:
    extractors = [LogprobExtractor(), VerbalExtractor(), ConsistencyExtractor(n=2)]
    body = {"model": "m", "messages": [{"role": "user", "content": "Q?"}]}
    new = apply_overrides(extractors, body)
    assert body == {"model": "m", "messages": [{"role": "user", "content": "Q?"}]}
    assert (new["logprobs"], new["n"], new["messages"][0]["role"]) == (True, 2, "system")
    reply = {"choices": [
        {"message": {"content": "Paris\nConfidence: 90%"},
         "logprobs": {"content": [{"token": "Paris", "logprob": -0.5}]}},
        {"message": {"content": "Paris"}},
    ]}
    assert extract_confidence(extractors, reply) == Confidence(
        verbal=0.9, logprob_mean=-0.5, logprob_low10=-0.5, consistency=1.0)


def test_confidence_coercion() -> None:
    assert Confidence.coerce(None) == Confidence()
    assert Confidence.coerce(0.4) == Confidence(caller=0.4)
    assert Confidence.coerce(np.float32(0.5)) == Confidence(caller=0.5)
    assert Confidence.coerce(1) == Confidence(caller=1.0)
    assert Confidence.coerce({"verbal": 0.2}).get("verbal") == 0.2
    same = Confidence(verbal=0.1)
    assert Confidence.coerce(same) is same
    assert same.merged(Confidence()) is same
    assert same.merged(Confidence(verbal=0.3, caller=0.2)) == Confidence(verbal=0.3, caller=0.2)
    # every signal of the other overrides (merged reads the fields named in SIGNALS)
    every = {"verbal": 0.5, "logprob_mean": -0.5, "logprob_low10": -1.0, "consistency": 0.5,
             "caller": 0.5, "ptrue": 0.5}
    assert set(every) == set(Confidence.model_fields)
    assert Confidence(verbal=0.1, ptrue=0.9).merged(Confidence(**every)) == Confidence(**every)
    assert extract_confidence([], {"choices": []}) == Confidence()
    with pytest.raises(ConfidenceError, match="must be a probability"):
        Confidence.coerce(True)
    with pytest.raises(ConfidenceError, match="unknown confidence signal"):
        Confidence().get("vibes")
