"""Grouped cross-validation, model selection, and the decision metrics on hand cases."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any, ClassVar

import numpy as np
import pytest
from numpy.typing import NDArray
from sklearn.model_selection import GroupKFold

from cost_models import regressor as regressor_module
from cost_models.regressor import CostRegressor
from cost_models.training import (
    P_GRID,
    RIDGE_GRID,
    CVScores,
    decision_agreement,
    decision_regret,
    grouped_cv,
    select_and_train,
)

WORDS = {"insulin": 2.5, "dose": 2.0, "bleach": 2.2, "loan": 1.0, "tax": 0.8, "court": 1.2,
         "river": -1.5, "capital": -1.2, "poem": -1.8, "trivia": -2.0, "sum": -0.8,
         "planet": -1.0}


@cache
def _data(n: int = 60) -> tuple[list[str], NDArray[np.float64], list[str]]:
    rng = np.random.default_rng(2)
    names = list(WORDS)
    texts, logy = [], []
    for k in range(n):
        picked = rng.choice(len(names), size=3, replace=False)
        texts.append(" ".join(names[i] for i in picked) + f" case {k}?")
        logy.append(sum(WORDS[names[i]] for i in picked) + rng.normal(0, 0.3))
    return texts, np.exp(np.array(logy)), [f"src{k % 6}" for k in range(n)]


def test_grid_is_p_from_zero_to_one_in_hundredths() -> None:
    assert P_GRID.shape == (101,)
    assert P_GRID[0] == 0.0 and P_GRID[-1] == 1.0


@pytest.mark.parametrize(
    ("pred", "true", "c_r", "agreement", "regret"),
    [
        pytest.param([2.0, 9.0], [2.0, 9.0], 2.0, 1.0, 0.0, id="exact"),
        # threshold 0 vs 8/11: they disagree for p = 0.00 .. 0.72 (73 of 101 points)
        pytest.param([2.0], [10.0], 2.0, 28 / 101, 294.92 / 101, id="under-estimate"),
        pytest.param([10.0], [2.0], 2.0, 28 / 101, 78.84 / 101, id="over-estimate"),
        pytest.param([0.5], [1.5], 2.0, 1.0, 0.0, id="both-always-answer"),
        pytest.param([2.0, 10.0], [10.0, 10.0], 2.0, (28 / 101 + 1) / 2, 294.92 / 202,
                     id="mean-over-items"),
    ],
)
def test_decision_metrics_by_hand(pred: list[float], true: list[float], c_r: float,
                                  agreement: float, regret: float) -> None:
    assert decision_agreement(pred, true, c_r) == pytest.approx(agreement, rel=1e-12)
    assert decision_regret(pred, true, c_r) == pytest.approx(regret, rel=1e-9)


def test_regret_is_never_negative_and_zero_only_for_the_same_decisions() -> None:
    rng = np.random.default_rng(0)
    true = np.exp(rng.normal(0, 2, 200))
    pred = true * np.exp(rng.normal(0, 1, 200))
    assert decision_regret(pred, true) > 0
    assert decision_regret(true, true) == 0.0
    # costs that only differ below C_R decide alike: always answer
    assert decision_regret([0.1, 1.0], [1.9, 0.5]) == 0.0


def test_the_mean_cost_loses_less_than_the_median_when_costs_are_skewed() -> None:
    """Why the guard uses E[L]: a log-normal cost model's median under-states costly errors."""
    rng = np.random.default_rng(1)
    mu = rng.normal(0.5, 1.0, 4000)
    s2 = 1.5
    true = np.exp(mu + rng.normal(0, np.sqrt(s2), mu.size))
    assert decision_regret(np.exp(mu + s2 / 2), true) < decision_regret(np.exp(mu), true)


def test_c_r_changes_the_decisions() -> None:
    assert decision_agreement([4.0], [6.0], c_r=2.0) < 1.0
    assert decision_agreement([4.0], [6.0], c_r=10.0) == 1.0  # both always answer


def test_grouped_cv_scores() -> None:
    texts, cost, sources = _data()
    calls: list[int] = []
    scores = grouped_cv(texts, cost, sources, kind="affix-ridge", ridge=0.3, cv=3,
                        on_fold=lambda: calls.append(1))
    assert isinstance(scores, CVScores)
    assert len(calls) == 3
    assert scores.kind == "affix-ridge" and scores.ridge == 0.3
    assert 0.5 < scores.spearman <= 1.0
    assert scores.mae_log > 0
    assert scores.decision_agreement is None and scores.decision_regret is None
    assert set(scores.to_dict()) >= {"spearman", "mae_log", "decision_agreement", "seconds"}


