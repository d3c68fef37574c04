"""Static sentence embeddings from ``wordllama`` (a dependency of utilityguard).

WordLlama ships its 256-dimensional token embeddings inside the wheel and embeds a text as
the (l2-normalized) average of its token vectors: numpy only, no network, no GPU. Loaded
once per process from the installed package's own folder, so nothing is downloaded.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cost_models.wordpieces import PieceTokenizer
from utilityguard_base.exceptions import EmbeddingsUnavailable

FloatArray = NDArray[np.float64]
DIM = 256


@contextmanager
def _root_logger_kept() -> Iterator[None]:
    """Undo what an import does to the root logger: ``wordllama`` calls
    ``logging.basicConfig(level=INFO)`` when imported, which would make every application
    using the guard print ``INFO:httpx...`` lines. A library leaves the root logger alone."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)


@cache
def _model() -> Any:
    try:
        with _root_logger_kept():
            import wordllama
            from wordllama import WordLlama
    except ImportError:
        raise EmbeddingsUnavailable(
            "wordllama is not installed (a dependency of utilityguard): pip install wordllama"
        ) from None
    # the weights ship in the wheel; loading from the package folder never downloads
    return WordLlama.load(dim=DIM, cache_dir=Path(wordllama.__file__).parent)


@cache
def _pieces() -> PieceTokenizer:
    """The model's tokenizer, word by word with a cache (:mod:`cost_models.wordpieces`)."""
    return PieceTokenizer(_model().tokenizer)


def _pooled_one(model: Any, text: str) -> NDArray[np.float32]:
    """wordllama's ``embed([text], norm=False)[0]`` without its batch machinery: the mean of
    the text's token vectors, summed in float32 in token order as its ``avg_pool`` does (one
    text has no padding), so the vector is the same bit for bit."""
    ids = np.asarray(_pieces().ids(text), dtype=np.int64)
    table = model.embedding
    np.minimum(ids, table.shape[0] - 1, out=ids)  # token ids are never negative
    pooled: NDArray[np.float32] = np.sum(table[ids], axis=0, dtype=np.float32) / np.float32(
        max(ids.shape[0], 1))
    return pooled


def _pooled(model: Any, texts: Sequence[str]) -> NDArray[np.float32]:
    """:func:`_pooled_one` of each text: the texts' token counts as a sparse matrix (one
    entry per token, in token order) times the token vectors, which adds each text's vectors
    in float32 in token order as :func:`_pooled_one` does (scipy's CSR product accumulates
    row by row), then the mean."""
    from scipy.sparse import csr_matrix

    flat, lens = _pieces().flat_ids(texts)
    n, table = len(texts), model.embedding
    np.clip(flat, 0, table.shape[0] - 1, out=flat)
    indptr = np.concatenate([[0], np.cumsum(lens)])
    counts = csr_matrix((np.ones(flat.shape[0], dtype=np.float32), flat, indptr),
                        shape=(n, table.shape[0]))
    sums = np.asarray(counts @ table, dtype=np.float32)
    pooled: NDArray[np.float32] = sums / np.maximum(lens, 1).astype(np.float32)[:, None]
    return pooled


def _normalized_one(pooled: NDArray[np.float32]) -> FloatArray:
    """:func:`embed`'s normalization of one vector, as a ``(1, 256)`` array, with fewer
    array calls (the proxy embeds one query per request): the same squares summed in the
    same order (``add.reduce`` over one contiguous row, as ``linalg.norm(axis=1)`` does) and
    the same division, so the same bits (``tests/cost_models/test_wordpieces.py``)."""
    vec = pooled.astype(np.float64)
    norm = np.sqrt(np.add.reduce(vec * vec))
    out: FloatArray = (vec / norm if norm > 0 else np.zeros_like(vec))[None, :]
    return out


def embed(texts: Sequence[str]) -> FloatArray:
    """``(len(texts), 256)`` l2-normalized embeddings (float64); zero for a text with no
    tokens. The same vectors, bit for bit, as wordllama's ``embed(texts, norm=False)``
    normalized (``tests/cost_models/test_wordpieces.py``)."""
    if not texts:
        return np.empty((0, DIM), dtype=np.float64)
    model = _model()
    if len(texts) == 1:  # one query (the proxy's case)
        return _normalized_one(_pooled_one(model, texts[0]))
    vecs = np.asarray(_pooled(model, texts), dtype=np.float64)
    # normalize here: a text without tokens (e.g. "") has a zero vector and stays zero,
    # where wordllama's own normalization would divide by zero
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    out: FloatArray = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
    return out
