"""``python -m benchmarks.perf.compare``: the added-p50 arithmetic it shares with the proxy
benchmark and its refusal of a bad checkout
(the servers themselves are the proxy benchmark's, started by ``make perf``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.perf.compare import main
from benchmarks.perf.proxy import added_p50


def test_added_is_each_median_minus_the_upstreams() -> None:
    times = {"upstream": [0.001, 0.003, 0.002], "relay": [0.004, 0.0035, 0.005],
             "before": [0.006, 0.009, 0.007], "after": [0.0055]}
    got = added_p50(times)
    assert set(got) == {"relay", "before", "after"}
    assert got["relay"] == pytest.approx(0.002)   # median 0.004 - 0.002
    assert got["before"] == pytest.approx(0.005)  # median 0.007 - 0.002
    assert got["after"] == pytest.approx(0.0035)


def test_a_directory_that_is_no_checkout_is_refused(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--before", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not a utilityguard checkout" in err and "Traceback" not in err
