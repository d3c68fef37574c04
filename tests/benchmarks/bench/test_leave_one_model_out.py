"""``bench --leave-one-model-out`` on the shipped responses of three models: the strong model
states its confidence and has no logprobs, the small models the other way round, so one signal
cannot calibrate one model on the others' replies — said before anything is fitted."""

from __future__ import annotations

import pytest

from guard.cli import main


def test_one_signal_the_others_lack_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--leave-one-model-out", "--group-folds", "--bootstrap", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "claude-blind is read by confidence.verbal" in err[0]
    assert "--multi-signal" in err[0]
