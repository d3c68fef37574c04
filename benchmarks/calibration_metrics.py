"""Calibration of a correctness probability (implemented in :mod:`guard.metrics`, shared by
the guard's calibrator and the bench): expected calibration error and Brier score.

The decision rule ``p >= (L - C_R) / (1 + L)`` is only Bayes-optimal when ``p`` is calibrated,
so the bench reports how far a confidence is from a probability (RiskEval reports ECE-10 and
Brier next to its policy metrics)::

    ECE   = sum_b (n_b / n) |acc_b - conf_b|      equal-width bins over [0, 1]
    Brier = (1/n) sum_i (p_i - c_i)^2

Bin ``b`` (``0 <= b < B``) holds ``b/B <= p < (b+1)/B``; ``p = 1`` goes to the last bin. The
edges are the floats nearest to ``b/B``, so a confidence written as a decimal on an edge lands in
the bin it opens (``0.57`` in ``[0.57, 0.58)`` with 100 bins, where ``floor(0.57 * 100)`` would
give 56). Empty bins contribute nothing.
"""

from __future__ import annotations

from guard.metrics import brier, ece

__all__ = ["brier", "ece"]
