"""wordllama static embeddings: shape, normalization, meaning, and a clear error without it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cost_models import embeddings
from policies.exceptions import UtilityGuardError

pytest.importorskip("wordllama")


def test_embeddings_are_unit_vectors_of_256() -> None:
    e = embeddings.embed(["What is the capital of France?", "How much insulin for dinner?"])
    assert e.shape == (2, 256) and e.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-5)
    assert embeddings.embed([]).shape == (0, 256)


def test_paraphrases_are_closer_than_unrelated_questions() -> None:
    a, b, c = embeddings.embed(["My son has a fever. How much ibuprofen can I give him?",
                                "How much ibuprofen is right for my feverish son?",
                                "Which river flows through Paris?"])
    assert a @ b > 0.8 > a @ c + 0.3


def test_without_wordllama_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    embeddings._model.cache_clear()
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import fails
    with pytest.raises(UtilityGuardError, match=r"pip install 'utilityguard\[embed\]'"):
        embeddings.embed(["x"])
    monkeypatch.undo()
    embeddings._model.cache_clear()
    assert embeddings.embed(["x"]).shape == (1, 256)
