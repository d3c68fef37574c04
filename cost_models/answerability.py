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

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from cost_models.data_io import pipeline_from_data, pipeline_to_data
from cost_models.features import affix_embed, affix_tfidf
from cost_models.query_features import LinearTextScorer, QueryFeatures
from cost_models.regressor import _texts
from policies.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
FEATURES = ("affix-embed", "affix")
#: the embedding block's weight for this classifier (grouped CV on the seed set)
ANSWERABILITY_EMBED_WEIGHT = 0.5


class AnswerabilityModel(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Predict ``P(answerable | text)``.

    Parameters
    ----------
    C : float
        Inverse regularization strength of the logistic regression.
    features : {"affix-embed", "affix"}
        TF-IDF stacked with wordllama embeddings, or the TF-IDF alone.
    max_chars : int
        Texts are cut to this many characters before featurizing.
    """

    def __init__(self, C: float = 30.0, features: str = "affix-embed",
                 max_chars: int = 4000) -> None:
        self.C = C
        self.features = features
        self.max_chars = max_chars

    def fit(self, X: Any, y: Any) -> AnswerabilityModel:
        """Fit on texts and answerability labels (bool); return ``self``."""
        texts = [t[: self.max_chars] for t in _texts(X)]
        labels = np.asarray(y)
        if labels.shape != (len(texts),):
            raise InvalidValueError(
                f"y must have one label per text: {labels.shape} vs {len(texts)}")
        if labels.dtype != np.bool_ and not np.isin(labels, (0, 1)).all():
            raise InvalidValueError("y must be booleans (answerable or not)")
        labels = labels.astype(bool)
        if labels.all() or not labels.any():
            raise InvalidValueError("y needs both answerable and refusal-required examples")
        if self.features not in FEATURES:
            raise InvalidValueError(f"features must be one of {', '.join(FEATURES)}, "
                                    f"got {self.features!r}")
        feats = affix_embed(ANSWERABILITY_EMBED_WEIGHT) if self.features == "affix-embed" \
            else affix_tfidf()
        self.pipeline_ = Pipeline([("features", feats),
                                   ("model", LogisticRegression(C=self.C, max_iter=2000))])
        self.pipeline_.fit(texts, labels)
        self.__dict__.pop("_scorer_", None)  # a refit: the one-query path is rebuilt
        self.classes_ = np.array([False, True])
        return self

    def predict_alpha(self, X: Any) -> FloatArray:
        """``P(answerable)`` of every text, in [0, 1]."""
        check_is_fitted(self, "pipeline_")
        texts = [t[: self.max_chars] for t in _texts(X)]
        if not texts:
            return np.empty(0, dtype=np.float64)
        if len(texts) == 1 and self._scorer() is not None:  # one query: no pipeline
            return np.array([self.predict_alpha_one(QueryFeatures(texts[0]))],
                            dtype=np.float64)
        return np.asarray(self.pipeline_.predict_proba(texts)[:, 1], dtype=np.float64)

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(parameters, arrays)``: the fitted model as data (no pickle)."""
        check_is_fitted(self, "pipeline_")
        arrays: dict[str, Any] = {}
        params = {"C": self.C, "features": self.features, "max_chars": self.max_chars,
                  "pipeline": pipeline_to_data(self.pipeline_, arrays)}
        return params, arrays

    @classmethod
    def from_data(cls, params: dict[str, Any], arrays: dict[str, Any]) -> AnswerabilityModel:
        """The model :meth:`to_data` described."""
        model = cls(C=float(params["C"]), features=str(params["features"]),
                    max_chars=int(params["max_chars"]))
        model.pipeline_ = pipeline_from_data(params["pipeline"], arrays)
        model.classes_ = np.array([False, True])
        return model

    def _scorer(self) -> LinearTextScorer | None:
        """The one-query path (built on first use; ``None`` for another pipeline shape)."""
        if "_scorer_" not in self.__dict__:
            model = self.pipeline_.named_steps["model"]
            ok = isinstance(model, LogisticRegression) and model.coef_.shape[0] == 1
            self.__dict__["_scorer_"] = LinearTextScorer.build(
                self.pipeline_.named_steps["features"], model.coef_, model.intercept_,
                self.max_chars, in_order=True) if ok else None
        scorer: LinearTextScorer | None = self.__dict__["_scorer_"]
        return scorer

    def predict_alpha_one(self, features: QueryFeatures) -> float:
        """``P(answerable)`` of one query from its
        :class:`~cost_models.query_features.QueryFeatures` (shared with the cost model, so the
        query is tokenized and embedded once): the logistic function of the decision value,
        computed in the pipeline's order, so it equals ``predict_alpha`` on a batch bit for
        bit."""
        if "pipeline_" not in self.__dict__:  # scikit-learn's check is slow per query
            check_is_fitted(self, "pipeline_")
        scorer = self._scorer()
        if scorer is None:
            return float(self.predict_alpha([features.text])[0])
        return float(expit(scorer.score(features)))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_scorer_", None)  # derived; rebuilt on first use after loading
        return state

    def predict_proba(self, X: Any) -> FloatArray:
        a = self.predict_alpha(X)
        return np.column_stack([1.0 - a, a])

    def predict(self, X: Any) -> NDArray[np.bool_]:
        return np.asarray(self.predict_alpha(X) >= 0.5)
