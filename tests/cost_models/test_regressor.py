"""CostRegressor: the scikit-learn estimator contract and E[L] = exp(mu + s^2 / 2)."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from cost_models import regressor as regressor_module
from cost_models.features import affix_analyzer
from cost_models.regressor import KINDS, CostRegressor, build_pipeline, folds

WORDS = {"insulin": 2.5, "dose": 2.0, "bleach": 2.2, "loan": 1.0, "tax": 0.8, "court": 1.2,
         "river": -1.5, "capital": -1.2, "poem": -1.8, "trivia": -2.0, "sum": -0.8,
         "planet": -1.0}


@cache
def _data(n: int = 72, seed: int = 0) -> tuple[list[str], NDArray[np.float64], list[str]]:
    """Texts whose log-cost is the sum of their words' weights plus noise; sources cycle."""
    rng = np.random.default_rng(seed)
    names = list(WORDS)
    texts, logy = [], []
    for k in range(n):
        picked = rng.choice(len(names), size=3, replace=False)
        texts.append(" ".join(names[i] for i in picked) + f" question {k}?")
        logy.append(sum(WORDS[names[i]] for i in picked) + rng.normal(0, 0.3))
    sources = [f"src{k % 6}" for k in range(n)]
    return texts, np.exp(np.array(logy)), sources


@cache
def _fitted() -> CostRegressor:
    texts, cost, sources = _data()
    return CostRegressor(cv=3).fit(texts, cost, groups=sources)


def test_init_only_stores_parameters() -> None:
    model = CostRegressor(kind="char-ridge", ridge=2.0, cv=4, max_chars=100, random_state=3)
    assert model.get_params() == {"kind": "char-ridge", "ridge": 2.0, "cv": 4,
                                  "max_chars": 100, "random_state": 3}
    assert not [k for k in vars(model) if k.endswith("_")]


def test_clone_and_set_params() -> None:
    model = CostRegressor(ridge=3.0)
    copy = clone(model)
    assert copy is not model
    assert copy.get_params() == model.get_params()
    assert copy.set_params(ridge=0.5) is copy
    assert copy.ridge == 0.5
    assert model.ridge == 3.0


def test_fit_returns_self_and_learned_attributes_end_in_underscore() -> None:
    texts, cost, sources = _data()
    model = CostRegressor(cv=3)
    assert model.fit(texts, cost, groups=sources) is model
    learned = {k for k in vars(model) if k not in model.get_params()}
    assert learned
    assert all(k.endswith("_") for k in learned), learned
    assert model.n_train_ == len(texts)
    assert model.residual_var_ > 0
    assert model.oof_log_pred_.shape == (len(texts),)


def test_predict_before_fit_raises_not_fitted() -> None:
    model = CostRegressor()
    with pytest.raises(NotFittedError):
        model.predict(["q?"])
    with pytest.raises(NotFittedError):
        model.predict_interval(["q?"])
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    check_is_fitted(_fitted())


def test_predictions_are_positive_and_the_lognormal_mean() -> None:
    model = _fitted()
    texts = ["insulin dose question?", "river trivia question?", "unseen words entirely"]
    mean = model.predict(texts)
    mu = model.predict_log(texts)
    assert mean.shape == (3,)
    assert (mean > 0).all()
    np.testing.assert_allclose(mean, np.exp(mu + model.residual_var_ / 2), rtol=1e-12)
    assert (mean > np.exp(mu)).all()  # the mean of a log-normal exceeds its median


def test_the_model_learns_the_ordering() -> None:
    model = _fitted()
    high, low = model.predict(["insulin dose bleach question?", "river trivia poem question?"])
    assert high > 10 * low


def test_fast_ridge_path_matches_the_pipeline() -> None:
    model = _fitted()
    texts = ["insulin dose question?", "tax court loan?"]
    np.testing.assert_allclose(model.predict_log(texts), model.pipeline_.predict(texts),
                               rtol=1e-10)


def test_residual_variance_is_out_of_fold() -> None:
    texts, cost, _ = _data()
    model = _fitted()
    assert model.residual_var_ == pytest.approx(
        float(np.mean((model.oof_log_pred_ - np.log(cost)) ** 2)))
    in_sample = float(np.mean((model.predict_log(texts) - np.log(cost)) ** 2))
    assert model.residual_var_ > in_sample


@pytest.mark.parametrize("level", [0.5, 0.8, 0.95])
def test_interval_contains_the_median(level: float) -> None:
    model = _fitted()
    texts = ["insulin dose question?", "river question?"]
    lo, hi = model.predict_interval(texts, level=level)
    median = np.exp(model.predict_log(texts))
    assert (lo > 0).all()
    assert (lo < median).all() and (median < hi).all()
    np.testing.assert_allclose(lo * hi, median**2, rtol=1e-10)  # symmetric in log space


