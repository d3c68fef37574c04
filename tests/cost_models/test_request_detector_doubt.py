"""The request detector's doubt model is loaded from the detector's folder when its thresholds
name the rule (cost_models/request_detector.py), and refused when it is missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cost_models.persistence import save_artifact
from cost_models.regressor import CostRegressor
from cost_models.request_detector import DOUBT, RequestDetector, load_detector, save_detector
from utilityguard_base.exceptions import ArtifactError

ASKS = [f"what is the dose of drug {k}?" for k in range(12)]
NOTHING = [f"thanks a lot, see you {k}" for k in range(12)]


def _detector(thresholds: tuple[float, ...]) -> RequestDetector:
    return RequestDetector(thresholds=thresholds).fit(
        ASKS + NOTHING, np.array([True] * 12 + [False] * 12))


def _doubt() -> CostRegressor:
    return CostRegressor(cv=2).fit(ASKS + NOTHING, [20.0] * 12 + [0.2] * 12)


def test_thresholds_without_the_rule_load_no_doubt_model(tmp_path: Path) -> None:
    save_detector(_detector((0.1, 0.3, 0.8, 0.5, 8.0)), tmp_path, {})
    assert load_detector(tmp_path).doubt is None


def test_a_named_rule_without_its_model_is_refused(tmp_path: Path) -> None:
    save_detector(_detector((0.1, 0.3, 0.8, 0.5, 8.0, 0.5, 2.0)), tmp_path, {})
    with pytest.raises(ArtifactError, match="doubt_model"):
        load_detector(tmp_path)


def test_the_doubt_model_is_loaded_as_data_and_checked(tmp_path: Path) -> None:
    save_detector(_detector((0.1, 0.3, 0.8, 0.5, 8.0, 0.5, 2.0)), tmp_path, {})
    save_artifact(_doubt(), tmp_path, name=DOUBT)
    loaded = load_detector(tmp_path)
    assert loaded.thresholds[5:] == (0.5, 2.0)
    cheap, costly = loaded.doubt.predict(["thanks a lot, see you 99",
                                          "what is the dose of drug 99?"])
    assert cheap < 2.0 < costly
    # a replaced file is refused, as every artifact is
    (tmp_path / f"{DOUBT}.npz").write_bytes((tmp_path / f"{DOUBT}.npz").read_bytes() + b"x")
    with pytest.raises(ArtifactError, match="sha256"):
        load_detector(tmp_path)
