"""Calibration: metrics, the raw mapping, the three methods, auto selection, persistence."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cost_models.persistence import save_artifact
from guard import (
    CalibrationError,
    Calibrator,
    ConfidenceError,
    Guard,
    brier,
    cross_val_probability,
    ece,
    raw_probability,
)
from guard.calibration.methods import METHODS
from guard.exceptions import ArtifactError


class _Foreign:
    """Some other data artifact (not this kind of model)."""

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"not": "a model"}, {"w": np.zeros(1)}


def miscalibrated(n: int = 600, seed: int = 0) -> tuple[Any, Any, Any]:
    """True p = sigmoid(3x); the model reports exp(logprob) = sigmoid(x) (underconfident at
    both ends) shifted up by a constant (overconfident overall), as small models are."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    correct = rng.random(n) < 1.0 / (1.0 + np.exp(-3.0 * x))
    stated = 0.5 + 0.5 / (1.0 + np.exp(-x))  # in (0.5, 1): always sure-ish
    return np.log(stated), correct, 1.0 / (1.0 + np.exp(-3.0 * x))


@pytest.mark.parametrize(
    ("prob", "correct", "expected_brier", "expected_ece"),
    [
        pytest.param([1.0, 0.0], [True, False], 0.0, 0.0, id="perfect"),
        pytest.param([0.5, 0.5], [True, False], 0.25, 0.0, id="coin"),
        pytest.param([0.9] * 4, [1, 1, 1, 0], 0.21, 0.15, id="overconfident"),
        pytest.param([0.05, 0.95], [0, 1], 0.0025, 0.05, id="two-bins"),
        pytest.param([1.0], [False], 1.0, 1.0, id="one-wrong-certain"),
    ],
)
def test_metrics(prob: list[float], correct: list[Any], expected_brier: float,
                 expected_ece: float) -> None:
    assert brier(prob, correct) == pytest.approx(expected_brier)
    assert ece(prob, correct) == pytest.approx(expected_ece)


