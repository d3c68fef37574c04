"""The consequence-cost regressor: text -> ``E[L | x]``.

A scikit-learn estimator (``__init__`` stores parameters, ``fit`` validates and returns
``self``, learned attributes end in ``_``, ``predict`` checks it is fitted). It regresses
``log L`` on text features and returns the *mean* cost: with log-normal residuals of variance
``s^2``, ``E[L | x] = exp(mu(x) + s^2 / 2)`` — the decision rule is linear in ``L``, so the
median ``exp(mu)`` would understate expected losses. ``s^2`` is estimated out of fold
(grouped K-fold when ``groups`` are given) and stored as ``residual_var_``.

Kinds:

* ``affix-ridge`` (default): word 1-2-grams + word-boundary character 4-grams, TF-IDF, ridge;
* ``affix-embed-ridge``: the affix TF-IDF stacked with wordllama static sentence embeddings
  (256-d, weights in the ``wordllama`` wheel), ridge;
* ``char-ridge``: word 1-2-grams + ``char_wb`` 3-5-grams, TF-IDF, ridge (slower);
* ``svd-hgb``: word + char TF-IDF -> truncated SVD (256) -> histogram gradient boosting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.decomposition import TruncatedSVD
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold, KFold
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.validation import check_is_fitted

from cost_models.affix_batch import AffixBatch
from cost_models.data_io import pipeline_from_data, pipeline_to_data, ridge_of
from cost_models.features import EmbeddingFeatures, affix_embed, affix_tfidf, word_char_tfidf
from cost_models.kinds import KINDS
from cost_models.query_features import LinearTextScorer, QueryFeatures
from policies import expected_cost_lognormal
from utilityguard_base.exceptions import InvalidValueError

FloatArray = NDArray[np.float64]


def _texts(X: Any) -> list[str]:
    if isinstance(X, str):
        raise InvalidValueError("X must be a list of strings, not one string; wrap it: [text]")
    try:
        texts = list(X)
    except TypeError:
        raise InvalidValueError("X must be a list of strings") from None
    for k, t in enumerate(texts):
        if not isinstance(t, str):
            raise InvalidValueError(f"X[{k}] must be a string, got {type(t).__name__}")
    return texts


def build_pipeline(kind: str, ridge: float, random_state: int) -> Pipeline:
    if kind == "affix-ridge":
        return Pipeline([("features", affix_tfidf()), ("model", Ridge(alpha=ridge))])
    if kind == "affix-embed-ridge":
        return Pipeline([("features", affix_embed()), ("model", Ridge(alpha=ridge))])
    if kind == "char-ridge":
        return Pipeline([("features", word_char_tfidf()), ("model", Ridge(alpha=ridge))])
    if kind == "svd-hgb":
        return Pipeline([
            ("features", word_char_tfidf()),
            ("svd", TruncatedSVD(256, random_state=random_state)),
            ("model", HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05,
                                                    random_state=random_state)),
        ])
    raise InvalidValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


@dataclass(frozen=True)
class Paraphrases:
    """Training-only texts, each another phrasing of one training text (``of``: its index) at
    that text's cost — e.g. a question asked as an instruction ("Tell me ..."): the cost of a
    request does not depend on how it is phrased. In cross-validation a paraphrase joins a
    fold's training rows only when the text it paraphrases does, and it is never scored."""

    texts: Sequence[str]
    of: Sequence[int]

    def with_rows(self, texts: list[str], logy: Any, rows: Any
                  ) -> tuple[list[str], FloatArray]:
        """``texts`` (the training rows ``rows``, their log costs in ``logy[rows]``) and the
        paraphrases of those rows, at their costs."""
        rows = np.asarray(rows)
        y = np.asarray(logy, dtype=np.float64)[rows]
        if not self.texts:
            return texts, y
        keep = set(int(r) for r in rows)
        extra = [(t, int(k)) for t, k in zip(self.texts, self.of, strict=True) if int(k) in keep]
        return ([*texts, *(t for t, _ in extra)],
                np.concatenate([y, np.asarray([logy[k] for _, k in extra], dtype=np.float64)]))


