"""`utilityguard asking doubt`: bad input is one clear line, never a traceback (the run itself,
about three minutes on the training split, is measured in docs/results.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import one_line_error, run_cli


@pytest.mark.parametrize("weights", ["x", "0", "-1,1", ","])
def test_bad_weights_are_one_line(capsys: pytest.CaptureFixture[str], weights: str,
                                  tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "asking", "doubt", "--out", tmp_path, f"--weights={weights}")
    assert code != 0
    assert "--weights" in one_line_error(err)


def test_a_folder_without_a_detector_is_one_line(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "asking", "doubt", "--out", tmp_path)
    assert code != 0
    assert str(tmp_path) in one_line_error(err)


def test_the_folder_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    # the shipped detector is never changed by accident: the rule is the operator's choice
    with pytest.raises(SystemExit) as exit_:
        run_cli(capsys, "asking", "doubt")
    assert exit_.value.code == 2
    assert "--out" in one_line_error(capsys.readouterr().err)
