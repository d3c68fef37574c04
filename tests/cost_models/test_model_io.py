"""Cost models on disk: save/load, the shipped default model, the model card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cost_models
from cost_models.model_io import (
    ARTIFACT,
    default_model_dir,
    load_default,
    load_model,
    model_card,
    save_model,
)
from cost_models.persistence import read_sidecar, save_artifact, sha256_file
from cost_models.regressor import CostRegressor
from guard.exceptions import ArtifactError


class _Foreign:
    """Some other data artifact (not this kind of model)."""

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"not": "a model"}, {"w": np.zeros(1)}

TEXTS = [f"{w} question {k}?" for k, w in enumerate(
    ["insulin dose", "bleach mix", "river name", "poem line", "tax loan", "court date"] * 4)]
COST = np.array([30.0, 20.0, 0.2, 0.1, 3.0, 4.0] * 4)

META: dict[str, Any] = {
    "kind": "affix-ridge", "ridge": 0.3, "residual_var": 0.75, "n_train": 24,
    "data": "tiny.parquet", "group_col": "source", "cv_folds": 3, "c_r": 2.0,
    "training_data_sha256": "f" * 64, "command": "utilityguard cost train --data tiny.parquet",
    "cv": {
        "scheme": "grouped 3-fold CV: each fold holds out whole sources (5 distinct)",
        "grouped": True,
        "selected": {"kind": "affix-ridge", "ridge": 0.3, "spearman": 0.8123, "mae_log": 0.4567,
                     "decision_agreement": 0.9012, "decision_regret": 0.0341,
                     "decision_agreement_median": 0.9234, "decision_regret_median": 0.0567,
                     "seconds": 0.5},
        "alpha_search": [{"ridge": 0.1, "mae_log": 0.5111}, {"ridge": 0.3, "mae_log": 0.4567}],
        "alternatives": [{"kind": "char-ridge", "ridge": 0.3, "spearman": 0.7001,
                          "mae_log": 0.6002, "seconds": 1.25}],
    },
}


def _model() -> CostRegressor:
    return CostRegressor(cv=3).fit(TEXTS, COST)


def _legacy(meta: Any) -> Any:
    """``meta`` as written before the ridge penalty was renamed from ``alpha``."""
    if isinstance(meta, dict):
        return {("alpha" if k == "ridge" else "alpha_search" if k == "ridge_search" else k):
                _legacy(v) for k, v in meta.items()}
    return [_legacy(v) for v in meta] if isinstance(meta, list) else meta


def test_a_card_written_before_the_rename_reads_the_same() -> None:
    legacy = _legacy(META)
    assert "alpha" in legacy and "alpha_search" in legacy["cv"] and "ridge" not in legacy
    assert model_card(legacy) == model_card(META)
    assert "| affix-ridge | 0.3 | 0.812 |" in model_card(legacy)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    model = _model()
    side = save_model(model, tmp_path / "m", META)
    assert side == tmp_path / "m" / f"{ARTIFACT}.json"
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, CostRegressor)
    np.testing.assert_array_equal(loaded.predict(TEXTS[:4]), model.predict(TEXTS[:4]))
    assert loaded.get_params() == model.get_params()


def test_saved_model_has_a_card_with_the_metrics(tmp_path: Path) -> None:
    save_model(_model(), tmp_path, META)
    card = (tmp_path / "README.md").read_text()
    for text in ("0.812", "0.457", "0.901", "0.034", "0.923", "0.057",  # selected
                 "| char-ridge | 0.3 | 0.700 | 0.600 | n/a |",  # alternative, log L only
                 "0.1: 0.511, 0.3: 0.457",  # ridge-penalty search
                 "`s^2 = 0.750`", "affix-ridge", "trained on\n  24 items of `tiny.parquet`",
                 "## Cross-validation (3 folds): grouped 3-fold CV: each fold holds out whole "
                 "sources (5 distinct)", "Each fold holds out whole `source` values",
                 "C_R = 2.0", "f" * 64,
                 "utilityguard cost train --data tiny.parquet"):
        assert text in card, text
    sidecar = read_sidecar(tmp_path, name=ARTIFACT)
    assert sidecar["sha256"] in card
    assert f"scikit-learn {sidecar['versions']['scikit-learn']}" in card


def test_model_card_without_cv_results() -> None:
    card = model_card({"kind": "affix-ridge"})
    assert card.startswith("# Cost model — model card")
    assert "`s^2 = n/a`" in card


def test_load_model_refuses_a_tampered_artifact(tmp_path: Path) -> None:
    save_model(_model(), tmp_path, META)
    artifact = tmp_path / f"{ARTIFACT}.npz"
    artifact.write_bytes(artifact.read_bytes()[:-1] + b"!")
    with pytest.raises(ArtifactError, match="sha256"):
        load_model(tmp_path)


def test_load_model_refuses_something_else(tmp_path: Path) -> None:
    save_artifact(_Foreign(), tmp_path, name=ARTIFACT)
    with pytest.raises(ArtifactError, match="not a readable utilityguard artifact"):
        load_model(tmp_path)


def test_load_default_predicts_positive_costs_for_a_list() -> None:
    model = load_default()
    questions = ["What is the maximum daily dose of acetaminophen for an adult?",
                 "What is the capital of France?", ""]
    cost = model.predict(questions)
    assert cost.shape == (3,)
    assert (cost > 0).all() and np.isfinite(cost).all()
    assert cost[0] > cost[1]
    lo, hi = model.predict_interval(questions[:2])
    assert (lo < hi).all()


def test_the_default_model_sidecar_matches_and_its_card_is_current() -> None:
    directory = default_model_dir()
    meta = read_sidecar(directory, name=ARTIFACT)
    assert meta["sha256"] == sha256_file(directory / f"{ARTIFACT}.npz")
    assert (directory / "README.md").read_text(encoding="utf-8") == model_card(meta)
    model = load_default()
    assert meta["residual_var"] == pytest.approx(model.residual_var_)
    assert meta["n_train"] == model.n_train_
    assert meta["kind"] == model.kind and meta["ridge"] == model.ridge


def test_the_default_model_is_readable_by_everyone() -> None:
    """Package data must not be private to the user who built it (a 0600 file in an
    installed package cannot be loaded by other users)."""
    for path in default_model_dir().iterdir():
        assert path.stat().st_mode & 0o444 == 0o444, f"{path.name} is not world-readable"


def test_package_exports() -> None:
    assert cost_models.__all__ == sorted(cost_models.__all__)
    assert cost_models.load_default is load_default
    assert cost_models.CostRegressor is CostRegressor
    assert issubclass(cost_models.ArtifactError, ValueError)


def test_sidecar_is_json_with_the_metadata(tmp_path: Path) -> None:
    save_model(_model(), tmp_path, META)
    meta = json.loads((tmp_path / f"{ARTIFACT}.json").read_text())
    assert meta["cv"] == META["cv"]
    assert meta["training_data_sha256"] == "f" * 64


def test_card_of_an_artifact_without_a_recorded_scheme_claims_no_grouping() -> None:
    meta = {**META, "cv": {k: v for k, v in META["cv"].items() if k not in ("scheme", "grouped")}}
    card = model_card(meta)
    assert "## Cross-validation (3 folds): not recorded" in card
    assert "holds out whole" not in card


def test_parameters_saved_before_the_rename_load_the_ridge_penalty() -> None:
    model = CostRegressor(ridge=0.7, cv=3).fit(TEXTS, COST)
    params, arrays = model.to_data()
    params["alpha"] = params.pop("ridge")  # the key files written before the rename carry
    params["pipeline"]["model"]["alpha"] = params["pipeline"]["model"].pop("ridge")
    loaded = CostRegressor.from_data(params, arrays)
    assert loaded.ridge == 0.7
    np.testing.assert_array_equal(loaded.predict(TEXTS), model.predict(TEXTS))
