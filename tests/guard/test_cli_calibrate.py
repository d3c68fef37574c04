"""``utilityguard calibrate``: the happy path, its report and sidecar, and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from guard import Calibrator
from guard.cli import main


def records(n: int = 80, seed: int = 0) -> list[dict[str, Any]]:
    """Graded response records whose exp(logprob_mean) is overconfident."""
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        x = rng.normal()
        correct = bool(rng.random() < 1.0 / (1.0 + np.exp(-3.0 * x)))
        lp = float(np.log(0.5 + 0.5 / (1.0 + np.exp(-x))))
        out.append({"id": f"q{i}", "response": "Paris", "answered": True, "correct": correct,
                    "confidence": {"verbal": None, "logprob_mean": lp,
                                   "logprob_low10": lp * 3, "consistency": None}})
    out.append({"id": "refused", "response": "I cannot answer.", "answered": False,
                "correct": None, "confidence": {"logprob_mean": -0.1}})
    out.append({"id": "no-signal", "response": "Lyon", "answered": True, "correct": False,
                "confidence": {"logprob_mean": None}})
    return out


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_happy_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "responses.jsonl", records())
    out = tmp_path / "cal"
    code = main(["calibrate", "--responses", str(src), "--signal", "logprob_mean",
                 "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "logprob_mean: 80 of 81 answered records" in printed
    assert "ECE-10" in printed and "before (exp(signal))" in printed and "after (" in printed
    meta = json.loads((out / "calibrator.json").read_text())
    evaluation = meta["evaluation"]
    assert evaluation["after"]["brier"] < evaluation["before"]["brier"]
    assert evaluation["after"]["ece10"] < evaluation["before"]["ece10"]
    assert meta["command"].startswith("utilityguard calibrate --responses")
    assert len(meta["responses_sha256"]) == 64
    cal = Calibrator.load(out)
    assert (cal.signal, cal.n_samples_, cal.method_) == ("logprob_mean", 80, meta["method"])


def test_other_signal_and_method(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "responses.jsonl", records())
    code = main(["calibrate", "--responses", str(src), "--signal", "logprob_low10",
                 "--method", "histogram", "--cv", "4", "--seed", "3", "--out", str(tmp_path)])
    assert code == 0
    assert "method histogram" in capsys.readouterr().out
    assert Calibrator.load(tmp_path).signal == "logprob_low10"


@pytest.mark.parametrize(
    ("rows", "signal", "match"),
    [
        pytest.param(None, "logprob_mean", "no such file", id="missing-file"),
        pytest.param(records(), "verbal", "no record has confidence.verbal", id="absent-signal"),
        pytest.param(records(10), "logprob_mean", "only 10 answered records", id="too-few"),
        pytest.param([{**r, "correct": True} for r in records(30) if r["answered"]],
                     "logprob_mean", "all 30 usable records are correct", id="one-class"),
        pytest.param([*records(30), {"id": "ungraded", "answered": True, "correct": None,
                                     "confidence": {"logprob_mean": -0.3}}],
                     "logprob_mean", "'ungraded' is answered but 'correct' is missing",
                     id="ungraded"),
        pytest.param([{**r, "correct": i < 2} for i, r in enumerate(records(30))],
                     "logprob_mean", "2 correct and 28 incorrect", id="tiny-class"),
    ],
)
def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                             rows: list[dict[str, Any]] | None, signal: str, match: str) -> None:
    src = tmp_path / "responses.jsonl"
    if rows is not None:
        write(src, rows)
    code = main(["calibrate", "--responses", str(src), "--signal", signal,
                 "--out", str(tmp_path / "cal")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("utilityguard: error: ") and err.count("\n") == 1
    assert match in err
    assert not (tmp_path / "cal").exists()


def test_invalid_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "responses.jsonl"
    src.write_text(json.dumps(records(1)[0]) + "\n{oops\n")
    assert main(["calibrate", "--responses", str(src), "--out", str(tmp_path)]) == 2
    assert "line 2: invalid JSON" in capsys.readouterr().err


def test_csv_with_dotted_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["id,answered,correct,confidence.logprob_mean"]
    lines += [f"{r['id']},{r['answered']},{r['correct']},{r['confidence']['logprob_mean']}"
              for r in records(60) if r["answered"] and r["confidence"]["logprob_mean"]]
    src = tmp_path / "responses.csv"
    src.write_text("\n".join(lines) + "\n")
    assert main(["calibrate", "--responses", str(src), "--out", str(tmp_path / "c")]) == 0
    assert "60 of 60 answered records" in capsys.readouterr().out


def test_warns_when_the_calibrator_is_worse_than_the_raw_signal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the shipped 24-record example: 20 answered records are too few for a calibrator
    # (held-out Brier 0.097 raw against 0.116 calibrated, as reported in issue 15)
    example = Path(__file__).parents[2] / "benchmarks/examples/data/example_records.jsonl"
    assert main(["calibrate", "--responses", str(example), "--out", str(tmp_path / "c")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: warning: the calibrator is worse than the raw signal")
    evaluation = json.loads((tmp_path / "c" / "calibrator.json").read_text())["evaluation"]
    before, after = evaluation["before"]["brier"], evaluation["after"]["brier"]
    assert (before, after) == (pytest.approx(0.097, abs=5e-4), pytest.approx(0.116, abs=5e-4))
    assert f"Brier {before:.4f} -> {after:.4f}" in err
    assert evaluation["worse_than_raw"] is True


def test_no_warning_when_the_calibrator_helps(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "responses.jsonl", records(n=400))
    assert main(["calibrate", "--responses", str(src), "--out", str(tmp_path / "c")]) == 0
    assert "warning" not in capsys.readouterr().err
    evaluation = json.loads((tmp_path / "c" / "calibrator.json").read_text())["evaluation"]
    assert evaluation["worse_than_raw"] is False
