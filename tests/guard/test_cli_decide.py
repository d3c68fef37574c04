"""``utilityguard decide``: the dry run of the runtime guard, its output and its errors.

That ``decide`` agrees with ``Guard``, ``@guarded`` and ``serve`` on a table of questions is
``tests/guard/test_decide_agreement.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard import Guard
from guard.cli import main
from guard.reach import reach
from policies import answer_threshold
from policies.decision import THRESHOLD

DOSE = "What is the maximum daily dose of acetaminophen for an adult?"


@pytest.mark.parametrize(("p", "decision"), [
    pytest.param("0.7", "refuse", id="below-18/21"),
    pytest.param("0.857143", "answer", id="at-18/21"),
    pytest.param("0.9", "answer", id="above"),
])
def test_given_cost_bare_rule(p: str, decision: str, capsys: pytest.CaptureFixture[str]) -> None:
    # --policy none: alpha 1, L = 20, C_R = 2: threshold (20 - 2) / 21 = 0.857142...
    assert main(["decide", "any question", "--policy", "none", "--cost", "20", "--p", p,
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["threshold"] == pytest.approx(18 / 21, abs=1e-6)
    assert (row["decision"], row["cost_source"], row["dry_run"]) == (decision, "caller", True)
    assert (row["alpha"], row["p_source"], row["policy"]) == (1.0, "caller", None)


def test_text_names_alpha_the_source_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "q", "--policy", "none", "--cost", "8", "--p", "0.5",
                 "--c-r", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    # threshold (8 - 1) / 9 = 0.777778
    assert out[0] == ("cost 8 (caller), C_R 1, alpha 1, threshold 0.777778: p 0.5 (caller) "
                      "-> refuse")
    assert out[1] == "  policy none (the bare rule)"
    assert f"  threshold 0.777778 = {THRESHOLD}" in out
    assert "  refuse: p 0.5 < threshold 0.777778" in out
    assert "  alpha 1: no answerability model: every question assumed answerable" in out


def test_the_issue_example_is_the_runtime_guard(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: decide used the raw cost model with alpha = 1 and said "answer" where the
    # guard users run says "refuse"; it is now Guard(c_r=2)'s decision, computed live
    assert main(["decide", DOSE, "--p", "0.88", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    record = Guard(c_r=2.0).decide(DOSE, "", confidence=0.88, acts=True)
    for key in ("decision", "cost", "cost_source", "threshold", "alpha", "p", "p_source",
                "policy", "c_r"):
        assert row[key] == getattr(record, key), key
    assert row["policy"].startswith("default@")
    assert row["threshold"] == answer_threshold(row["cost"], row["c_r"], alpha=row["alpha"])


def test_without_p_the_threshold_and_its_meaning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "a", "--policy", "none", "--cost", "0.5"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(
        ": every p answers: a wrong answer costs no more than a refusal")
    assert main(["decide", "a", "--policy", "none", "--cost", "20", "--alpha", "0.5"]) == 0
    out = capsys.readouterr().out  # (20 + 1 - 0.5 * 3) / 21 = 0.928571
    assert "alpha 0.5," in out and out.splitlines()[0].endswith("answer iff p >= 0.928571")
    assert main(["decide", DOSE, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["decision"] is None and row["cost_source"] == "model"


def test_a_signal_is_read_as_the_policy_reads_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", DOSE, "--policy", "smollm2", "--signal", "logprob_mean=-0.3",
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    guard = Guard.from_policy("smollm2")
    assert row["p_source"] == "calibrated" and row["signal"] == "logprob_mean"
    assert row["p"] == float(guard.calibrator.predict([-0.3])[0])  # type: ignore[union-attr]
    assert any(w.startswith("p ") and "calibrator" in w for w in row["why"])
    assert main(["decide", DOSE, "--policy", "none", "--signal", "logprob_mean=-0.3",
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["p_source"] == "uncalibrated"


def test_why_names_the_confidence_the_reply_states(capsys: pytest.CaptureFixture[str]) -> None:
    """A stated confidence read from ``--reply`` is named in the explanation (it said "no
    signal" while the calibrator read 70% from the reply)."""
    assert main(["decide", DOSE, "--reply", "4 grams a day.\nConfidence: 70%", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["p_source"] == "calibrated"
    line = next(w for w in row["why"] if w.startswith("p "))
    assert "verbal = 0.7 (read from the reply)" in line and "no signal" not in line


def test_a_reply_that_refuses_passes_through(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decide", "What is the capital of France?", "--policy", "none", "--cost",
                 "0.5", "--reply", "I'm sorry, I can't help with that.", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["decision"] == "passthrough_refusal"
    assert row["delivered"] == "I'm sorry, I can't help with that."


def test_a_table_of_questions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "questions.jsonl"
    table.write_text(
        json.dumps({"question": "q1", "cost": 20, "p": 0.9}) + "\n"
        + json.dumps({"question": "q2", "cost": 20, "logprob_mean": -2.0}) + "\n"
        + json.dumps({"question": "q3", "cost": 20}) + "\n")
    assert main(["decide", "--from", str(table), "--policy", "none", "--p", "0.1",
                 "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["question"] for r in rows] == ["q1", "q2", "q3"]
    assert [r["decision"] for r in rows] == ["answer", "refuse", "refuse"]
    # the row's signal is read; the flag's --p is the caller's p (it wins over a raw signal,
    # as in the guard: a caller's p before an uncalibrated signal)
    assert rows[1]["p_source"] == "caller" and rows[2]["p"] == 0.1


def test_a_bad_table_row_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "questions.jsonl"
    table.write_text(json.dumps({"question": "q1", "probability": 0.9}) + "\n")
    assert main(["decide", "--from", str(table)]) == 2
    err = capsys.readouterr().err
    assert f"{table}: row 1: unknown column(s) probability" in err


def test_the_warning_comes_from_the_calibrator(capsys: pytest.CaptureFixture[str]) -> None:
    # shown exactly when the configured calibrator cannot reach a median question's
    # threshold: computed from the calibrator and the guard's own prices, never a number
    bound = reach(Guard(c_r=2.0))
    assert main(["decide", DOSE, "--json"]) == 0
    captured = capsys.readouterr()
    row = json.loads(captured.out)
    expected = bound.warning() if bound is not None else None
    assert row["warning"] == expected
    assert ("utilityguard: warning:" in captured.err) == (expected is not None)
    assert main(["decide", DOSE, "--policy", "none", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["warning"] is None and "warning" not in captured.err


@pytest.mark.parametrize("argv", [
    pytest.param(["decide", "q", "--p", "1.7"], id="p-out-of-range"),
    pytest.param(["decide", "q", "--cost", "0"], id="zero-cost"),
    pytest.param(["decide", "q", "--c-r", "nan"], id="nan-c-r"),
    pytest.param(["decide", "   "], id="empty-question"),
    pytest.param(["decide"], id="no-question"),
    pytest.param(["decide", "q", "--cost-model", "/nonexistent/model"], id="missing-model"),
    pytest.param(["decide", "q", "--policy", "/nonexistent/policy"], id="missing-policy"),
    pytest.param(["decide", "q", "--signal", "loudness=3"], id="unknown-signal"),
    pytest.param(["decide", "q", "--signal", "logprob_mean"], id="signal-without-value"),
])
def test_errors_are_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse rejects a bad flag value
        code = exc.code  # type: ignore[assignment]
    assert code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


SMART_HOME = ("You are the assistant of a smart home app. If a smoke or carbon monoxide alarm is "
              "triggered, tell the user to leave the home and call emergency services.")
CAPITAL = "What is the capital of Australia?"


def _body(system: str, user: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "system", "content": system},
                                       {"role": "user", "content": user}]}


def test_a_request_is_priced_as_the_runtime_prices_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a chat body and a Responses body, as clients send them to the proxy: the dry run's
    # price, threshold and decision are Guard().decide's on the same body
    bodies = [_body(SMART_HOME, CAPITAL),
              {"instructions": "Be brief.", "input": "How many mg of ibuprofen for a 4 year old?"}]
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(json.dumps(b) for b in bodies) + "\n")
    assert main(["decide", "--request", str(path), "--p", "0.9", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    guard = Guard(c_r=2.0)
    for row, body in zip(rows, bodies, strict=True):
        record = guard.decide(body, "", confidence=0.9, acts=True)
        for key in ("decision", "cost", "threshold", "alpha", "policy", "priced_by"):
            assert row[key] == getattr(record, key), key
        assert row["request"] == body
    # which text set the price, and where it sits
    assert rows[0]["priced_by"] == "system"
    assert rows[0]["priced_text"]["where"] == "messages[0].content"
    assert "carbon monoxide" in rows[0]["question"]
    assert rows[1]["priced_by"] == "other"  # a Responses input string is a text with no role
    assert rows[1]["priced_text"]["where"] == "input"
    assert rows[1]["question"] == "How many mg of ibuprofen for a 4 year old?"


def test_a_system_prompt_that_sets_the_price_says_how_to_trust_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_body(SMART_HOME, CAPITAL)))
    assert main(["decide", "--request", str(path)]) == 0
    out = capsys.readouterr().out
    assert "priced by the text at messages[0].content (system)" in out
    assert "--trusted-prompts" in out
    # the operator's prompt, trusted as serve --trusted-prompts trusts it: the user's question
    # sets the price, as it does alone
    assert main(["decide", "--request", str(path), "--trusted-prompts", SMART_HOME,
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["priced_text"] == {"text": CAPITAL, "where": "messages[1].content"}
    assert row["priced_by"] == "user"
    assert row["cost"] == pytest.approx(Guard(c_r=2.0).price(CAPITAL).cost)


#: An application's tool whose safety line the cost model prices like a question about gas.
CO_TOOL = {"type": "function", "function": {
    "name": "co_alarm_status",
    "description": "If a carbon monoxide alarm is sounding, tell the user to get everyone "
                   "outside and call emergency services."}}


def test_a_tool_that_sets_the_price_says_how_to_trust_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, tools = tmp_path / "r.json", tmp_path / "tools.json"
    path.write_text(json.dumps({"model": "m", "tools": [CO_TOOL], "messages": [
        {"role": "user", "content": CAPITAL}]}))
    tools.write_text(json.dumps([CO_TOOL]))
    assert main(["decide", "--request", str(path)]) == 0
    out = capsys.readouterr().out
    assert "priced by the text at tools[0].function.name (tools): 'co alarm status\\nIf a " \
           "carbon monoxide alarm" in out  # the tool is read as one text
    assert "declare it trusted (serve --trusted-tools FILE" in out
    # the application's tools, trusted as serve --trusted-tools trusts them: the question alone
    assert main(["decide", "--request", str(path), "--trusted-tools", str(tools),
                 "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["priced_text"] == {"text": CAPITAL, "where": "messages[0].content"}
    assert row["priced_by"] == "user"
    assert row["cost"] == pytest.approx(Guard(c_r=2.0).price(CAPITAL).cost)
    # several requests end with how many a tool priced
    path.write_text(json.dumps({"tools": [CO_TOOL], "messages": [
        {"role": "user", "content": CAPITAL}]}) + "\n" + json.dumps(
        {"messages": [{"role": "user", "content": CAPITAL}]}) + "\n")
    assert main(["decide", "--request", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "1 of 2 priced by a tool definition: if the tools are your application's own, see "
        "what --trusted-tools changes")


def test_a_request_that_asks_nothing_names_no_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"messages": [{"role": "user", "content": "Hi there!"}]}]))
    assert main(["decide", "--request", str(path), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["cost_source"] == "nothing_asked"
    assert row["priced_by"] is None and row["priced_text"] is None
    assert row["question"] is None


@pytest.mark.parametrize("content, message", [
    ('{"foo": 1}', "item 1 is not a request body"),
    ('{"messages": []}\nnot json\n', "line 2 is not JSON"),
    ("", "no request in it"),
    ("[1, 2]", "item 1 is not a request body"),
])
def test_a_bad_request_file_is_one_line(tmp_path: Path, content: str, message: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    assert main(["decide", "--request", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_request_over_the_operators_limits_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_body(SMART_HOME, CAPITAL)))
    assert main(["decide", "--request", str(path), "--max-text-chars", "100"]) == 2
    err = capsys.readouterr().err
    assert f"request 1 of {path}:" in err and "--max-text-chars" in err
    assert main(["decide", "--request", str(tmp_path / "missing.json")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_a_dry_run_of_several_requests_ends_with_what_priced_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the smart-home prompt's safety rule prices the trivia question and the greeting under
    # it; the dose question alone is priced by itself; "thanks" asks for nothing
    bodies = [_body(SMART_HOME, CAPITAL), _body(SMART_HOME, "Hi!"),
              {"messages": [{"role": "user", "content": "How much ibuprofen for a 4 year old?"}]},
              {"messages": [{"role": "user", "content": "thanks"}]}]
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(json.dumps(b) for b in bodies) + "\n")
    assert main(["decide", "--request", str(path)]) == 0
    last = capsys.readouterr().out.splitlines()[-2:]
    assert last == [
        "4 requests; the text that set the price: the user's last turn 1, a system prompt 2, "
        "no text (a given cost, a ceiling, or nothing asked) 1",
        "2 of 4 priced by a system or developer prompt: if it is your application's own, see "
        "what --trusted-prompts changes"]
    # trusted, the prompt sets no price: the trivia question and the greeting price themselves
    assert main(["decide", "--request", str(path), "--trusted-prompts", SMART_HOME]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("4 requests; the text that set the price: the user's last turn 2, no text "
                    "(a given cost, a ceiling, or nothing asked) 2")


def test_a_table_of_questions_ends_without_the_request_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a bare question is the user's turn: nothing to say about where its price came from
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"question": CAPITAL}) + "\n" + json.dumps({"question": "hi"})
                    + "\n")
    assert main(["decide", "--from", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the text that set the price" not in out and out.count("threshold") >= 2
