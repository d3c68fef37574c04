"""A logistic-regression text classifier on the cost model's features: the one shape shared by
the answerability model (:mod:`cost_models.answerability`) and the request detector
(:mod:`cost_models.request_detector`).

It follows the scikit-learn estimator contract: ``features="affix-embed"`` (default) stacks
the affix TF-IDF (word 1-2-grams + word-boundary character 4-grams) with wordllama sentence
embeddings weighted by :attr:`LogisticTextClassifier.embed_weight`, ``"affix"`` is the TF-IDF
alone. One text is scored without a pipeline from the
:class:`~cost_models.query_features.QueryFeatures` it shares with the cost model
(:meth:`LogisticTextClassifier.p_one`), bit for bit what the pipeline computes. Persisted as
data (:meth:`to_data` / :meth:`from_data`), never pickled.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

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
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]
FEATURES = ("affix-embed", "affix")
C_ = TypeVar("C_", bound="LogisticTextClassifier")


class LogisticTextClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """``P(positive | text)`` by logistic regression on the affix TF-IDF (+ embeddings).

    Parameters
    ----------
    C : float
        Inverse regularization strength of the logistic regression.
    features : {"affix-embed", "affix"}
        TF-IDF stacked with wordllama embeddings, or the TF-IDF alone.
    max_chars : int
        Texts are cut to this many characters before featurizing.
    """

    #: the embedding block's weight (a subclass sets its own)
    embed_weight: ClassVar[float] = 0.5
    #: what the positive and the negative class are, for error messages
    positive: ClassVar[str] = "positive"
    negative: ClassVar[str] = "negative"
    #: class weights of the logistic regression (``None``: unweighted)
    class_weight: ClassVar[str | None] = None
    #: the solver's iteration limit
    max_iter: ClassVar[int] = 2000

    def __init__(self, C: float = 30.0, features: str = "affix-embed",
                 max_chars: int = 4000) -> None:
        self.C = C
        self.features = features
        self.max_chars = max_chars

    def fit(self: C_, X: Any, y: Any, sample_weight: Any = None) -> C_:
        """Fit on texts and boolean labels (``True``: the positive class), optionally weighted
        per text; return ``self``."""
        texts = [t[: self.max_chars] for t in _texts(X)]
        labels = np.asarray(y)
        if labels.shape != (len(texts),):
            raise InvalidValueError(
                f"y must have one label per text: {labels.shape} vs {len(texts)}")
        if labels.dtype != np.bool_ and not np.isin(labels, (0, 1)).all():
            raise InvalidValueError(f"y must be booleans ({self.positive} or not)")
        labels = labels.astype(bool)
        if labels.all() or not labels.any():
            raise InvalidValueError(f"y needs both {self.positive} and {self.negative} examples")
        if self.features not in FEATURES:
            raise InvalidValueError(f"features must be one of {', '.join(FEATURES)}, "
                                    f"got {self.features!r}")
        feats = affix_embed(self.embed_weight) if self.features == "affix-embed" \
            else affix_tfidf()
        self.pipeline_ = Pipeline([("features", feats),
                                   ("model", LogisticRegression(
                                       C=self.C, max_iter=self.max_iter,
                                       class_weight=self.class_weight))])
        if sample_weight is None:
            self.pipeline_.fit(texts, labels)
        else:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.shape != (len(texts),) or not np.isfinite(w).all() or (w <= 0).any():
                raise InvalidValueError("sample_weight must be one finite weight > 0 per text")
            self.pipeline_.fit(texts, labels, model__sample_weight=w)
        self.__dict__.pop("_scorer_", None)  # a refit: the one-query path is rebuilt
        self.classes_ = np.array([False, True])
        return self

    def p(self, X: Any) -> FloatArray:
        """``P(positive)`` of every text, in [0, 1]."""
        check_is_fitted(self, "pipeline_")
        texts = [t[: self.max_chars] for t in _texts(X)]
        if not texts:
            return np.empty(0, dtype=np.float64)
        if len(texts) == 1 and self._scorer() is not None:  # one query: no pipeline
            return np.array([self.p_one(QueryFeatures(texts[0]))], dtype=np.float64)
        return np.asarray(self.pipeline_.predict_proba(texts)[:, 1], dtype=np.float64)

    def p_one(self, features: QueryFeatures) -> float:
        """``P(positive)`` of one text from its
        :class:`~cost_models.query_features.QueryFeatures` (shared with the cost model, so the
        text is tokenized and embedded once): the logistic function of the decision value,
        computed in the pipeline's order, so it equals :meth:`p` on a batch bit for bit."""
        if "pipeline_" not in self.__dict__:  # scikit-learn's check is slow per query
            check_is_fitted(self, "pipeline_")
        scorer = self._scorer()
        if scorer is None:
            return float(self.p([features.text])[0])
        return float(expit(scorer.score(features)))

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(parameters, arrays)``: the fitted model as data (no pickle)."""
        check_is_fitted(self, "pipeline_")
        arrays: dict[str, Any] = {}
        params = {"C": self.C, "features": self.features, "max_chars": self.max_chars,
                  "pipeline": pipeline_to_data(self.pipeline_, arrays)}
        return params, arrays

    @classmethod
    def from_data(cls: type[C_], params: dict[str, Any], arrays: dict[str, Any]) -> C_:
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

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_scorer_", None)  # derived; rebuilt on first use after loading
        return state

    def predict_proba(self, X: Any) -> FloatArray:
        a = self.p(X)
        return np.column_stack([1.0 - a, a])

    def predict(self, X: Any) -> NDArray[np.bool_]:
        return np.asarray(self.p(X) >= 0.5)
