"""``as_signal_values`` on one plain float (the proxy's per-reply case) returns what its
general path returns for the same value, and rejects what it rejects."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from guard.calibration.scoring import as_signal_values
from utilityguard_base.exceptions import InvalidValueError

VALUES = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e-300, -37.5, 1e300,
          1.7976931348623157e308, -1.7976931348623157e308, 0.1, -2.5e-8]


@pytest.mark.parametrize("v", VALUES)
def test_one_float_is_the_general_path(v: float) -> None:
    fast = as_signal_values([v])
    general = as_signal_values(np.asarray([v]))  # an array: the general path
    assert fast.dtype == np.float64 and fast.shape == (1,)
    assert struct.pack("<d", float(fast[0])) == struct.pack("<d", float(general[0]))
    assert struct.pack("<d", float(fast[0])) == struct.pack("<d", v)  # the value itself


@pytest.mark.parametrize("v", [math.nan, math.inf, -math.inf])
def test_non_finite_is_rejected_naming_the_index(v: float) -> None:
    with pytest.raises(InvalidValueError, match=r"x\[0\] is"):
        as_signal_values([v])


def test_other_shapes_keep_the_general_path() -> None:
    assert as_signal_values([1, 2]).tolist() == [1.0, 2.0]
    assert as_signal_values([np.float32(0.5)]).tolist() == [0.5]
    with pytest.raises(InvalidValueError):
        as_signal_values([True])
    with pytest.raises(InvalidValueError):
        as_signal_values([None])
