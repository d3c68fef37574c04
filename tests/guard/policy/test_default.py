"""The shipped default policy: what a Guard given nothing decides with."""

from __future__ import annotations

import json

import pytest

from guard.confidence.extractors import ConsistencyExtractor, VerbalExtractor
from guard.core import DEFAULT_POLICY, Guard
from guard.policy import load_policy, load_shipped_default, shipped_policies
from policies import answer_threshold

Q = "What is the maximum daily dose of acetaminophen for an adult?"


def test_default_is_shipped_and_pooled_over_every_shipped_model() -> None:
    assert DEFAULT_POLICY in shipped_policies()
    meta = load_policy(DEFAULT_POLICY).meta
    assert meta["training"]["model"].startswith("pooled: ")
    models = set(meta["training"]["responses_sha256"])
    # the two tiny local models and the strong model's blind replies (issue 35)
    assert models == {"smollm2-135m-instruct", "gemma-3-270m", "claude-blind"}
    assert set(meta["evaluation"]["models"]) == models  # leave-one-model-out, per model
    json.dumps(meta)  # the card is plain JSON


def test_guard_given_nothing_decides_with_the_default() -> None:
    default = load_shipped_default()
    g = Guard(c_r=2.0)
    assert g.policy == default.label and g.calibrator is default.calibrator
    rec = g.decide(Q, "4 g", confidence={"logprob_mean": -0.1}, cost=8.0)
    alpha = float(default.answerability.predict_alpha([Q])[0])  # type: ignore[union-attr]
    assert rec.policy == default.label and rec.alpha == alpha
    assert rec.threshold == answer_threshold(8.0, 2.0, alpha=alpha)
    # the calibrator reads the reply's signals and its text: "4 g" carries no stated confidence
    assert rec.p == default.calibrator.p_correct({"logprob_mean": -0.1}, "4 g")
    assert rec.p_source == "calibrated"


def test_policy_none_is_the_bare_rule() -> None:
    rec = Guard(c_r=2.0, policy=None).decide(Q, "4 g", confidence={"logprob_mean": -0.1},
                                             cost=8.0)
    assert rec.policy is None and rec.alpha == 1.0 and rec.p_source == "uncalibrated"
    assert rec.threshold == answer_threshold(8.0, 2.0)


def test_configured_parts_turn_the_default_off() -> None:
    assert Guard(alpha=0.5).policy is None
    assert Guard(signal="verbal").policy is None
    # extractors that provide none of the default calibrator's signals: the bare rule
    assert Guard(extractors=[ConsistencyExtractor()]).policy is None
    # one of them is enough for the default (it reads the stated confidence too)
    assert Guard(extractors=[VerbalExtractor()]).policy == load_shipped_default().label


def test_the_constructor_reads_nothing_from_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Guard()`` reads the shipped default policy when it first needs it, once."""
    import guard.policy.artifact as artifact

    loaded = []
    real = artifact.load_shipped_default
    monkeypatch.setattr(artifact, "load_shipped_default",
                        lambda: loaded.append(1) or real())
    g = Guard(c_r=2.0)
    assert loaded == []
    rec = g.decide(Q, "4 g", confidence={"logprob_mean": -0.1}, cost=8.0)
    assert loaded == [1] and rec.policy == real().label
    g.decide(Q, "4 g", confidence={"logprob_mean": -0.1}, cost=8.0)
    assert loaded == [1]
