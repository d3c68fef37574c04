"""Text features for consequence-cost regression.

The default featurizer is word 1-2-gram TF-IDF plus word-boundary character 4-grams (each
word's first and last four characters, a subset of scikit-learn's ``char_wb`` n-grams), made
in one tokenization pass. On the seed set it scores within 0.01 Spearman of full ``char_wb``
3-5-grams while transforming about three times faster (see the model card).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import FeatureUnion

_TOKEN = re.compile(r"(?u)\b\w+\b")
AFFIX = 4


def affix_analyzer(doc: str) -> list[str]:
    """Word unigrams, word bigrams, ``>prefix`` and ``<suffix`` character 4-grams.

    Module-level (picklable) so fitted models can be saved with joblib.

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
