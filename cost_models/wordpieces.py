"""wordllama's tokenization, word by word with a cache: the same ids, several times faster.

wordllama's tokenizer (a SentencePiece-style BPE: the normalizer prepends ``▁`` and turns
every space into ``▁``; no pre-tokenizer) runs BPE over a whole text as one word, so nothing
is cached and a text of 15 words costs about 100 us. Its vocabulary has no token holding a
``▁`` after any other character (checked on load, :func:`splits_exactly`), so no BPE merge
can join a piece ending in another character to one starting with ``▁``: the text's ids are
the concatenation of the ids of its **pieces** (a run of ``▁`` and the characters up to the
next ``▁``), each of which is BPE'd alone and cached. A text holding a special token's text
(``<s>``, ...) is tokenized by the tokenizer itself, as is every text when the check fails.
``tests/cost_models/test_wordpieces.py`` compares the ids with the tokenizer's own on every
seed question and on hostile texts.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cost_models.word_table import WordTable, per_text
from utilityguard_base.wellformed import well_formed

MARK = "\u2581"  # ▁
#: a piece of a normalized text: a run of ▁ and what follows up to the next ▁
_PIECE = re.compile(f"{MARK}*[^{MARK}]+|{MARK}+")
#: the most pieces one-text tokenization keeps (cleared when full: a hostile stream of new
#: words bounds memory; batches use :class:`cost_models.word_table.WordTable`)
CACHE_SIZE = 200_000


def splits_exactly(config: dict[str, Any]) -> bool:
    """Whether a tokenizer's configuration (its ``to_str()`` JSON) is the shape whose ids
    are the concatenation of its pieces' (see the module docstring)."""
    model, norm = config.get("model") or {}, config.get("normalizer") or {}
    want = [{"type": "Prepend", "prepend": MARK},
            {"type": "Replace", "pattern": {"String": " "}, "content": MARK}]
    if model.get("type") != "BPE" or config.get("pre_tokenizer") is not None \
            or norm.get("type") != "Sequence" or norm.get("normalizers") != want \
            or model.get("dropout") is not None:
        return False
    return not any(MARK in t.lstrip(MARK) for t in model.get("vocab", {}))


class PieceTokenizer:
    """``ids(text)`` equal to ``tokenizer.encode(text, add_special_tokens=False).ids``."""

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers import Tokenizer  # installed with wordllama

        config = json.loads(tokenizer.to_str())
        self._exact = Tokenizer.from_str(tokenizer.to_str())
        self._exact.no_padding()
        self._exact.no_truncation()
        self.fast = splits_exactly(config)
        self._specials = tuple(t["content"] for t in config.get("added_tokens", []))
        # a character every special token holds (``<``): a text without it holds none
        shared = set.intersection(*(set(t) for t in self._specials)) if self._specials else set()
        self._marker: str | None = min(shared) if shared else None
        bare = {**config, "normalizer": None, "padding": None, "truncation": None}
        self._bare = Tokenizer.from_str(json.dumps(bare))
        self._cache: dict[str, tuple[int, ...]] = {}  # one text's pieces (ids)
        self._table = WordTable(self._encode_key)  # a batch's (flat_ids)

    def clear(self) -> None:
        """Forget the cached pieces."""
        self._cache.clear()
        self._table.clear()

    def _slow(self, text: str) -> bool:
        if not self.fast:
            return True
        if self._marker is not None and self._marker not in text:  # the common case
            return False
        return any(s in text for s in self._specials)

    def ids(self, text: str) -> list[int]:
        """The token ids of one text (a lone surrogate read as U+FFFD: the tokenizer refuses
        it)."""
        text = well_formed(text)
        if self._slow(text):
            exact: list[int] = self._exact.encode(text, add_special_tokens=False).ids
            return exact
        cache = self._cache
        ids: list[int] = []
        for p in _pieces(text):
            got = cache.get(p)
            if got is None:
                got = tuple(self._bare.encode(p, add_special_tokens=False).ids)
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[p] = got
            ids += got
        return ids

    def flat_ids(self, texts: Sequence[str]) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
        """``(ids, lengths)``: every text's token ids one after the other, and how many
        each text has."""
        texts = [well_formed(t) for t in texts]
        if any(map(self._slow, texts)):
            seqs = [self._exact.encode(t, add_special_tokens=False).ids if self._slow(t)
                    else self.flat_ids([t])[0].tolist() for t in texts]
            return _flat(seqs, [len(q) for q in seqs])
        keys = [_keys(t) for t in texts]
        rows, counts = self._table.rows(list(itertools.chain.from_iterable(keys)))
        return rows[:, 0].astype(np.int32), per_text(counts, [len(k) for k in keys])

    def _encode_key(self, key: str) -> list[int]:
        """The ids of one key of :func:`_keys` (a piece, or a word standing for ``▁word``)."""
        piece = key if key.startswith(MARK) else MARK + key
        ids: list[int] = self._bare.encode(piece, add_special_tokens=False).ids
        return ids


def _keys(text: str) -> list[str]:
    """What :meth:`PieceTokenizer.flat_ids` looks up for ``text``: its words (``w`` standing
    for the piece ``▁w``) when the text has no ``▁``, no run of spaces and does not start
    with one, else its pieces (each starting with ``▁``, so never taken for a word)."""
    if not text:
        return []
    if MARK in text or "  " in text or text[0] == " ":
        return _PIECE.findall(MARK + text.replace(" ", MARK))
    return text.split(" ")


def _pieces(text: str) -> list[str]:
    """The pieces of ``text`` once normalized (``▁`` prepended, spaces made ``▁``): by one
    split at single spaces when the text has no ``▁``, no run of spaces and does not start
    with one (each piece is then ``▁`` and a word), else by the pattern."""
    if not text:
        return []
    if MARK in text or "  " in text or text[0] == " ":
        return _PIECE.findall(MARK + text.replace(" ", MARK))
    return [MARK + w for w in text.split(" ")]


def _flat(seqs: Sequence[Sequence[int]], lens: Any) -> tuple[NDArray[np.int32],
                                                              NDArray[np.int64]]:
    lengths = np.asarray(lens, dtype=np.int64)
    ids = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int32,
                      count=int(lengths.sum()))
    return ids, lengths
