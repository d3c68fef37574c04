"""Calibration: a raw confidence signal turned into a probability of being correct.

* :mod:`guard.calibration.calibrator` — :class:`Calibrator` (fit, predict, save, load),
  :func:`raw_probability`, :func:`cross_val_probability`;
* :mod:`guard.calibration.methods` — the three maps it chooses from (Platt, isotonic,
  histogram binning);
* :mod:`guard.calibration.scoring` — ECE and Brier score, and the validation of signal and
  label arrays shared with the benchmarks.
"""

from guard.calibration.calibrator import *  # noqa: F403 - the package's names: the module's
from guard.calibration.calibrator import __all__ as __all__