def test_nested_grouped_cv_scores_the_decisions() -> None:
    texts, cost, sources = _data()
    scores = grouped_cv(texts, cost, sources, kind="affix-ridge", ridge=0.3, cv=3, nested=True)
    for value in (scores.decision_agreement, scores.decision_agreement_median):
        assert value is not None and 0.0 <= value <= 1.0
    for value in (scores.decision_regret, scores.decision_regret_median):
        assert value is not None and value >= 0.0


class SpyGroupKFold(GroupKFold):  # type: ignore[misc]
    calls: ClassVar[list[set[str]]] = []

    def split(self, X: Any, y: Any = None, groups: Any = None) -> Iterator[Any]:
        SpyGroupKFold.calls.append(set(groups))
        yield from super().split(X, y, groups)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    SpyGroupKFold.calls = []
    monkeypatch.setattr(regressor_module, "GroupKFold", SpyGroupKFold)
    return SpyGroupKFold.calls


def test_grouped_cv_uses_group_kfold_when_groups_suffice(spy: list[set[str]]) -> None:
    texts, cost, sources = _data()
    grouped_cv(texts, cost, sources, kind="affix-ridge", ridge=0.3, cv=3)
    assert spy == [set(sources)]


def test_grouped_cv_falls_back_to_kfold_with_too_few_groups(spy: list[set[str]]) -> None:
    texts, cost, _ = _data()
    two = ["a", "b"] * (len(texts) // 2)
    scores = grouped_cv(texts, cost, two, kind="affix-ridge", ridge=0.3, cv=3)
    assert spy == []
    assert np.isfinite(scores.spearman)


def test_cost_regressor_uses_groups_for_its_residual_variance(spy: list[set[str]]) -> None:
    texts, cost, sources = _data()
    CostRegressor(cv=3).fit(texts, cost, groups=sources)
    assert spy == [set(sources)]
    CostRegressor(cv=3).fit(texts, cost)
    assert len(spy) == 1


def test_select_and_train_picks_the_ridge_penalty_and_fits_on_everything() -> None:
    texts, cost, sources = _data()
    folds_done: list[int] = []
    model, report = select_and_train(texts, cost, sources, compare=("char-ridge",), cv=3,
                                     on_fold=lambda: folds_done.append(1))
    assert model.n_train_ == len(texts)
    assert model.ridge in RIDGE_GRID
    assert [s.ridge for s in report.ridge_search] == list(RIDGE_GRID)
    best = min(report.ridge_search, key=lambda s: s.mae_log)
    assert report.selected.ridge == best.ridge == model.ridge
    assert report.selected.decision_agreement is not None
    assert [s.kind for s in report.alternatives] == ["char-ridge"]
    assert len(folds_done) == 3 * (len(RIDGE_GRID) + 1 + 1)
    as_dict = report.to_dict()
    assert set(as_dict) == {"selected", "ridge_search", "alternatives", "scheme", "grouped"}
    assert (model.predict(texts[:3]) > 0).all()


def test_select_and_train_skips_comparing_the_kind_with_itself() -> None:
    texts, cost, sources = _data()
    _, report = select_and_train(texts, cost, sources, compare=("affix-ridge",), cv=3,
                                 ridges=(0.3,))
    assert report.alternatives == []


def test_select_and_train_rejects_an_unknown_kind() -> None:
    texts, cost, sources = _data()
    with pytest.raises(ValueError, match="kind must be one of affix-ridge, affix-embed-ridge, "
                                         "char-ridge, svd-hgb"):
        select_and_train(texts, cost, sources, kind="gpt")


def test_train_report_says_whether_folds_were_grouped(spy: list[set[str]]) -> None:
    texts, cost, sources = _data()
    _, grouped = select_and_train(texts, cost, sources, ridges=(0.3,), cv=3,
                                  group_name="source")
    assert grouped.grouped is True and grouped.scheme.startswith("grouped 3-fold CV")
    assert spy  # GroupKFold really ran
    spy.clear()
    _, shuffled = select_and_train(texts, cost, None, ridges=(0.3,), cv=3)
    assert shuffled.grouped is False and "shuffled 3-fold KFold" in shuffled.scheme
    assert spy == []  # and did not run when the report says shuffled
    assert shuffled.to_dict()["grouped"] is False
