"""wordllama static embeddings: shape, normalization, meaning, and a clear error without it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cost_models import embeddings
from utilityguard_base.exceptions import UtilityGuardError

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
    with pytest.raises(UtilityGuardError, match=r"pip install wordllama"):
        embeddings.embed(["x"])
    monkeypatch.undo()
    embeddings._model.cache_clear()
    assert embeddings.embed(["x"]).shape == (1, 256)


def test_order_of_lengths_does_not_change_the_vectors() -> None:
    texts = ["a much longer question about the maximum dose of a medicine for a child?", "hi",
             "What is the capital of France?"] * 30
    got = embeddings.embed(texts)
    one_by_one = np.vstack([embeddings.embed([t]) for t in texts[:3]])
    np.testing.assert_allclose(got[:3], one_by_one, rtol=0, atol=1e-6)
    np.testing.assert_allclose(got[3:6], got[:3], rtol=0, atol=0)


def test_a_text_without_tokens_embeds_to_zero_not_nan() -> None:
    e = embeddings.embed(["", "What is the capital of France?"])
    assert np.isfinite(e).all()
    assert not e[0].any()
    assert np.linalg.norm(e[1]) == pytest.approx(1.0, abs=1e-6)
