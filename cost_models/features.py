"""Text features for consequence-cost regression and answerability.

The affix featurizer is word 1-2-gram TF-IDF plus word-boundary character 4-grams (each
word's first and last four characters, a subset of scikit-learn's ``char_wb`` n-grams), made
in one tokenization pass. On the seed set it scores within 0.01 Spearman of full ``char_wb``
3-5-grams while transforming about three times faster (see the model card).

:func:`affix_embed` stacks it with wordllama static sentence embeddings
(:mod:`cost_models.embeddings`): TF-IDF carries the words seen in training, the embedding
carries meaning to phrasings and topics that were not (measured by grouped-by-source CV in
the model card).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import FeatureUnion

_TOKEN = re.compile(r"(?u)\b\w+\b")
AFFIX = 4


def affix_analyzer(doc: str) -> list[str]:
    """Word unigrams, word bigrams, ``>prefix`` and ``<suffix`` character 4-grams.

    Module-level so a saved model names it (``"affix"``, :mod:`cost_models.data_io`).

    >>> affix_analyzer("Insulin doses")
    ['insulin', 'doses', 'insulin doses', '>insu', '>dose', '<ulin']
    """
    toks = _TOKEN.findall(doc.lower())
    out = toks + [f"{a} {b}" for a, b in itertools.pairwise(toks)]
    out += [">" + w[:AFFIX] for w in toks if len(w) > AFFIX]
    out += ["<" + w[-AFFIX:] for w in toks if len(w) > AFFIX + 1]
    return out


def affix_tfidf() -> TfidfVectorizer:
    """The default featurizer (see the module docstring)."""
    return TfidfVectorizer(analyzer=affix_analyzer, sublinear_tf=True, dtype=np.float64)


def word_char_tfidf() -> FeatureUnion:
    """Word 1-2-grams plus full ``char_wb`` 3-5-grams (slower; the "char" alternative)."""
    return FeatureUnion([
        ("word", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)),
        ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True,
                                 min_df=2)),
    ])


#: the embedding block's weight against the TF-IDF block (both have unit-norm rows), chosen
#: by grouped-by-source CV on the seed set (model card)
EMBED_WEIGHT = 0.5


class EmbeddingFeatures(TransformerMixin, BaseEstimator):  # type: ignore[misc]
    """Texts -> ``weight x`` their wordllama embeddings (a dense ``(n, 256)`` block).

    Stateless (``fit`` learns nothing), so it stacks with a TF-IDF vectorizer in a
    :class:`~sklearn.pipeline.FeatureUnion`; ``weight`` sets the block's share of a linear
    model's penalty against the TF-IDF block.
    """

    def __init__(self, weight: float = EMBED_WEIGHT) -> None:
        self.weight = weight

    def fit(self, X: Any, y: Any = None) -> EmbeddingFeatures:
        self.n_features_in_ = 1
        return self

    def transform(self, X: Any) -> NDArray[np.float64]:
        from cost_models.embeddings import embed

        return np.asarray(self.weight * embed(list(X)), dtype=np.float64)


def affix_embed(weight: float = EMBED_WEIGHT) -> FeatureUnion:
    """Affix TF-IDF stacked with ``weight x`` wordllama embeddings (needs ``wordllama``)."""
    return FeatureUnion([("tfidf", affix_tfidf()), ("embed", EmbeddingFeatures(weight))])
