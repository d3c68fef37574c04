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

from policies.exceptions import EmbeddingsUnavailable

FloatArray = NDArray[np.float64]
DIM = 256
BATCH = 32


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


def _pooled_one(model: Any, text: str) -> NDArray[np.float32]:
    """wordllama's ``embed([text], norm=False)[0]`` without its batch machinery: the mean of
    the text's token vectors, summed in float32 in token order as its ``avg_pool`` does (one
    text has no padding), so the vector is the same bit for bit."""
    ids = np.asarray(model.tokenizer.encode(text, add_special_tokens=False).ids,
                     dtype=np.int32)
    table = model.embedding
    np.clip(ids, 0, table.shape[0] - 1, out=ids)
    pooled: NDArray[np.float32] = np.sum(table[ids], axis=0, dtype=np.float32) / np.float32(
        max(ids.shape[0], 1))
    return pooled


def embed(texts: Sequence[str]) -> FloatArray:
    """``(len(texts), 256)`` l2-normalized embeddings (float64); zero for a text with no
    tokens."""
    if not texts:
        return np.empty((0, DIM), dtype=np.float64)
    # wordllama pads every batch to its longest text: embedding the texts in order of length
    # pads little (same vectors, about 1.6x faster on the seed set's mix of lengths)
    order = np.argsort([len(t) for t in texts], kind="stable")
    model = _model()
    if len(texts) == 1:  # one query (the proxy's case): the same pooling without the batching
        vecs = np.asarray(_pooled_one(model, texts[0])[None, :], dtype=np.float64)
    else:
        vecs = np.asarray(model.embed([texts[i] for i in order], norm=False,
                                      batch_size=BATCH), dtype=np.float64)
    # normalize here: a text without tokens (e.g. "") has a zero vector and stays zero,
    # where wordllama's own normalization would divide by zero
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    out = np.empty((len(texts), DIM), dtype=np.float64)
    out[order] = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
    return out
