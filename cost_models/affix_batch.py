"""A batch of texts through a fitted affix TF-IDF and linear coefficients, in numpy.

``TfidfVectorizer.transform`` followed by a product with a ridge's coefficients builds a
sparse matrix term by term in Python. For the affix analyzer
(:func:`cost_models.features.affix_analyzer`: word unigrams, word bigrams, ``>`` prefix and
``<`` suffix 4-grams) every term is a function of one word or of two neighbouring words, so
:class:`AffixBatch` looks each distinct word of the batch up once (its unigram, prefix and
suffix columns and its word id) and finds the bigram columns, the per-text counts, the
sublinear TF-IDF weights, the l2 norms and the dot products with array operations. The
values equal the vectorizer's to floating-point rounding (another summation order; the tests
compare them).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cost_models.features import _TOKEN, AFFIX, affix_analyzer
from cost_models.word_table import WordTable, per_text

FloatArray = NDArray[np.float64]


class AffixBatch:
    """``tfidf(texts) @ coef`` for a sublinear, l2-normalized affix TF-IDF vocabulary."""

    def __init__(self, vocabulary: Mapping[str, int], idf: Any, coef: Any) -> None:
        self.vocabulary = dict(vocabulary)
        self.idf = np.asarray(idf, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)[: len(self.vocabulary)]
        words: dict[str, int] = {}
        pairs: list[tuple[int, int, int]] = []
        for term, col in self.vocabulary.items():
            if " " in term:
                a, _, b = term.partition(" ")
                pairs.append((words.setdefault(a, len(words)), words.setdefault(b, len(words)),
                              col))
        self.words = words
        self.n_words = max(len(words), 1)
        keys = np.array([a * self.n_words + b for a, b, _ in pairs], dtype=np.int64)
        order = np.argsort(keys)
        self.pair_keys = keys[order]
        self.pair_cols = np.array([c for _, _, c in pairs], dtype=np.int64)[order]
        self._table = WordTable(self._word, width=4)

    @classmethod
    def build(cls, vec: Any, coef: Any) -> AffixBatch | None:
        """The batch scorer of a fitted vectorizer, or ``None`` when it is not the affix
        analyzer's sublinear, l2-normalized TF-IDF (the caller keeps the vectorizer)."""
        if not (getattr(vec, "analyzer", None) is affix_analyzer and vec.sublinear_tf
                and vec.use_idf and vec.norm == "l2" and not vec.binary
                and vec.input == "content"):
            return None
        return cls(vec.vocabulary_, vec.idf_, coef)

    def _token(self, w: str) -> tuple[int, int, int, int]:
        """``(word id, unigram, prefix, suffix column)`` of one token, ``-1`` where none."""
        get = self.vocabulary.get
        return (self.words.get(w, -1), get(w, -1),
                get(">" + w[:AFFIX], -1) if len(w) > AFFIX else -1,
                get("<" + w[-AFFIX:], -1) if len(w) > AFFIX + 1 else -1)

    def _word(self, word: str) -> tuple[int, ...]:
        """The :meth:`_token` rows of a white-space separated (lowered) word's tokens, one
        after the other (a token never spans white space, so a text's tokens are its
        words' tokens in order)."""
        return tuple(itertools.chain.from_iterable(map(self._token, _TOKEN.findall(word))))

    def clear(self) -> None:
        """Forget the cached words (the next batch looks every word up again)."""
        self._table.clear()

    def _rows(self, texts: Sequence[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(rows, lengths)``: the :meth:`_token` row of every token of every text, in
        order, as an ``(n_tokens, 4)`` array, and each text's number of tokens; each word
        looked up once (:class:`cost_models.word_table.WordTable`)."""
        words = [t.lower().split() for t in texts]
        rows, counts = self._table.rows(list(itertools.chain.from_iterable(words)))
        return rows, per_text(counts, [len(w) for w in words])

    def score(self, texts: Sequence[str]) -> FloatArray:
        """The TF-IDF block's contribution to the linear score of each text (texts already
        cut to the model's length)."""
        n = len(texts)
        at, lens = self._rows(texts)
        if not at.shape[0]:
            return np.zeros(n, dtype=np.float64)
        owner = np.repeat(np.arange(n, dtype=np.int64), lens)
        # bigrams: neighbours within one text whose words both occur in a bigram term
        a, b = at[:-1, 0], at[1:, 0]
        ok = (owner[:-1] == owner[1:]) & (a >= 0) & (b >= 0)
        key = a[ok] * self.n_words + b[ok]
        order = np.argsort(key, kind="stable")  # sorted needles: a cache-friendly search
        pos = np.empty_like(key)
        pos[order] = np.searchsorted(self.pair_keys, key[order])
        pos = np.minimum(pos, max(len(self.pair_keys) - 1, 0))
        hit = self.pair_keys[pos] == key if len(self.pair_keys) else np.zeros(0, dtype=bool)
        cols = np.concatenate([at[:, 1], at[:, 2], at[:, 3], self.pair_cols[pos[hit]]])
        rows = np.concatenate([owner, owner, owner, owner[:-1][ok][hit]])
        keep = cols >= 0
        width = len(self.vocabulary)
        cells, counts = np.unique(rows[keep] * width + cols[keep], return_counts=True)
        row, col = cells // width, cells % width
        w = (1.0 + np.log(counts)) * self.idf[col]
        dot = np.bincount(row, weights=w * self.coef[col], minlength=n)
        sq = np.bincount(row, weights=w * w, minlength=n)
        norm = np.sqrt(sq)
        return np.divide(dot, norm, out=np.zeros(n, dtype=np.float64), where=norm > 0)
