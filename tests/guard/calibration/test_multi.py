"""MultiSignalCalibrator: the scikit-learn contract, missing signals left out, saved as data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from guard.calibration.multi import MULTI_FILE, MultiSignalCalibrator, feature_rows
from guard.confidence.reply_features import REPLY_FEATURES, reply_features
from guard.core import Guard
from guard.exceptions import CalibrationError
from guard.policy import Policy, load_policy, save_policy

SIGNALS = ("logprob_mean", "ptrue")


def _data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """P(correct) rises with both signals; ptrue is missing on a third of the rows."""
    rng = np.random.default_rng(seed)
    lp = -rng.exponential(1.0, n)
    pt = rng.random(n)
    y = rng.random(n) < (np.exp(lp) + pt) / 2
    pt_seen = np.where(rng.random(n) < 1 / 3, np.nan, pt)
    X = np.column_stack([lp, pt_seen, np.zeros((n, len(REPLY_FEATURES)))])
    return X, y


def test_scikit_learn_contract() -> None:
    cal = MultiSignalCalibrator(signals=SIGNALS, C=0.5)
    assert clone(cal).get_params() == cal.get_params()
    X, y = _data()
    p = cal.fit(X, y).predict_proba(X)
    assert p.shape == (len(y), 2) and np.allclose(p.sum(axis=1), 1.0)
    assert set(np.unique(cal.predict(X))) <= {False, True}


def test_a_missing_signal_is_left_out_not_imputed() -> None:
    X, y = _data()
    cal = MultiSignalCalibrator(signals=SIGNALS).fit(X, y)
    assert set(cal.patterns_) == {(), ("logprob_mean",), ("ptrue",), ("logprob_mean", "ptrue")}
    row = X[:1].copy()
    row[0, 1] = np.nan
    # the row without ptrue is predicted by the logprob-only model (computed by hand here)
    alone = cal.predict_proba(row)[0, 1]
    m = cal.patterns_[("logprob_mean",)]
    z = (row[0, 0] - m["mean"][0]) / m["scale"][0] * m["coef"][0] + m["intercept"]
    z += sum(((0.0 - mu) / sd) * c for mu, sd, c in
             zip(m["mean"][1:], m["scale"][1:], m["coef"][1:], strict=True))
    assert alone == pytest.approx(1 / (1 + np.exp(-z)))


def test_a_rare_pattern_falls_back_to_a_subset_of_its_signals() -> None:
    X, y = _data()
    X[:, 1] = np.nan
    X[:5, 1] = 0.9  # five rows with both signals: too few for their own model
    cal = MultiSignalCalibrator(signals=SIGNALS).fit(X, y)
    assert ("logprob_mean", "ptrue") not in cal.patterns_
    assert cal.pattern_of([True, True]) == ("logprob_mean",)
    assert cal.pattern_of([False, True]) == ()


def test_wrong_width_is_an_error() -> None:
    with pytest.raises(CalibrationError, match="expected rows of 2 signals"):
        MultiSignalCalibrator(signals=SIGNALS).fit(np.zeros((10, 3)), np.zeros(10, bool))


def test_saved_as_data_and_used_by_a_guard(tmp_path: Path) -> None:
    X, y = _data()
    cal = MultiSignalCalibrator(signals=SIGNALS).fit(X, y)
    cal.save(tmp_path / "cal")
    doc = json.loads((tmp_path / "cal" / MULTI_FILE).read_text())
    assert doc["signals"] == list(SIGNALS)
    again = MultiSignalCalibrator.load(tmp_path / "cal")
    assert np.allclose(again.predict_proba(X), cal.predict_proba(X))
    policy = Policy(name="m", c_r=2.0, signal="logprob_mean", confidence="logprobs",
                    calibrator=cal, alpha_constant=1.0)
    save_policy(policy, tmp_path / "pol")
    loaded = load_policy(tmp_path / "pol")
    assert isinstance(loaded.calibrator, MultiSignalCalibrator)
    g = Guard(policy=None, calibrator=loaded.calibrator)
    text = "The answer is 42."
    rec = g.decide("q", text, confidence={"logprob_mean": -0.2}, cost=4.0)
    want = cal.predict_proba(feature_rows({"logprob_mean": [-0.2]}, [text], SIGNALS))[0, 1]
    assert rec.p == pytest.approx(want) and rec.p_source == "calibrated"


def test_reply_features_read_what_the_reply_says() -> None:
    f = reply_features("I'm not sure; could you provide more details about the contract?")
    assert f["hedge"] == 1.0 and f["asks_details"] == 1.0 and f["false_premise"] == 0.0
    assert reply_features(None)["log_chars"] == 0.0
    assert reply_features("There is no evidence that this happened.")["false_premise"] == 1.0
