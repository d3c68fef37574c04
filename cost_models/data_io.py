"""Fitted text features and linear models as plain data: JSON parameters plus numpy arrays.

Artifacts are data: nothing a policy or cost-model folder holds is executed when it is
loaded. The fitted parts are taken apart into JSON-able parameters (a vectorizer's settings
and vocabulary) and numeric arrays (``idf_``, coefficients; saved with
:func:`numpy.savez`, read with ``allow_pickle=False``), and rebuilt on load from the classes
this package names — never from a class the file names.

Supported: the affix TF-IDF (:func:`cost_models.features.affix_tfidf`), word / ``char_wb``
TF-IDF vectorizers, those stacked in a :class:`~sklearn.pipeline.FeatureUnion` (optionally
with :class:`~cost_models.features.EmbeddingFeatures`), ridge and logistic regression.
Anything else (the ``svd-hgb`` cost model) cannot be saved as data and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import FeatureUnion, Pipeline

from cost_models.features import EmbeddingFeatures, affix_analyzer
from utilityguard_base.exceptions import InvalidValueError

Arrays = dict[str, NDArray[Any]]
#: The TfidfVectorizer settings kept (all plain values).
_TFIDF_KEYS = ("lowercase", "ngram_range", "min_df", "max_df", "sublinear_tf", "norm",
               "use_idf", "smooth_idf")


def _tfidf(vec: TfidfVectorizer, key: str, arrays: Arrays) -> dict[str, Any]:
    if vec.analyzer is affix_analyzer:
        analyzer = "affix"
    elif isinstance(vec.analyzer, str) and vec.analyzer in ("word", "char_wb", "char"):
        analyzer = vec.analyzer
    else:
        raise InvalidValueError(f"a vectorizer with analyzer {vec.analyzer!r} cannot be "
                                "saved as data")
    terms = sorted(vec.vocabulary_, key=vec.vocabulary_.get)
    arrays[f"{key}.terms"] = np.array(terms, dtype=np.str_)
    arrays[f"{key}.idf"] = np.asarray(vec.idf_, dtype=np.float64)
    params = {k: getattr(vec, k) for k in _TFIDF_KEYS}
    params["ngram_range"] = list(params["ngram_range"])
    return {"type": "tfidf", "analyzer": analyzer, "key": key, **params}


def _tfidf_from(p: dict[str, Any], arrays: Arrays) -> TfidfVectorizer:
    kw = {k: p[k] for k in _TFIDF_KEYS}
    kw["ngram_range"] = tuple(kw["ngram_range"])
    if p["analyzer"] == "affix":
        vec = TfidfVectorizer(analyzer=affix_analyzer, dtype=np.float64, **kw)
    elif p["analyzer"] in ("word", "char_wb", "char"):
        vec = TfidfVectorizer(analyzer=p["analyzer"], **kw)
    else:
        raise InvalidValueError(f"unknown analyzer {p['analyzer']!r} in a data artifact")
    terms = [str(t) for t in arrays[f"{p['key']}.terms"]]
    vec.vocabulary_ = {t: i for i, t in enumerate(terms)}
    vec.idf_ = np.asarray(arrays[f"{p['key']}.idf"], dtype=np.float64)
    return vec


def features_to_data(feats: Any, arrays: Arrays) -> dict[str, Any]:
    """The parameters of a fitted featurizer; its arrays are added to ``arrays``."""
    if isinstance(feats, TfidfVectorizer):
        return _tfidf(feats, "f0", arrays)
    if isinstance(feats, FeatureUnion):
        parts = []
        for k, (name, t) in enumerate(feats.transformer_list):
            if isinstance(t, EmbeddingFeatures):
                parts.append({"name": name, "type": "embed", "weight": float(t.weight)})
            elif isinstance(t, TfidfVectorizer):
                parts.append({"name": name, **_tfidf(t, f"f{k}", arrays)})
            else:
                raise InvalidValueError(f"a {type(t).__name__} cannot be saved as data")
        return {"type": "union", "parts": parts}
    raise InvalidValueError(f"{type(feats).__name__} features cannot be saved as data")


def features_from_data(p: dict[str, Any], arrays: Arrays) -> Any:
    """The featurizer :func:`features_to_data` described."""
    if p["type"] == "tfidf":
        return _tfidf_from(p, arrays)
    if p["type"] != "union":
        raise InvalidValueError(f"unknown features type {p['type']!r} in a data artifact")
    parts: list[tuple[str, Any]] = []
    for q in p["parts"]:
        if q["type"] == "embed":
            emb = EmbeddingFeatures(float(q["weight"]))
            emb.n_features_in_ = 1
            parts.append((str(q["name"]), emb))
        else:
            parts.append((str(q["name"]), _tfidf_from(q, arrays)))
    return FeatureUnion(parts)


def ridge_of(params: Mapping[str, Any]) -> Any:
    """The ridge penalty in saved parameters: ``"ridge"``, or ``"alpha"`` in files written
    before it was renamed (``alpha`` now means only ``P(answerable)``).

    >>> ridge_of({"ridge": 0.3}), ridge_of({"alpha": 1.0})
    (0.3, 1.0)
    """
    return params["ridge"] if "ridge" in params else params["alpha"]


def linear_to_data(model: Any, arrays: Arrays) -> dict[str, Any]:
    """Ridge or logistic regression coefficients (into ``arrays``) and parameters."""
    arrays["model.coef"] = np.asarray(model.coef_, dtype=np.float64)
    arrays["model.intercept"] = np.atleast_1d(np.asarray(model.intercept_, dtype=np.float64))
    if isinstance(model, Ridge):
        return {"type": "ridge", "ridge": float(model.alpha)}
    if isinstance(model, LogisticRegression):
        arrays["model.classes"] = np.asarray(model.classes_)
        return {"type": "logistic", "C": float(model.C)}
    raise InvalidValueError(f"a {type(model).__name__} cannot be saved as data")


def linear_from_data(p: dict[str, Any], arrays: Arrays) -> Any:
    coef = np.asarray(arrays["model.coef"], dtype=np.float64)
    intercept = np.asarray(arrays["model.intercept"], dtype=np.float64)
    model: Any
    if p["type"] == "ridge":
        model = Ridge(alpha=float(ridge_of(p)))
        model.intercept_ = float(intercept[0]) if coef.ndim == 1 else intercept
    elif p["type"] == "logistic":
        model = LogisticRegression(C=float(p["C"]))
        model.intercept_ = intercept
        model.classes_ = np.asarray(arrays["model.classes"])
    else:
        raise InvalidValueError(f"unknown model type {p['type']!r} in a data artifact")
    model.coef_ = coef
    model.n_features_in_ = int(coef.shape[-1])
    return model


def pipeline_to_data(pipe: Pipeline, arrays: Arrays) -> dict[str, Any]:
    """A ``features -> model`` pipeline as parameters (arrays into ``arrays``)."""
    steps = dict(pipe.steps)
    if set(steps) != {"features", "model"}:
        raise InvalidValueError(f"a pipeline of {', '.join(steps)} cannot be saved as data")
    return {"features": features_to_data(steps["features"], arrays),
            "model": linear_to_data(steps["model"], arrays)}


def pipeline_from_data(p: dict[str, Any], arrays: Arrays) -> Pipeline:
    return Pipeline([("features", features_from_data(p["features"], arrays)),
                     ("model", linear_from_data(p["model"], arrays))])
