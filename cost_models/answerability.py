"""Answerability: ``alpha = P(answerable | query)``, for the answerability-aware rule.

When a query may require a refusal, refusing is worth ``alpha (-C_R) + (1 - alpha)`` rather
than ``-C_R``, and the Bayes rule becomes ``q >= 1 - alpha (1 + C_R)`` (docs/design.md; with
``alpha = 1`` it is the paper's rule). This is a text classifier for ``alpha``: the cost
model's features with logistic regression, following the scikit-learn estimator contract:
``features="affix-embed"`` (default) stacks the affix TF-IDF (word 1-2-grams + word-boundary
character 4-grams) with wordllama sentence embeddings, ``"affix"`` is the TF-IDF alone. The
defaults (features and ``C``) were chosen by grouped-by-source cross-validation on the seed
set: a held-out source is a kind of question the classifier never saw (README: "Features").
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from cost_models.query_features import QueryFeatures
from cost_models.text_classifier import FEATURES, LogisticTextClassifier

FloatArray = NDArray[np.float64]
__all__ = ["ANSWERABILITY_EMBED_WEIGHT", "FEATURES", "AnswerabilityModel"]
#: the embedding block's weight for this classifier (grouped CV on the seed set)
ANSWERABILITY_EMBED_WEIGHT = 0.5


class AnswerabilityModel(LogisticTextClassifier):
    """Predict ``P(answerable | text)`` (:class:`~cost_models.text_classifier.
    LogisticTextClassifier`: ``C``, ``features``, ``max_chars``)."""

    embed_weight: ClassVar[float] = ANSWERABILITY_EMBED_WEIGHT
    positive: ClassVar[str] = "answerable"
    negative: ClassVar[str] = "refusal-required"

    def predict_alpha(self, X: Any) -> FloatArray:
        """``P(answerable)`` of every text, in [0, 1]."""
        return self.p(X)

    def predict_alpha_one(self, features: QueryFeatures) -> float:
        """``P(answerable)`` of one query from its shared features (:meth:`p_one`)."""
        return self.p_one(features)
