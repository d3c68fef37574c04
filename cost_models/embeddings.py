"""Static sentence embeddings from ``wordllama`` (optional extra ``utilityguard[embed]``).

WordLlama ships its 256-dimensional token embeddings inside the wheel and embeds a text as
the (l2-normalized) average of its token vectors: numpy only, no network, no GPU. Loaded
once per process from the installed package's own folder, so nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from policies.exceptions import UtilityGuardError

FloatArray = NDArray[np.float64]
DIM = 256


class EmbeddingsUnavailable(UtilityGuardError):
    """``wordllama`` is not installed (the CLI prints it as one line)."""


@cache
def _model() -> Any:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise EmbeddingsUnavailable(
            "wordllama embeddings need the optional extra: pip install 'utilityguard[embed]'"
        ) from None
    # the weights ship in the wheel; loading from the package folder never downloads
    return WordLlama.load(dim=DIM, cache_dir=Path(wordllama.__file__).parent)


def embed(texts: Sequence[str]) -> FloatArray:
    """``(len(texts), 256)`` l2-normalized embeddings (float64)."""
    if not texts:
        return np.empty((0, DIM), dtype=np.float64)
    vecs = _model().embed(list(texts), norm=True)
    return np.asarray(vecs, dtype=np.float64)
