"""``guard.reach``: the bound a calibrator puts on ``p`` against the guard's own thresholds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from guard import Guard
from guard.calibration import Calibrator
from guard.reach import REMEDIES, Reach, p_max, reach

QUESTIONS = ["What is the maximum daily dose of acetaminophen for an adult?",
             "How much insulin should I inject?", "What is the capital of France?"]


class FixedCost:
    def predict(self, texts: Any) -> Any:
        return np.full(len(texts), 20.0)  # threshold (20 - 2) / 21 = 0.857 at C_R 2


def fitted(signal: str, top: float) -> Calibrator:
    """A calibrator whose output tops out near ``top`` (labels drawn at that rate)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-3.0, 0.0, 400) if signal == "logprob_mean" else rng.uniform(0, 1, 400)
    y = rng.uniform(size=400) < top
    y[:2] = [True, False]
    return Calibrator(signal=signal, method="histogram").fit(x, y)


@pytest.mark.parametrize("signal", ["logprob_mean", "verbal"])
def test_p_max_is_the_largest_output_over_the_whole_range(signal: str) -> None:
    cal = fitted(signal, 0.2)
    grid = np.linspace(-50.0, 0.0, 5001) if signal == "logprob_mean" else np.linspace(0, 1, 5001)
    top = p_max(cal)
    assert top is not None and top == pytest.approx(float(cal.predict(grid).max()), abs=1e-12)
    assert top < 0.5


def test_a_low_calibrator_warns_and_names_what_to_do() -> None:
    guard = Guard(FixedCost(), fitted("logprob_mean", 0.2), policy=None, detector=None)
    bound = reach(guard, QUESTIONS)
    assert bound is not None and bound.blocked
    assert bound.thresholds == pytest.approx([18 / 21] * 3)
    assert bound.unreachable == 1.0
    text = bound.warning()
    assert text is not None and f"p <= {bound.p_max:.3f}" in text and REMEDIES in text
    for remedy in ("--policy DIR", "--confidence verbal", "--mode shadow", "/v1/feedback",
                   "fit --from-audit"):
        assert remedy in text


def test_no_warning_when_the_calibrator_reaches_a_median_threshold() -> None:
    bound = Reach(signal="logprob_mean", p_max=0.9, thresholds=(0.1, 0.5, 0.95), c_r=2.0)
    assert not bound.blocked and bound.warning() is None
    assert bound.unreachable == pytest.approx(1 / 3)


def test_no_bound_without_a_calibrator_or_with_a_multi_signal_one() -> None:
    assert reach(Guard(FixedCost(), policy=None, detector=None), QUESTIONS) is None

    class Multi:
        signal = "logprob_mean"

        def p_correct(self, confidence: Any, text: str | None) -> float:
            return 0.1

        def predict(self, x: Any) -> Any:
            return np.full(len(x), 0.1)

    assert p_max(Multi()) is None


def test_a_multi_signal_calibrators_bound_is_its_largest_output() -> None:
    # the shipped default policy's calibrator, whatever it is once refit: the bound is the
    # largest p over every reply, and reading fewer signals cannot raise it
    from guard.calibration.multi import MultiSignalCalibrator
    from guard.confidence.reply_features import REPLY_FEATURES
    from guard.policy import load_policy

    rng = np.random.default_rng(38)
    cal = MultiSignalCalibrator(signals=("verbal", "logprob_mean"))
    n = 600
    verbal, lp = rng.uniform(0, 1, n), -rng.exponential(1.0, n)
    y = rng.uniform(size=n) < 0.2 + 0.6 * verbal
    feats = np.column_stack([rng.integers(0, 2, (n, len(REPLY_FEATURES) - 1)),
                             rng.uniform(1, 6, n)])
    X = np.column_stack([np.where(rng.uniform(size=n) < 0.3, np.nan, verbal), lp, feats])
    for calibrator in (cal.fit(X, y), load_policy("default").calibrator):
        if not hasattr(calibrator, "p_correct"):
            continue
        top = p_max(calibrator)
        assert top is not None
        k = len(calibrator.signals)
        rows = np.column_stack([
            *(rng.uniform(0, 1, 5000) if s == "verbal" else -rng.exponential(2.0, 5000)
              for s in calibrator.signals),
            rng.integers(0, 2, (5000, len(REPLY_FEATURES) - 1)), rng.uniform(0, 6, 5000)])
        rows[rng.uniform(size=5000) < 0.3, :k] = np.nan  # some replies lack a signal
        assert float(calibrator.predict_proba(rows)[:, 1].max()) <= top + 1e-12
        fewer = p_max(calibrator, provided=("logprob_mean",))
        assert fewer is not None and fewer <= top
