"""One calibrator interface (:class:`guard.ProbabilityCalibrator`): both calibrators answer
``P(correct)`` with ``p_correct`` (one reply) and ``predict_proba`` (many), and the guard reads
every calibrator through ``p_correct``; one of the older interface (``signal`` and
``predict``) is read through it too."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from guard import Guard, ProbabilityCalibrator
from guard.calibration import Calibrator
from guard.calibration.multi import MultiSignalCalibrator, feature_rows
from guard.decision_records import Confidence


class FixedCost:
    def predict(self, texts: list[str]) -> Any:
        return np.full(len(texts), 4.0)


RNG = np.random.default_rng(3)
LP = -RNG.exponential(1.0, 300)
CORRECT = RNG.random(300) < np.exp(LP)


def single() -> Calibrator:
    return Calibrator(signal="logprob_mean").fit(LP, CORRECT)


def multi() -> MultiSignalCalibrator:
    X = feature_rows({"logprob_mean": LP}, ["Paris."] * 300, ("logprob_mean",))
    return MultiSignalCalibrator(signals=("logprob_mean",), min_rows=20).fit(X, CORRECT)


@pytest.mark.parametrize("make", [single, multi])
def test_both_calibrators_answer_p_correct_and_predict_proba(make: Any) -> None:
    cal = make()
    assert isinstance(cal, ProbabilityCalibrator) and tuple(cal.signals) == ("logprob_mean",)
    conf = Confidence(logprob_mean=-0.3)
    p = cal.p_correct(conf, "Paris.")
    X = [-0.3] if isinstance(cal, Calibrator) else feature_rows(
        {"logprob_mean": [-0.3]}, ["Paris."], ("logprob_mean",))
    proba = cal.predict_proba(X)
    assert proba.shape == (1, 2) and p == pytest.approx(proba[0, 1])
    assert proba.sum() == pytest.approx(1.0) and 0.0 < p < 1.0
    record = Guard(FixedCost(), cal, policy=None).decide("q", "Paris.", confidence=conf)
    assert (record.p, record.p_source) == (pytest.approx(p), "calibrated")


def test_a_calibrator_without_the_signal_gives_way_to_the_caller() -> None:
    conf = Confidence(caller=0.7)
    assert single().p_correct(conf) is None
    record = Guard(FixedCost(), single(), policy=None).decide("q", "Paris.", confidence=conf)
    assert (record.p, record.p_source) == (0.7, "caller")


def test_a_calibrator_of_the_older_interface_is_read_through_p_correct() -> None:
    class Halving:  # signal and predict only
        signal = "logprob_mean"

        def predict(self, x: Any) -> Any:
            return np.exp(np.asarray(x, dtype=float)) / 2.0

    g = Guard(FixedCost(), Halving(), policy=None)  # type: ignore[arg-type]
    record = g.decide("q", "Paris.", confidence={"logprob_mean": 0.0})
    assert (record.p, record.p_source) == (0.5, "calibrated")
