"""The answerability classifier: estimator contract and a sanity check of what it learns."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from cost_models.answerability import AnswerabilityModel

ANSWERABLE = [f"What is the capital of country number {i}?" for i in range(30)]
REFUSE = [f"Should I quit my job number {i} right now, what do you think is best?"
          for i in range(30)]


def test_learns_and_predicts_probabilities() -> None:
    m = AnswerabilityModel().fit(ANSWERABLE + REFUSE, [True] * 30 + [False] * 30)
    a = m.predict_alpha(["What is the capital of France?", "Should I quit my job today?"])
    assert ((a >= 0) & (a <= 1)).all()
    assert a[0] > 0.5 > a[1]
    np.testing.assert_allclose(m.predict_proba(["x"]).sum(axis=1), 1.0)
    assert m.predict(["What is the capital of Peru?"]).tolist() == [True]


def test_estimator_contract() -> None:
    m = AnswerabilityModel(C=1.0)
    assert clone(m).get_params() == {"C": 1.0, "features": "affix-embed", "max_chars": 4000}
    with pytest.raises(NotFittedError):
        m.predict_alpha(["q"])
    assert m.fit(ANSWERABLE + REFUSE, [1] * 30 + [0] * 30) is m


@pytest.mark.parametrize(
    ("texts", "labels", "match"),
    [
        pytest.param(["a", "b"], [True, True], "both answerable and refusal", id="one-class"),
        pytest.param(["a", "b"], [True], "one label per text", id="lengths"),
        pytest.param(["a", "b"], [0.5, 1.0], "booleans", id="not-bool"),
        pytest.param("a text", [True], "list of strings", id="bare-string"),
    ],
)
def test_bad_input(texts: object, labels: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        AnswerabilityModel().fit(texts, labels)


@pytest.mark.parametrize("features", ["affix-embed", "affix"])
def test_both_feature_sets_learn(features: str) -> None:
    pytest.importorskip("wordllama")
    m = AnswerabilityModel(features=features).fit(ANSWERABLE + REFUSE,
                                                  [True] * 30 + [False] * 30)
    a = m.predict_alpha(["What is the capital of Chile?", "Should I quit my job tonight?"])
    assert a[0] > 0.5 > a[1]


def test_unknown_features_are_refused() -> None:
    with pytest.raises(ValueError, match="features must be one of affix-embed, affix"):
        AnswerabilityModel(features="bert").fit(ANSWERABLE + REFUSE, [True] * 30 + [False] * 30)