def test_interval_widens_with_level() -> None:
    model = _fitted()
    widths = [np.log(hi / lo) for lo, hi in
              (model.predict_interval(["dose?"], level=lv) for lv in (0.5, 0.8, 0.95, 0.99))]
    assert (np.diff(np.ravel(widths)) > 0).all()


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5])
def test_interval_level_must_be_inside_zero_one(level: float) -> None:
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        _fitted().predict_interval(["q?"], level=level)


def test_empty_input_gives_empty_predictions() -> None:
    model = _fitted()
    assert model.predict([]).shape == (0,)
    lo, hi = model.predict_interval([])
    assert lo.shape == hi.shape == (0,)


@pytest.mark.parametrize(
    ("X", "match"),
    [
        pytest.param("What is the dose?", "not one string", id="bare-string"),
        pytest.param(["ok", 3], r"X\[1\] must be a string, got int", id="non-string"),
        pytest.param(42, "must be a list of strings", id="not-iterable"),
    ],
)
def test_bad_inputs_to_predict(X: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _fitted().predict(X)


@pytest.mark.parametrize(
    ("kwargs", "y", "groups", "match"),
    [
        pytest.param({}, "short", None, "one cost per text", id="y-length"),
        pytest.param({}, "zero", None, "finite costs > 0", id="zero-cost"),
        pytest.param({}, "nan", None, "finite costs > 0", id="nan-cost"),
        pytest.param({"cv": 1}, None, None, "cv must be >= 2", id="cv-1"),
        pytest.param({"cv": 40}, None, None, "need at least 80 training texts", id="too-few"),
        pytest.param({}, None, ["a"], "one entry per text", id="groups-length"),
        pytest.param({"kind": "forest"}, None, None, "kind must be one of", id="bad-kind"),
    ],
)
def test_bad_inputs_to_fit(kwargs: dict[str, Any], y: str | None, groups: list[str] | None,
                           match: str) -> None:
    texts, cost, _ = _data()
    target = {None: cost, "short": cost[:-1], "zero": np.where(np.arange(cost.size) == 3, 0.0,
                                                                cost),
              "nan": np.where(np.arange(cost.size) == 3, np.nan, cost)}[y]
    with pytest.raises(ValueError, match=match):
        CostRegressor(**{"cv": 3, **kwargs}).fit(texts, target, groups=groups)


def test_fit_rejects_a_bare_string() -> None:
    with pytest.raises(ValueError, match="not one string"):
        CostRegressor().fit("some text", [1.0])


def test_max_chars_cuts_texts_before_featurizing() -> None:
    texts, cost, _ = _data()
    model = CostRegressor(cv=3, max_chars=12).fit(texts, cost)
    assert model.predict_log([texts[0]])[0] == pytest.approx(
        model.predict_log([texts[0][:12] + " insulin insulin"])[0])


def test_refit_as_another_kind_drops_the_ridge_coefficients(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model refit as a non-ridge kind must not predict with an earlier ridge fit."""
    texts, cost, _ = _data()

    def cheap(kind: str, ridge: float, random_state: int) -> Pipeline:
        if kind == "svd-hgb":  # stand-in for the slow kind: any non-ridge model
            return Pipeline([("features", TfidfVectorizer(analyzer=affix_analyzer)),
                             ("model", KNeighborsRegressor(n_neighbors=3))])
        return build_pipeline(kind, ridge, random_state)

    monkeypatch.setattr(regressor_module, "build_pipeline", cheap)
    model = CostRegressor(cv=3).fit(texts, cost)
    assert hasattr(model, "coef_")
    model.set_params(kind="svd-hgb").fit(texts, cost)
    assert not hasattr(model, "coef_")
    assert not hasattr(model, "intercept_")
    np.testing.assert_allclose(model.predict_log(texts[:5]), model.pipeline_.predict(texts[:5]))


@pytest.mark.parametrize("kind", KINDS)
def test_build_pipeline_knows_every_kind(kind: str) -> None:
    assert isinstance(build_pipeline(kind, 1.0, 0), Pipeline)


def test_char_ridge_fits_and_predicts() -> None:
    texts, cost, sources = _data(n=36)
    model = CostRegressor(kind="char-ridge", cv=3).fit(texts, cost, groups=sources)
    assert (model.predict(["insulin dose?"]) > 0).all()


def test_folds_are_grouped_when_there_are_enough_groups() -> None:
    groups = [f"s{k % 5}" for k in range(40)]
    for train, test in folds(40, groups, 5, 0):
        assert not {groups[i] for i in train} & {groups[i] for i in test}


def test_folds_fall_back_to_shuffled_kfold_with_few_groups() -> None:
    groups = ["a"] * 20 + ["b"] * 20
    splits = folds(40, groups, 5, 0)
    assert len(splits) == 5
    assert sorted(np.concatenate([test for _, test in splits]).tolist()) == list(range(40))
    assert folds(40, groups, 5, 0)[0][1].tolist() == splits[0][1].tolist()  # seeded
    assert any(len({groups[i] for i in test}) == 2 for _, test in splits)


def test_one_query_fast_path_equals_the_batch_path() -> None:
    from cost_models import load_default
    from cost_models.datasets import load_seed

    model = load_default()
    texts = [it.question for it in load_seed()[:200]] + ["", "zzzz unknown-words-only qqqq"]
    batch = model.predict_log(texts)
    one = np.array([model.predict_log([t])[0] for t in texts])
    np.testing.assert_allclose(one, batch, rtol=0, atol=1e-10)
    assert "_scorer_" not in model.__getstate__()


def test_embedding_kind_one_query_path_equals_the_batch_path() -> None:
    pytest.importorskip("wordllama")
    texts, cost, sources = _data(n=48)
    model = CostRegressor(kind="affix-embed-ridge", cv=3).fit(texts, cost, groups=sources)
    vocab = len(model.pipeline_.named_steps["features"].transformer_list[0][1].vocabulary_)
    assert model.coef_.shape == (vocab + 256,)  # TF-IDF block, then the 256-d embedding block
    probe = [*texts[:10], "", "How much insulin should I take before dinner?"]
    batch = model.predict_log(probe)
    one = np.array([model.predict_log([t])[0] for t in probe])
    np.testing.assert_allclose(one, batch, rtol=0, atol=1e-10)
    np.testing.assert_allclose(batch, model.pipeline_.predict(probe), rtol=0, atol=1e-10)


def test_paraphrases_train_at_their_items_cost_and_never_leak_into_a_fold() -> None:
    """A paraphrase joins a fold's training rows only with the text it paraphrases, at that
    text's cost; scoring is on the original texts only."""
    from cost_models.regressor import Paraphrases

    para = Paraphrases(["tell me a", "tell me b", "tell me c"], [0, 1, 2])
    texts, y = para.with_rows(["a", "c"], np.log([2.0, 4.0, 8.0]), [0, 2])
    assert texts == ["a", "c", "tell me a", "tell me c"]  # b is not trained on: neither is its
    assert np.allclose(np.exp(y), [2.0, 8.0, 2.0, 8.0])
    rng = np.random.default_rng(0)
    words = ["dose", "capital", "insulin", "river", "warfarin", "poem"]
    X = [" ".join(rng.choice(words, 4)) for _ in range(60)]
    cost = np.array([20.0 if ("dose" in t or "insulin" in t) else 1.0 for t in X])
    plain = CostRegressor(cv=3).fit(X, cost)
    with_para = CostRegressor(cv=3).fit(X, cost, paraphrases=Paraphrases(
        [f"please tell me {t}" for t in X], list(range(len(X)))))
    assert with_para.oof_log_pred_.shape == plain.oof_log_pred_.shape == (60,)
    # "please tell me" adds nothing to the cost once it was trained on at the items' costs
    q = "please tell me dose insulin dose poem"
    assert with_para.predict([q])[0] == pytest.approx(
        with_para.predict(["dose insulin dose poem"])[0], rel=0.25)


def test_the_shipped_cost_model_is_recognized_as_trained_on_the_seed_set() -> None:
    """The bench refits a cost model per fold only when it knows the model saw the items (by
    the training-data hash): a model trained with paraphrases must still be known, or the bench
    would score it on the questions it was trained on."""
    from benchmarks.bench.crossfit import trained_on
    from benchmarks.bench.data import load_bench, shipped_responses
    from cost_models import load_default
    from cost_models.datasets import load_seed
    from cost_models.model_io import default_model_dir
    from cost_models.persistence import read_sidecar

    items = load_seed()
    meta = read_sidecar(default_model_dir(), name="cost_model")
    assert meta.get("paraphrases")  # the shipped model was trained with them
    assert trained_on(load_default(), meta, load_bench(items, shipped_responses()), items)


def test_floor_rows_teach_the_model_that_such_text_is_cheap_and_are_never_scored() -> None:
    from cost_models.regressor import Floor

    texts, cost, sources = _data()
    chat = [f"thanks for the insulin dose tip friend {k}" for k in range(40)]
    plain = CostRegressor(cv=3).fit(texts, cost, groups=sources)
    floored = CostRegressor(cv=3).fit(texts, cost, groups=sources,
                                      floor=Floor(chat, 0.05, 1.0))
    probe = ["thanks for the insulin dose tip friend"]
    # the words "insulin dose" make it costly to a model that saw questions alone
    assert floored.predict(probe)[0] < plain.predict(probe)[0] / 2
    # out-of-fold scores are of the training texts only (the floor's rows are never scored)
    assert floored.oof_log_pred_.shape == (len(texts),)
    for bad in (Floor(chat, 0.0, 1.0), Floor(chat, 0.05, 0.0)):
        with pytest.raises(ValueError, match="floor"):
            CostRegressor(cv=3).fit(texts, cost, groups=sources, floor=bad)
