"""The shared query features: one featurization per request, the same numbers as before.

The cost model and the answerability classifier read the same query features
(:class:`cost_models.query_features.QueryFeatures`): pricing a request embeds and tokenizes
its query once. The one-query path must change nothing the guard decides: the answerability
model's ``alpha`` equals its scikit-learn pipeline's bit for bit, and on held-out questions
(a source left out of training) the guard prices and decides every item exactly as the
pipelines' own values say it should.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import cost_models.embeddings as embeddings
from benchmarks.bench.data import shipped_responses
from cost_models.answerability import AnswerabilityModel
from cost_models.datasets import load_seed
from cost_models.query_features import LinearTextScorer, QueryFeatures
from cost_models.regressor import CostRegressor
from guard import Guard
from guard.policy import load_policy
from policies import answer_threshold, should_answer

pytest.importorskip("wordllama")

EDGE = ["", "   ", "x" * 5000, "Quelle est la dose maximale de paracétamol ? 🙂",
        "zzzz qqqq unknown-words-only", "a a a a a a a a"]
HELD_OUT = "patient_portal"


@pytest.fixture(scope="module")
def held_out() -> dict[str, Any]:
    """Cost and answerability models fitted without one source; that source's items."""
    items = load_seed()
    train = [it for it in items if it.source != HELD_OUT][::2]
    test = [it for it in items if it.source == HELD_OUT]
    cost = CostRegressor(kind="affix-embed-ridge", cv=3, ridge=1.0).fit(
        [it.question for it in train], [it.cost for it in train],
        groups=[it.source for it in train])
    ans = AnswerabilityModel().fit([it.question for it in train],
                                   [it.answerable for it in train])
    return {"cost": cost, "answerability": ans, "test": test}


def test_shipped_answerability_one_query_is_the_pipeline_bit_for_bit() -> None:
    model = load_policy("smollm2").answerability
    assert model is not None
    texts = [it.question for it in load_seed()[::7]] + EDGE
    want = model.pipeline_.predict_proba([t[: model.max_chars] for t in texts])[:, 1]
    got = np.array([model.predict_alpha_one(QueryFeatures(t)) for t in texts])
    assert (got == want).all()
    assert [float(model.predict_alpha([t])[0]) for t in texts] == want.tolist()


def test_the_guard_embeds_a_query_once_for_both_models(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    guard = Guard.from_policy("smollm2")
    guard.price("warm up the models")
    calls: list[int] = []
    real = embeddings.embed

    def counted(texts: Any) -> Any:
        calls.append(len(texts))
        return real(texts)

    monkeypatch.setattr(embeddings, "embed", counted)
    price = guard.price("What is the maximum daily dose of acetaminophen?")
    assert calls == [1]  # one text embedded once, read by the cost model and by alpha
    assert 0.0 < price.alpha < 1.0 and price.cost > 0.0


def test_held_out_items_are_priced_and_decided_as_the_pipelines_say(held_out: dict[str, Any]
                                                                    ) -> None:
    cost_model, ans, test = held_out["cost"], held_out["answerability"], held_out["test"]
    policy = load_policy("smollm2")
    guard = Guard(cost_model, policy.calibrator, answerability=ans, c_r=2.0)
    questions = [it.question for it in test]
    # what each question asks (guard.asking: the text that asks for nothing left out) is the
    # runtime's reading; the price is the maximum over its segments, each priced here by the
    # pipeline's own features (a TF-IDF transform and the embedding block), and alpha is the
    # pipeline's on the asked text that set the price
    readings = [guard.read(q) for q in questions]
    segments = [r.segments for r in readings]
    flat = [t[:4000] for segs in segments for t in segs]
    vec, emb = cost_model.pipeline_.named_steps["features"].transformer_list
    n = len(vec[1].vocabulary_)
    mu = (vec[1].transform(flat) @ cost_model.coef_[:n] + emb[1].transform(flat)
          @ cost_model.coef_[n:] + cost_model.intercept_)
    flat_cost = iter(np.exp(mu + cost_model.residual_var_ / 2.0))
    costs = [[next(flat_cost) for _ in segs] for segs in segments]
    want_cost = [max(c) for c in costs]
    asked = [r.owner_text(int(np.argmax(c))) for r, c in zip(readings, costs, strict=True)]
    want_alpha = ans.pipeline_.predict_proba([a[:4000] for a in asked])[:, 1]
    replies = {json.loads(line)["id"]: json.loads(line)
               for line in shipped_responses().read_text().splitlines() if line.strip()}
    decided = []
    for k, it in enumerate(test):
        price = guard.price(it.question)
        assert price.alpha == want_alpha[k]  # bit for bit
        assert price.cost == pytest.approx(want_cost[k], rel=1e-12, abs=0)
        threshold = float(answer_threshold(want_cost[k], 2.0, alpha=want_alpha[k]))
        assert price.threshold == pytest.approx(threshold, rel=0, abs=1e-12)
        # the model's own confidence, and a certain one (every question priced by its
        # segments is costlier than SmolLM2's confidence covers: 0 of 170 answered)
        for signal in (replies[it.id]["confidence"]["logprob_mean"], 0.0):
            record = guard.decide(it.question, "Some answer.", confidence={
                "logprob_mean": signal}, price=price)
            p = float(policy.calibrator.predict([signal])[0])
            assert record.p == p
            want = "answer" if should_answer(p, want_cost[k], 2.0, alpha=want_alpha[k]) \
                else "refuse"
            assert record.decision == want, it.id
            decided.append(want)
        # a caller's certain p = 1 answers at every threshold <= 1 (the answer path checked
        # whatever the shipped calibrator's highest p is)
        sure = guard.decide(it.question, "Some answer.", confidence=1.0, price=price)
        assert sure.decision == ("answer" if should_answer(1.0, want_cost[k], 2.0,
                                                           alpha=want_alpha[k]) else "refuse")
        decided.append(sure.decision)
    assert len(test) > 100 and set(decided) == {"answer", "refuse"}  # both kinds checked


def test_scorer_refuses_a_shape_it_does_not_reproduce() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    # not sublinear: not a shape the one-query path reproduces
    plain = TfidfVectorizer().fit(["apple banana", "banana cherry"])
    assert LinearTextScorer.build(plain, np.zeros(3), 0.0, 4000) is None
    sub = TfidfVectorizer(sublinear_tf=True).fit(["apple banana", "banana cherry"])
    assert LinearTextScorer.build(sub, np.zeros(5), 0.0, 4000) is None  # wrong width
    assert LinearTextScorer.build(sub, np.zeros(3), 0.0, 4000) is not None


def test_many_embeds_a_batch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = embeddings.embed
    monkeypatch.setattr(embeddings, "embed", lambda t: calls.append(len(t)) or real(t))
    feats = QueryFeatures.many(["first question", "second one", ""], max_chars=4000)
    assert calls == [3]
    np.testing.assert_array_equal(feats[1].embedding(4000), real(["second one"])[0])
    assert calls == [3]  # read from the batch, not embedded again


def test_one_text_is_embedded_as_wordllama_embeds_it_bit_for_bit() -> None:
    texts = [it.question[:4000] for it in load_seed()[::11]] + EDGE
    for text in texts:
        want = np.asarray(embeddings._model().embed([text], norm=False, batch_size=32),
                          dtype=np.float64)
        norm = np.linalg.norm(want, axis=1, keepdims=True)
        want = np.divide(want, norm, out=np.zeros_like(want), where=norm > 0)
        np.testing.assert_array_equal(embeddings.embed([text]), want)