@pytest.mark.parametrize(
    ("prob", "correct", "match"),
    [
        pytest.param([0.5, None], [1, 0], r"prob\[1\] is None", id="none"),
        pytest.param([0.5, math.nan], [1, 0], r"prob\[1\] is nan", id="nan"),
        pytest.param([1.5], [1], r"prob must be a probability in \[0, 1\]", id="range"),
        pytest.param([0.5], [1, 0], "one length", id="lengths"),
        pytest.param([0.5], [2], "booleans", id="labels"),
        pytest.param([], [], "at least one sample", id="empty"),
    ],
)
def test_metric_errors(prob: list[Any], correct: list[Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        brier(prob, correct)


def test_raw_probability() -> None:
    assert raw_probability("logprob_mean", math.log(0.25)) == pytest.approx(0.25)
    assert raw_probability("logprob_low10", 0.01) == 1.0
    assert raw_probability("consistency", 0.6) == 0.6
    np.testing.assert_allclose(raw_probability("verbal", [0.1, 0.9]), [0.1, 0.9])
    with pytest.raises(ConfidenceError, match="unknown confidence signal 'vibes'"):
        raw_probability("vibes", 0.5)
    with pytest.raises(ConfidenceError, match="verbal must be a probability"):
        raw_probability("verbal", [0.5, 1.2])
    with pytest.raises(ValueError, match="is None"):
        raw_probability("verbal", None)


@pytest.mark.parametrize("method", [pytest.param(m, id=m) for m in ("auto", *METHODS)])
def test_calibration_lowers_out_of_fold_brier(method: str) -> None:
    lp, correct, _ = miscalibrated()
    raw = raw_probability("logprob_mean", lp)
    oof = cross_val_probability(Calibrator(method=method), lp, correct)
    assert brier(oof, correct) < brier(raw, correct) - 0.03
    assert ece(oof, correct) < ece(raw, correct) / 2
    assert ((oof >= 0.0) & (oof <= 1.0)).all()


def test_auto_keeps_the_lowest_cross_validated_brier() -> None:
    lp, correct, true_p = miscalibrated()
    cal = Calibrator().fit(lp, correct)
    assert set(cal.cv_brier_) == set(cal.cv_ece_) == set(METHODS)
    assert cal.cv_brier_[cal.method_] == min(cal.cv_brier_.values())
    assert (cal.n_samples_, cal.n_correct_) == (600, int(correct.sum()))
    p = cal.predict(lp)
    assert np.abs(p - true_p).mean() < 0.08
    assert (np.diff(cal.predict(np.sort(lp))) >= -1e-12).all()
    fixed = Calibrator(method="isotonic").fit(lp, correct)
    assert (fixed.method_, set(fixed.cv_brier_)) == ("isotonic", {"isotonic"})


def test_fit_is_deterministic() -> None:
    lp, correct, _ = miscalibrated(200, seed=3)
    a = Calibrator(random_state=7).fit(lp, correct)
    b = Calibrator(random_state=7).fit(lp, correct)
    assert a.cv_brier_ == b.cv_brier_ and a.training_hash_ == b.training_hash_


@pytest.mark.parametrize(
    ("kwargs", "x", "y", "match"),
    [
        pytest.param({}, [-0.1] * 10, [True] * 10, "at least 2 correct and 2 incorrect",
                     id="one-class"),
        pytest.param({"method": "beta"}, [-0.1, -1], [1, 0], "method must be 'auto' or one of",
                     id="method"),
        pytest.param({"signal": "vibes"}, [-0.1, -1], [1, 0], "signal must be one of",
                     id="signal"),
        pytest.param({"cv": 1}, [-0.1, -1], [1, 0], "cv must be an integer >= 2", id="cv"),
        pytest.param({}, [-0.1, -1, -2], [1, 0], "one length", id="lengths"),
    ],
)
def test_fit_errors(kwargs: dict[str, Any], x: list[float], y: list[Any], match: str) -> None:
    with pytest.raises(CalibrationError, match=match):
        Calibrator(**kwargs).fit(x, y)


def test_predict_errors() -> None:
    with pytest.raises(CalibrationError, match="not fitted"):
        Calibrator().predict([-0.1])
    lp, correct, _ = miscalibrated(100)
    cal = Calibrator(method="platt").fit(lp, correct)
    with pytest.raises(ValueError, match=r"logprob_mean\[1\] is None"):
        cal.predict([-0.1, None])
    with pytest.raises(ValueError, match=r"logprob_mean\[0\] is nan"):
        cal.predict([math.nan])
    with pytest.raises(CalibrationError, match="at least 3 correct and 3 incorrect"):
        cross_val_probability(Calibrator(), [-0.1, -0.2, -1, -2], [1, 1, 0, 0])


def test_save_load_round_trip(tmp_path: Path) -> None:
    lp, correct, _ = miscalibrated(300)
    cal = Calibrator().fit(lp, correct)
    sidecar = cal.save(tmp_path, metadata={"note": "test"})
    meta = json.loads(sidecar.read_text())
    assert (meta["kind"], meta["signal"], meta["method"], meta["note"]) == (
        "calibrator", "logprob_mean", cal.method_, "test")
    assert meta["cv_brier"] == cal.cv_brier_ and meta["training_hash"] == cal.training_hash_
    loaded = Calibrator.load(tmp_path)
    np.testing.assert_array_equal(loaded.predict(lp), cal.predict(lp))
    record = Guard(calibrator=loaded).decide("q", "a", confidence={"logprob_mean": -0.2},
                                             cost=3.0)
    assert (record.p_source, record.p) == ("calibrated", pytest.approx(cal.predict([-0.2])[0]))


def test_tampered_or_foreign_artifacts_are_refused(tmp_path: Path) -> None:
    lp, correct, _ = miscalibrated(100)
    Calibrator(method="platt").fit(lp, correct).save(tmp_path)
    artifact = tmp_path / "calibrator.npz"
    artifact.write_bytes(artifact.read_bytes() + b"\0")
    with pytest.raises(ArtifactError, match="does not match the sidecar"):
        Calibrator.load(tmp_path)
    with pytest.raises(ArtifactError, match="no sidecar"):
        Calibrator.load(tmp_path / "missing")
    with pytest.raises(CalibrationError, match="cannot save an unfitted"):
        Calibrator().save(tmp_path)
    other = tmp_path / "other"
    save_artifact(_Foreign(), other, name="calibrator")
    with pytest.raises(ArtifactError, match="not a readable utilityguard artifact"):
        Calibrator.load(other)


def test_the_scikit_learn_estimator_contract() -> None:
    """clone / get_params / set_params / check_is_fitted work as on any estimator."""
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    cal = Calibrator(method="isotonic", signal="verbal", cv=3, random_state=7)
    assert cal.get_params() == {"method": "isotonic", "signal": "verbal", "cv": 3,
                                "random_state": 7}
    with pytest.raises(NotFittedError):
        check_is_fitted(cal)
    lp, correct, _ = miscalibrated(100)
    fitted = Calibrator(method="platt").fit(lp, correct)
    check_is_fitted(fitted)
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params() and copy is not fitted
    with pytest.raises(NotFittedError):
        check_is_fitted(copy)
    assert copy.set_params(cv=4) is copy and copy.cv == 4
    with pytest.raises(CalibrationError, match="unknown Calibrator parameter"):
        copy.set_params(bins=10)