@dataclass(frozen=True)
class Floor:
    """Training-only texts that ask for nothing (e.g. chat lines), each at the cheap ``cost``
    with the sample weight ``weight``: a model that has seen
    them prices such text low (the request detector's doubt model,
    :mod:`benchmarks.asking_doubt`). They join every fold's training rows and are never
    scored."""

    texts: Sequence[str]
    cost: float
    weight: float

    def with_rows(self, texts: list[str], y: Any) -> tuple[list[str], FloatArray, FloatArray]:
        """``texts`` and their log costs ``y`` (weight 1), then the floor's texts."""
        n = len(self.texts)
        return ([*texts, *self.texts],
                np.concatenate([np.asarray(y, dtype=np.float64),
                                np.full(n, np.log(self.cost))]),
                np.concatenate([np.ones(len(texts)), np.full(n, float(self.weight))]))


def is_grouped(groups: Sequence[str] | None, cv: int) -> bool:
    """Whether :func:`folds` holds out whole groups (at least ``cv`` distinct groups)."""
    return groups is not None and len(set(groups)) >= cv


def cv_scheme(groups: Sequence[str] | None, cv: int, group_name: str = "group") -> str:
    """What :func:`folds` does with these groups, in words (for printing and model cards)."""
    if groups is None:
        return f"shuffled {cv}-fold KFold (no groups given)"
    k = len(set(groups))
    if k >= cv:
        return f"grouped {cv}-fold CV: each fold holds out whole {group_name}s ({k} distinct)"
    return (f"shuffled {cv}-fold KFold, NOT grouped: only {k} distinct {group_name} "
            f"value(s), fewer than {cv} folds")


def folds(n: int, groups: Sequence[str] | None, cv: int, random_state: int) -> list[Any]:
    """Grouped folds when there are enough groups, else shuffled K-fold (:func:`cv_scheme`
    says which, in words)."""
    idx = np.arange(n)
    if groups is not None and is_grouped(groups, cv):
        return list(GroupKFold(n_splits=cv).split(idx, groups=list(groups)))
    return list(KFold(n_splits=cv, shuffle=True, random_state=random_state).split(idx))


