"""One query's features, computed once and read by every model that needs them.

The shipped cost model and the answerability classifier both featurize a query with the same
affix analyzer (:func:`cost_models.features.affix_analyzer`) and the same wordllama
embedding, each through its own fitted TF-IDF vocabulary and linear coefficients. Pricing one
request used to tokenize and embed the query once per model; :class:`QueryFeatures` holds the
analyzer's term counts and the (unweighted) embedding of one text, so the second model reuses
what the first computed. :class:`LinearTextScorer` is the one-query path of a fitted linear
model on those features (ridge or logistic regression): the vectorizer's arithmetic
(``tf = 1 + log count``, times ``idf``, l2-normalized) dotted with the coefficients, without
building a sparse matrix or calling a scikit-learn pipeline.

The scores agree with the pipelines' to floating-point rounding (the sum runs over terms in
another order; the tests compare them on held-out questions).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import FeatureUnion

from cost_models.embeddings import DIM as EMBED_DIM
from cost_models.features import EmbeddingFeatures

FloatArray = NDArray[np.float64]

__all__ = ["LinearTextScorer", "QueryFeatures"]


class QueryFeatures:
    """The term counts and the embedding of one query text, each computed at most once.

    ``terms(analyzer, max_chars)`` and ``embedding(max_chars)`` cache by their arguments: two
    models with the same analyzer and the same cut read the same values. Not thread-safe to
    share across threads (build one per request); :meth:`many` embeds a batch in one call.
    """

    __slots__ = ("_embeddings", "_terms", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._terms: dict[tuple[Any, int], Counter[str]] = {}
        self._embeddings: dict[int, FloatArray] = {}

    @classmethod
    def many(cls, texts: Sequence[str], *, max_chars: int | None = None) -> list[QueryFeatures]:
        """Features of several texts; with ``max_chars`` their embeddings are computed now,
        in one batch (what pricing every segment of a request needs)."""
        out = [cls(t) for t in texts]
        if max_chars is not None and out:
            from cost_models.embeddings import embed

            vecs = embed([t[:max_chars] for t in texts])
            for f, v in zip(out, vecs, strict=True):
                f._embeddings[min(max_chars, len(f.text))] = v
        return out

    def terms(self, analyzer: Callable[[str], list[str]], max_chars: int) -> Counter[str]:
        """How often ``analyzer`` emits each term for the text cut to ``max_chars``."""
        key = (analyzer, min(max_chars, len(self.text)))  # the same cut text: the same terms
        counts = self._terms.get(key)
        if counts is None:
            counts = Counter(analyzer(self.text[:max_chars]))
            self._terms[key] = counts
        return counts

    def embedding(self, max_chars: int) -> FloatArray:
        """The l2-normalized wordllama embedding (256 floats) of the text cut to
        ``max_chars`` (:func:`cost_models.embeddings.embed`)."""
        cut = min(max_chars, len(self.text))  # models with other limits share a short text's
        vec = self._embeddings.get(cut)
        if vec is None:
            from cost_models.embeddings import embed

            vec = embed([self.text[:max_chars]])[0]
            self._embeddings[cut] = vec
        return vec


def _shared_analyzer(vec: TfidfVectorizer) -> Callable[[str], list[str]] | None:
    """The analyzer ``vec`` applies to a text, when it is a plain callable (shared by key
    between models); ``None`` when the vectorizer preprocesses first (then not shared)."""
    if callable(vec.analyzer) and vec.input == "content":
        return vec.analyzer  # type: ignore[no-any-return]
    return None


class LinearTextScorer:
    """``intercept + features(text) @ coef`` for one text, as a fitted pipeline computes it.

    Built from the pipeline's features step — a sublinear, l2-normalized
    :class:`~sklearn.feature_extraction.text.TfidfVectorizer`, optionally followed in a
    :class:`~sklearn.pipeline.FeatureUnion` by :class:`~cost_models.features.EmbeddingFeatures`
    — and the linear model's coefficients (the embedding's follow the vocabulary's).
    :meth:`build` returns ``None`` for any other shape (the caller keeps the pipeline).
    """

    def __init__(self, vec: TfidfVectorizer, emb: EmbeddingFeatures | None,
                 coef: FloatArray, intercept: float, max_chars: int, *,
                 in_order: bool = False) -> None:
        idf = vec.idf_
        n = len(vec.vocabulary_)
        self.table = {t: (i, float(idf[i]), float(coef[i])) for t, i in vec.vocabulary_.items()}
        shared = _shared_analyzer(vec)
        self._analyzer: Callable[[str], list[str]] = shared or vec.build_analyzer()
        self._key: Any = shared if shared is not None else self  # no sharing: own key
        self.emb = emb
        self.emb_coef = np.asarray(coef[n:], dtype=np.float64)
        self.intercept = float(intercept)
        self.max_chars = max_chars
        self.in_order = in_order

    @classmethod
    def build(cls, features: Any, coef: Any, intercept: Any, max_chars: int, *,
              in_order: bool = False) -> LinearTextScorer | None:
        """The scorer of ``features`` (a pipeline's features step) and a linear model's
        ``coef`` / ``intercept``, or ``None`` when the shape is not one it reproduces;
        ``in_order``: see :meth:`score`."""
        vec: Any = features
        emb: EmbeddingFeatures | None = None
        if isinstance(features, FeatureUnion) and len(features.transformer_list) == 2:
            (_, vec), (_, e) = features.transformer_list
            emb = e if isinstance(e, EmbeddingFeatures) else None
            if emb is None:
                return None
        if not (isinstance(vec, TfidfVectorizer) and vec.sublinear_tf and vec.use_idf
                and vec.norm == "l2"):
            return None
        flat = np.asarray(coef, dtype=np.float64).reshape(-1)
        width = len(vec.vocabulary_) + (0 if emb is None else EMBED_DIM)
        if flat.shape[0] != width:
            return None
        return cls(vec, emb, flat, float(np.asarray(intercept).reshape(-1)[0]), max_chars,
                   in_order=in_order)

    def score(self, features: QueryFeatures) -> float:
        """The linear score (ridge prediction, or logistic decision function) of one text.

        ``in_order=False``: the TF-IDF block summed over the text's terms, plus the embedding
        block as one dot product (the cost model's one-query path, as it always was).
        ``in_order=True``: every product added in the order of the pipeline's sparse row
        (vocabulary index, then the embedding's columns), so the value is bit for bit the
        pipeline's (the answerability model: the value its pipeline computed before).
        """
        if self._key is self:
            counts: Counter[str] = Counter(self._analyzer(features.text[: self.max_chars]))
        else:
            counts = features.terms(self._analyzer, self.max_chars)
        table = self.table
        hits = [(hit, n) for term, n in counts.items() if (hit := table.get(term)) is not None]
        if self.in_order:
            return self._in_order(hits, features)
        dot = sq = 0.0
        for (_, idf, c), n in hits:
            w = (1.0 + math.log(n)) * idf
            dot += w * c
            sq += w * w
        out = self.intercept + (dot / math.sqrt(sq) if sq > 0.0 else 0.0)
        if self.emb is not None:
            e = np.asarray(self.emb.weight * features.embedding(self.max_chars),
                           dtype=np.float64)
            out += float(e @ self.emb_coef)
        return out

    def _in_order(self, hits: list[tuple[tuple[int, float, float], int]],
                  features: QueryFeatures) -> float:
        """The pipeline's arithmetic: ``tf = log(count) + 1``, times ``idf``, divided by the
        row's l2 norm (squares summed in column order), then ``sum(x_j * coef_j)`` over the
        row's non-zero columns in order, then the intercept."""
        hits.sort(key=lambda h: h[0][0])
        weights = [(math.log(n) + 1.0) * idf for (_, idf, _), n in hits]
        sq = 0.0
        for w in weights:
            sq += w * w
        dot = 0.0
        if sq > 0.0:
            norm = math.sqrt(sq)
            for ((_, _, c), _), w in zip(hits, weights, strict=True):
                dot += (w / norm) * c
        if self.emb is not None:
            e = np.asarray(self.emb.weight * features.embedding(self.max_chars),
                           dtype=np.float64)
            nz = e != 0.0  # the sparse row holds the non-zero columns only
            # add.accumulate adds one after the other, as the sparse product does
            dot = float(np.add.accumulate(np.concatenate(([dot], e[nz] * self.emb_coef[nz])))[-1])
        return dot + self.intercept
