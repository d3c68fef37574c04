"""The affix TF-IDF block of a batch in numpy (cost_models.affix_batch): the vectorizer's
values times the coefficients, on the seed set, question segments and hostile texts."""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from cost_models.affix_batch import AffixBatch
from cost_models.datasets import load_seed
from cost_models.features import affix_tfidf
from guard.segments import request_segments

HOSTILE = ["", "   ", "!!! ???", "the the the the", "Insulin insulin INSULIN doses",
           "x" * 5000, "Quelle est la dose maximale de parac\u00e9tamol ?",
           "unseen-words qqqq zzzz", "a b a b a b", "\u6f22\u5b57 \U0001f642"]


def test_scores_equal_the_vectorizers() -> None:
    items = load_seed()
    train = [it.question for it in items[::2]]
    vec = affix_tfidf().fit(train)
    coef = np.random.default_rng(0).normal(size=len(vec.vocabulary_))
    texts = [it.question for it in items[1::2]] + HOSTILE + [
        s for it in items[::9] for s in request_segments([it.question])]
    batch = AffixBatch.build(vec, coef)
    assert batch is not None
    want = vec.transform(texts) @ coef
    np.testing.assert_allclose(batch.score(texts), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(batch.score(texts), want, rtol=1e-12, atol=1e-12)  # cached
    batch.clear()
    np.testing.assert_allclose(batch.score(texts[::-1]), want[::-1], rtol=1e-12, atol=1e-12)
    assert batch.score([]).shape == (0,)
    assert (want != 0).mean() > 0.9  # the texts hit the vocabulary: the check is not vacuous


def test_another_vectorizer_is_left_to_scikit_learn() -> None:
    plain = TfidfVectorizer(sublinear_tf=True).fit(["apple banana", "banana cherry"])
    assert AffixBatch.build(plain, np.zeros(3)) is None
    raw_tf = TfidfVectorizer(analyzer=affix_tfidf().analyzer).fit(["apple banana"])
    assert AffixBatch.build(raw_tf, np.zeros(len(raw_tf.vocabulary_))) is None