class CostRegressor(RegressorMixin, BaseEstimator):  # type: ignore[misc]
    """Predict the expected consequence cost ``E[L | text]``.

    Parameters
    ----------
    kind : {"affix-ridge", "affix-embed-ridge", "char-ridge", "svd-hgb"}
    ridge : float
        The ridge penalty (scikit-learn's ``Ridge(alpha=...)``; ridge kinds). Not the
        answerability ``alpha = P(answerable)`` of the decision rule.
    cv : int
        Folds for the out-of-fold residual variance (>= 2).
    max_chars : int
        Texts are cut to this many characters before featurizing (bounds latency).
    random_state : int
    """

    def __init__(self, kind: str = "affix-ridge", ridge: float = 0.3, cv: int = 5,
                 max_chars: int = 4000, random_state: int = 0) -> None:
        self.kind = kind
        self.ridge = ridge
        self.cv = cv
        self.max_chars = max_chars
        self.random_state = random_state

    def _cut(self, texts: list[str]) -> list[str]:
        return [t[: self.max_chars] for t in texts]

    def fit(self, X: Any, y: Any, groups: Sequence[str] | None = None,
            paraphrases: Paraphrases | None = None, floor: Floor | None = None
            ) -> CostRegressor:
        """Fit on texts ``X`` and costs ``y > 0``; ``groups`` (e.g. sources) for the folds;
        ``paraphrases``: training-only texts, each another phrasing of one of ``X`` at its cost
        (:class:`Paraphrases`; in a fold only when the text it paraphrases is trained on);
        ``floor``: training-only texts that ask for nothing, at a cheap cost (:class:`Floor`;
        in every fold)."""
        texts = self._cut(_texts(X))
        cost = np.asarray(y, dtype=np.float64)
        if cost.shape != (len(texts),):
            raise InvalidValueError(
                f"y must have one cost per text: {cost.shape} vs {len(texts)} texts")
        if not np.isfinite(cost).all() or (cost <= 0).any():
            raise InvalidValueError("y must be finite costs > 0")
        if self.cv < 2:
            raise InvalidValueError("cv must be >= 2")
        if len(texts) < 2 * self.cv:
            raise InvalidValueError(f"need at least {2 * self.cv} training texts, got {len(texts)}")
        if groups is not None and len(groups) != len(texts):
            raise InvalidValueError("groups must have one entry per text")
        logy = np.log(cost)
        base = build_pipeline(self.kind, self.ridge, self.random_state)
        oof = np.empty_like(logy)
        para = paraphrases if paraphrases is not None else Paraphrases([], [])
        if floor is not None and not (floor.cost > 0 and floor.weight > 0):
            raise InvalidValueError("the floor's cost and weight must be > 0")

        def fitted(tx: list[str], ty: Any) -> Pipeline:
            if floor is None or not floor.texts:
                return clone(base).fit(tx, ty)
            fx, fy, fw = floor.with_rows(tx, ty)
            return clone(base).fit(fx, fy, model__sample_weight=fw)

        for train, test in folds(len(texts), groups, self.cv, self.random_state):
            tx, ty = para.with_rows([texts[i] for i in train], logy, train)
            model = fitted(tx, ty)
            oof[test] = model.predict([texts[i] for i in test])
        self.oof_log_pred_ = oof
        self.residual_var_ = float(np.mean((oof - logy) ** 2))
        tx, ty = para.with_rows(texts, logy, np.arange(len(texts)))
        self.pipeline_ = fitted(tx, ty)
        for derived in ("_scorer_", "_batch_"):  # a refit: the fast paths are rebuilt
            self.__dict__.pop(derived, None)
        self.n_train_ = len(texts)
        model = self.pipeline_.named_steps["model"]
        if isinstance(model, Ridge):
            self.coef_ = np.asarray(model.coef_, dtype=np.float64)
            self.intercept_ = float(model.intercept_)
        else:  # a refit as another kind must not keep an earlier ridge fit's coefficients
            for attr in ("coef_", "intercept_"):
                self.__dict__.pop(attr, None)
        return self

    def predict_log(self, X: Any) -> FloatArray:
        """``mu(x)``: the predicted mean of ``log L``."""
        check_is_fitted(self, "pipeline_")
        texts = self._cut(_texts(X))
        if not texts:
            return np.empty(0, dtype=np.float64)
        if hasattr(self, "coef_"):  # ridge: skip the pipeline's per-call validation overhead
            scorer = self._scorer() if len(texts) == 1 else None
            if scorer is not None:  # one text: the one-query path (no sparse matrix)
                return np.array([scorer.score(QueryFeatures(texts[0]))], dtype=np.float64)
            vec, emb = self._parts()
            batch = self._batch()
            mu = None
            if batch is not None:  # the affix TF-IDF block in numpy (AffixBatch)
                mu = batch.score(texts)
            elif vec is not None:
                mu = vec.transform(texts) @ self.coef_[:len(vec.vocabulary_)]
            if vec is not None and mu is not None:
                if emb is not None:  # no sparse copy of the dense block
                    mu = mu + emb.transform(texts) @ self.coef_[len(vec.vocabulary_):]
                return np.asarray(mu + self.intercept_, dtype=np.float64)
            feats = self.pipeline_.named_steps["features"].transform(texts)
            return np.asarray(feats @ self.coef_ + self.intercept_, dtype=np.float64)
        return np.asarray(self.pipeline_.predict(texts), dtype=np.float64)

    def _parts(self) -> tuple[TfidfVectorizer | None, EmbeddingFeatures | None]:
        """The TF-IDF vectorizer and the embedding block of the features (``None`` each when
        the features are not one TF-IDF vectorizer, optionally followed by embeddings)."""
        feats = self.pipeline_.named_steps["features"]
        if isinstance(feats, TfidfVectorizer):
            return feats, None
        if isinstance(feats, FeatureUnion) and len(feats.transformer_list) == 2:
            (_, vec), (_, emb) = feats.transformer_list
            if isinstance(vec, TfidfVectorizer) and isinstance(emb, EmbeddingFeatures):
                return vec, emb
        return None, None

    def _batch(self) -> AffixBatch | None:
        """The batch path of the TF-IDF block (:class:`cost_models.affix_batch.AffixBatch`,
        built on first use); ``None`` when the vectorizer is not the affix analyzer's."""
        if "_batch_" not in self.__dict__:
            vec, _ = self._parts()
            self.__dict__["_batch_"] = None if vec is None or not hasattr(self, "coef_") \
                else AffixBatch.build(vec, self.coef_)
        batch: AffixBatch | None = self.__dict__["_batch_"]
        return batch

    def _scorer(self) -> LinearTextScorer | None:
        """The one-query path (:class:`cost_models.query_features.LinearTextScorer`, built on
        first use); ``None`` when the model is not one TF-IDF (+ embeddings) + ridge."""
        if "_scorer_" not in self.__dict__:
            self.__dict__["_scorer_"] = LinearTextScorer.build(
                self.pipeline_.named_steps["features"], getattr(self, "coef_", None),
                getattr(self, "intercept_", 0.0), self.max_chars) \
                if hasattr(self, "coef_") else None
        scorer: LinearTextScorer | None = self.__dict__["_scorer_"]
        return scorer

    def predict_one(self, features: QueryFeatures) -> float:
        """``E[L | x]`` of one query from its :class:`~cost_models.query_features.QueryFeatures`
        (shared with the answerability model, so the query is tokenized and embedded once);
        the same value as ``predict([features.text])[0]``."""
        if "pipeline_" not in self.__dict__:  # scikit-learn's check is slow per query
            check_is_fitted(self, "pipeline_")
        scorer = self._scorer()
        if scorer is None:
            return float(self.predict([features.text])[0])
        return float(expected_cost_lognormal(scorer.score(features), float(self.residual_var_)))

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(parameters, arrays)``: the fitted model as data (no pickle); ridge kinds only."""
        check_is_fitted(self, "pipeline_")
        arrays: dict[str, Any] = {"oof_log_pred": np.asarray(self.oof_log_pred_)}
        params = {"kind": self.kind, "ridge": self.ridge, "cv": self.cv,
                  "max_chars": self.max_chars, "random_state": self.random_state,
                  "residual_var_": self.residual_var_, "n_train_": self.n_train_,
                  "pipeline": pipeline_to_data(self.pipeline_, arrays)}
        return params, arrays

    @classmethod
    def from_data(cls, params: dict[str, Any], arrays: dict[str, Any]) -> CostRegressor:
        """The model :meth:`to_data` described."""
        model = cls(kind=str(params["kind"]), ridge=float(ridge_of(params)), cv=int(params["cv"]),
                    max_chars=int(params["max_chars"]), random_state=int(params["random_state"]))
        model.pipeline_ = pipeline_from_data(params["pipeline"], arrays)
        model.residual_var_ = float(params["residual_var_"])
        model.n_train_ = int(params["n_train_"])
        model.oof_log_pred_ = np.asarray(arrays["oof_log_pred"], dtype=np.float64)
        ridge = model.pipeline_.named_steps["model"]
        model.coef_ = np.asarray(ridge.coef_, dtype=np.float64)
        model.intercept_ = float(ridge.intercept_)
        return model

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for derived in ("_scorer_", "_batch_"):  # rebuilt on first use after loading
            state.pop(derived, None)
        return state

    def predict(self, X: Any) -> FloatArray:
        """``E[L | x] = exp(mu + s^2 / 2)``, every value > 0."""
        return np.asarray(expected_cost_lognormal(self.predict_log(X), self.residual_var_),
                          dtype=np.float64).reshape(-1)

    def predict_interval(self, X: Any, level: float = 0.8) -> tuple[FloatArray, FloatArray]:
        """Central ``level`` interval of ``L`` under the log-normal residual model."""
        if not 0.0 < level < 1.0:
            raise InvalidValueError("level must be in (0, 1)")
        from scipy.stats import norm

        mu = self.predict_log(X)
        z = float(norm.ppf(0.5 + level / 2.0)) * math.sqrt(self.residual_var_)
        return np.exp(mu - z), np.exp(mu + z)
