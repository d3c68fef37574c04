"""wordllama's tokenization word by word (cost_models.wordpieces) and the batch embedding
built on it: the same ids as the tokenizer's own, the same vectors as wordllama's, bit for
bit, on the seed set, its question segments and hostile texts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cost_models import embeddings
from cost_models.datasets import load_seed
from cost_models.wordpieces import PieceTokenizer, splits_exactly
from guard.segments import request_segments

pytest.importorskip("wordllama")

HOSTILE = ["", " ", "  ", "   a", "a   ", "a  b   c", "\n\n x\ty ", "\u2581\u2581x \u2581y\u2581",
           "<s> hi </s>", "x<unk>y", "\U0001f642 \u00fcn\u00efc\u00f6d\u00e9 \u6f22\u5b57 ",
           "\x00\x01 control", "a" * 5000, "  leading", "trailing  ", " ".join(["w"] * 100),
           "\U0001f600\U0001f600   \U0001f600", "\u200b zero width", "e\u0301 combining",
           "\ufffd replacement", "The The the THE the"]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    questions = [it.question for it in load_seed()]
    segments = [s for q in questions[::5] for s in request_segments([q])]
    return questions + segments + HOSTILE


def test_ids_are_the_tokenizers_own(texts: list[str]) -> None:
    tokenizer = embeddings._model().tokenizer
    pieces = PieceTokenizer(tokenizer)
    assert pieces.fast  # the shipped tokenizer is one whose pieces tokenize alone
    flat, lens = pieces.flat_ids(texts)
    got = np.split(flat, np.cumsum(lens)[:-1])
    for text, ids in zip(texts, got, strict=True):
        want = tokenizer.encode(text, add_special_tokens=False).ids  # padding: one text
        assert ids.tolist() == want, text[:60]
        assert pieces.ids(text) == want


def test_a_tokenizer_whose_tokens_span_words_is_not_split() -> None:
    config = json.loads(embeddings._model().tokenizer.to_str())
    assert splits_exactly(config)
    config["model"]["vocab"]["a\u2581b"] = len(config["model"]["vocab"])
    assert not splits_exactly(config)
    assert not splits_exactly({**config, "pre_tokenizer": {"type": "Whitespace"}})


def test_the_cache_is_bounded_and_refilled(monkeypatch: pytest.MonkeyPatch) -> None:
    import cost_models.wordpieces as wordpieces

    monkeypatch.setattr(wordpieces, "CACHE_SIZE", 5)
    tokenizer = embeddings._model().tokenizer
    pieces = PieceTokenizer(tokenizer)
    text = "one two three four five six seven eight"
    assert pieces.ids(text) == tokenizer.encode(text, add_special_tokens=False).ids
    assert len(pieces._cache) <= 8 and pieces.ids("nine ten") == tokenizer.encode(
        "nine ten", add_special_tokens=False).ids
    assert len(pieces._cache) <= 5


def test_batch_embeddings_are_wordllamas_bit_for_bit(texts: list[str]) -> None:
    sample = texts[::3]
    raw = np.asarray(embeddings._model().embed(sample, norm=False, batch_size=32),
                     dtype=np.float64)
    norm = np.linalg.norm(raw, axis=1, keepdims=True)
    want = np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)
    np.testing.assert_array_equal(embeddings.embed(sample), want)
    np.testing.assert_array_equal(np.vstack([embeddings.embed([t]) for t in sample[:200]]),
                                  want[:200])
    # the one-text path (the proxy's) on every hostile text too, the empty one included
    raw = np.asarray(embeddings._model().embed(HOSTILE, norm=False, batch_size=32),
                     dtype=np.float64)
    norm = np.linalg.norm(raw, axis=1, keepdims=True)
    want = np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)
    got = np.vstack([embeddings.embed([t]) for t in HOSTILE])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float64 and not got[0].any()  # "": no tokens, a zero vector
