"""A bounded cache of words to rows of integers, read for a whole batch with array operations.

The batch featurizers (:mod:`cost_models.affix_batch`, :mod:`cost_models.wordpieces`) turn
each distinct word of a batch into a few integers (vocabulary columns, token ids) once and
then need those integers for every word of every text, in order. :class:`WordTable` keeps
each word's integers in one growing array and returns a batch's in one gather: one dict
lookup per word, no per-word Python objects on the way out.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
#: the most words kept (the tables start again when full: a hostile stream of new words
#: bounds memory)
CACHE_SIZE = 200_000


class WordTable:
    """``rows(words)``: the integers ``learn(word)`` gives for each word, one after the other,
    as an ``(n, width)`` array, and how many rows each word has; ``learn`` is called once per
    word kept. Thread-safe."""

    def __init__(self, learn: Callable[[str], Sequence[int]], width: int = 1) -> None:
        self._learn = learn
        self.width = width
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        """Forget every word."""
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._index: dict[str, int] = {}
        self._start = np.zeros(0, dtype=np.int64)  # where a word's rows start
        self._count = np.zeros(0, dtype=np.int64)  # how many rows it has
        self._table = np.zeros((0, self.width), dtype=np.int64)
        self._used = 0

    def __len__(self) -> int:
        return len(self._index)

    def _add(self, words: list[str]) -> None:
        if len(self._index) + len(words) > CACHE_SIZE:
            self._reset()
        learned = [self._learn(w) for w in words]
        counts = np.fromiter(map(len, learned), dtype=np.int64, count=len(learned))
        if (counts % self.width).any():
            raise ValueError(f"each word's integers must come in rows of {self.width}")
        counts //= self.width
        flat = np.fromiter(itertools.chain.from_iterable(learned), dtype=np.int64,
                           count=int(counts.sum()) * self.width).reshape(-1, self.width)
        need = self._used + flat.shape[0]
        if need > self._table.shape[0]:
            grown = np.zeros((max(need, 2 * self._table.shape[0]), self.width), dtype=np.int64)
            grown[: self._used] = self._table[: self._used]
            self._table = grown
        self._table[self._used:need] = flat
        starts = self._used + np.cumsum(counts) - counts
        self._used = need
        base = len(self._index)
        self._index.update((w, base + k) for k, w in enumerate(words))
        self._start = np.concatenate([self._start, starts])
        self._count = np.concatenate([self._count, counts])

    def rows(self, words: Sequence[str]) -> tuple[IntArray, IntArray]:
        """``(rows, counts)``: every word's rows in order, and each word's number of rows."""
        with self._lock:
            try:
                ids = np.fromiter(map(self._index.__getitem__, words), dtype=np.int64,
                                  count=len(words))
            except KeyError:
                self._add(list(set(words).difference(self._index)))
                ids = np.fromiter(map(self._index.__getitem__, words), dtype=np.int64,
                                  count=len(words))
            start, count, table = self._start[ids], self._count[ids], self._table
        # each word's rows one after the other: its start plus the rank within the word
        offset = np.repeat(start - (np.cumsum(count) - count), count)
        return table[offset + np.arange(int(count.sum()))], count


def per_text(counts: IntArray, words_per_text: Sequence[int]) -> IntArray:
    """Rows per text from rows per word (``counts``) and how many words each text has."""
    owner = np.repeat(np.arange(len(words_per_text)), words_per_text)
    return np.bincount(owner, weights=counts, minlength=len(words_per_text)).astype(np.int64)
