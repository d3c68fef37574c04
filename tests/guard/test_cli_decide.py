"""``utilityguard decide``: the dry run of the rule, its output and its errors."""

from __future__ import annotations

import json

import pytest

from guard.cli import main

DOSE = "What is the maximum daily dose of acetaminophen for an adult?"


@pytest.mark.parametrize(("p", "decision"), [
    pytest.param("0.7", "refuse", id="below-18/21"),
    pytest.param("0.857143", "answer", id="at-18/21"),
    pytest.param("0.9", "answer", id="above"),
])
def test_given_cost(p: str, decision: str, capsys: pytest.CaptureFixture[str]) -> None:
    # L = 20, C_R = 2: threshold (20 - 2) / 21 = 0.857142...
    assert main(["decide", "any question", "--cost", "20", "--p", p, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["threshold"] == pytest.approx(18 / 21, abs=1e-6)
    assert (row["decision"], row["cost_source"], row["dry_run"]) == (decision, "caller", True)


def test_text_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "q", "--cost", "8", "--p", "0.5", "--c-r", "1"]) == 0
    # threshold (8 - 1) / 9 = 0.777778
    assert capsys.readouterr().out == "cost 8 (given), C_R 1, threshold 0.777778: p 0.5 -> refuse\n"


def test_shipped_cost_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", DOSE, "What is the capital of France?", "--json"]) == 0
    dose, france = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    for row in (dose, france):  # the printed threshold is the rule applied to the printed cost
        assert row["threshold"] == pytest.approx((row["cost"] - 2) / (1 + row["cost"]), abs=1e-5)
        assert row["decision"] is None and row["cost_source"] == "model"
    # a dose is costly, a capital costs less than the median question (the scale's median is 2)
    assert dose["cost"] > 10 > 2 > france["cost"]


def test_threshold_meaning_without_p(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "a", "--cost", "0.5"]) == 0
    assert capsys.readouterr().out.endswith(": any p answers\n")
    assert main(["decide", "a", "--cost", "20", "--alpha", "0.5"]) == 0
    out = capsys.readouterr().out  # (20 + 1 - 0.5 * 3) / 21 = 0.928571
    assert "alpha 0.5" in out and out.endswith("answer iff p >= 0.928571\n")


@pytest.mark.parametrize("argv", [
    pytest.param(["decide", "q", "--p", "1.7"], id="p-out-of-range"),
    pytest.param(["decide", "q", "--cost", "0"], id="zero-cost"),
    pytest.param(["decide", "q", "--c-r", "nan"], id="nan-c-r"),
    pytest.param(["decide", "   "], id="empty-question"),
    pytest.param(["decide", "q", "--cost-model", "/nonexistent/model"], id="missing-model"),
])
def test_errors_are_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse rejects a bad flag value
        code = exc.code  # type: ignore[assignment]
    assert code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
