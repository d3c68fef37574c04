"""``audit report``: a self-contained HTML page, rendered in a real headless Chromium (the page
is not blank, every figure is drawn), its numbers checked against values computed here from
the rows the test wrote, from a SQLite file and from PostgreSQL alike."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from guard.cli import main
from guard.decision_records import DecisionRecord
from guard.proxy.audit import DECISIONS, FEEDBACK, decision_row, open_store
from policies import answer_threshold
from tests.helpers import run_chromium

FIGURES = ("fig-decisions-over-time", "fig-answer-rate-by-cost", "fig-p-histogram",
           "fig-p-vs-threshold", "fig-refusals-by-policy", "fig-accuracy", "fig-utility")


def write_log(target: str | Path, n: int = 400) -> dict[str, float]:
    """``n`` decisions over an hour, two policy versions, labels on every other one; the
    expected summary numbers, computed here with plain arithmetic."""
    rng = np.random.default_rng(7)
    rows, labels = [], []
    always_refuse, always_answer, guard, delivered, delivered_ok = 0.0, 0.0, 0.0, 0, 0
    labelled = 0
    for i in range(n):
        cost, p, c_r = float(np.exp(rng.normal(1.0, 1.2))), float(rng.uniform()), 2.0
        t = float(answer_threshold(cost, c_r))
        decision = "answer" if p >= t else "refuse"
        record = DecisionRecord(request_id=f"r{i}", cost=cost, cost_source="model", p=p,
                                p_source="calibrated", threshold=t, c_r=c_r,
                                expected_utility_answer=p - (1 - p) * cost,
                                expected_utility_refuse=-c_r, decision=decision,
                                mode="enforce", latency_ms=0.2)  # type: ignore[arg-type]
        row = dict(zip(DECISIONS.names, decision_row(record, ts=1.8e9 + 9 * i, model="m",
                                                    stream=False, query=None), strict=True))
        row["policy"] = "smollm2@aaaa1111" if i < n // 2 else "smollm2@bbbb2222"
        rows.append(DECISIONS.row(row))
        if i % 2 == 0:
            correct = bool(rng.uniform() < p)
            labels.append(FEEDBACK.row({"request_id": f"r{i}", "ts": 1.8e9 + 9 * i + 5,
                                        "correct": int(correct), "answerable": 1,
                                        "cost": None}))
            labelled += 1
            always_refuse += -c_r
            always_answer += 1.0 if correct else -cost
            guard += (1.0 if correct else -cost) if decision == "answer" else -c_r
            delivered += decision == "answer"
            delivered_ok += decision == "answer" and correct
    with open_store(target) as store:
        store.connect()
        store.insert(DECISIONS, rows)
        store.insert(FEEDBACK, labels)
    return {"mean utility: guard": guard / labelled,
            "mean utility: always answer": always_answer / labelled,
            "mean utility: always refuse": always_refuse / labelled,
            "accuracy of delivered answers": delivered_ok / delivered,
            "labelled decisions used": labelled}


def summary(dom: str) -> dict[str, str]:
    return dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]+)</td></tr>", dom))


def check_report(index: Path, expected: dict[str, float], tmp_path: Path) -> None:
    html = index.read_text()
    # self-contained: nothing to fetch
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\(", html, re.I)
    assert not re.search(r"(src|href)\s*=", html, re.I)
    dom = run_chromium("--dump-dom", index.as_uri()).stdout
    assert "utilityguard audit report" in dom
    for fig in FIGURES:  # each figure is in the rendered DOM with drawn marks
        m = re.search(rf'<figure id="{fig}".*?</figure>', dom, re.S)
        assert m is not None, fig
        assert len(re.findall(r'class="(bar|point)"', m.group(0))) >= 2, fig
    got = summary(dom)
    assert got["decisions"] == "400"
    for key, value in expected.items():
        assert float(got[key]) == pytest.approx(value, abs=5e-4), key
    assert expected["mean utility: guard"] > expected["mean utility: always answer"]
    shot = tmp_path / "shot.png"
    run_chromium(f"--screenshot={shot}", "--window-size=1400,2200", "--hide-scrollbars",
                 index.as_uri())
    image = Image.open(shot).convert("RGB")
    pixels = np.asarray(image).reshape(-1, 3)
    non_white = (pixels < 245).any(axis=1).mean()
    assert non_white > 0.03, non_white  # not blank
    blue = (np.abs(pixels.astype(int) - (31, 119, 180)).sum(axis=1) < 40).mean()
    assert blue > 0.001, blue  # the first series' colour is painted: the bars are drawn
    assert len(np.unique(pixels, axis=0)) > 20


def test_report_from_sqlite_in_chromium(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    expected = write_log(db)
    out = tmp_path / "report"
    assert main(["audit", "report", "--path", str(db), "--out", str(out)]) == 0
    check_report(out / "index.html", expected, tmp_path)


def test_report_from_postgres(pg_url: str, tmp_path: Path) -> None:
    expected = write_log(pg_url)
    out = tmp_path / "report"
    assert main(["audit", "report", "--audit-url", pg_url, "--out", str(out)]) == 0
    check_report(out / "index.html", expected, tmp_path)
    assert "pg-test-SECRET" not in (out / "index.html").read_text()


def test_report_of_an_empty_log_and_without_feedback(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    with open_store(db) as store:
        store.connect()
    assert main(["audit", "report", "--path", str(db), "--out", str(tmp_path / "e")]) == 0
    assert 'id="empty"' in (tmp_path / "e" / "index.html").read_text()


def test_report_with_early_streamed_decisions_whose_p_is_null(tmp_path: Path) -> None:
    """An early stream's decision is made before the reply (every p answers): its ``p`` is
    null. The report draws the decisions that have one and says how many had none."""
    db = tmp_path / "early.db"
    rows = []
    for i in range(6):
        early = i % 2 == 0
        record = DecisionRecord(request_id=f"e{i}", cost=0.5, cost_source="model",
                                p=None if early else 0.9,
                                p_source="none" if early else "calibrated",
                                threshold=-0.5, c_r=2.0,
                                expected_utility_answer=None if early else 0.85,
                                expected_utility_refuse=-2.0, decision="answer",
                                mode="enforce", latency_ms=0.1)  # type: ignore[arg-type]
        rows.append(DECISIONS.row(dict(zip(DECISIONS.names, decision_row(
            record, ts=1.8e9 + i, model="m", stream=True, query=None), strict=True))))
    with open_store(db) as store:
        store.connect()
        store.insert(DECISIONS, rows)
    out = tmp_path / "r"
    assert main(["audit", "report", "--path", str(db), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert "3 decision(s) without p" in html
    hist = re.search(r'<figure id="fig-p-histogram".*?</figure>', html, re.S)
    assert hist is not None and 'class="bar"' in hist.group(0)


@pytest.mark.parametrize("action", ["report", "export"])
def test_a_file_that_is_not_an_audit_log_is_named(
        action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: 'audit report --path bad.jsonl' said "not a utilityguard audit log (file is
    # not a database)" without naming the file
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request_id": "r1"}\n' * 200)
    out = tmp_path / ("r" if action == "report" else "r.jsonl")
    assert main(["audit", action, "--path", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"utilityguard: error: {bad}: not a utilityguard audit log (file is not a "
                   "database)\n")


def _priced_rows(spec: list[tuple[str | None, str, str, int]]) -> list[tuple[object, ...]]:
    """Decision rows: ``(priced_by, cost_source, decision, how many)`` each."""
    rows, i = [], 0
    for priced_by, source, decision, n in spec:
        for _ in range(n):
            record = DecisionRecord(request_id=f"q{i}", cost=9.0,
                                    cost_source=source,  # type: ignore[arg-type]
                                    p=0.5, p_source="calibrated", threshold=0.6, c_r=2.0,
                                    expected_utility_answer=-4.0, expected_utility_refuse=-2.0,
                                    decision=decision, mode="enforce",  # type: ignore[arg-type]
                                    latency_ms=0.1, priced_by=priced_by)  # type: ignore[arg-type]
            rows.append(DECISIONS.row(dict(zip(DECISIONS.names, decision_row(
                record, ts=1.8e9 + i, model="m", stream=False, query=None), strict=True))))
            i += 1
    return rows


def test_report_says_what_set_the_price_and_how_to_trust_a_prompt(tmp_path: Path) -> None:
    # the operator's first question when everything is refused: which text set the price;
    # refusals a system prompt priced say how to trust the application's own prompt
    db = tmp_path / "priced.db"
    with open_store(db) as store:
        store.connect()
        store.insert(DECISIONS, _priced_rows([
            ("system", "model", "refuse", 5), ("system", "model", "answer", 1),
            ("user", "model", "answer", 3), ("user", "model", "refuse", 2),
            (None, "nothing_asked", "answer", 2),
            (None, "model", "answer", 1)]))  # a row written before the field existed
    out = tmp_path / "r"
    assert main(["audit", "report", "--path", str(db), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    table = re.search(r'<table id="priced-by">(.*?)</table>', html, re.S)
    assert table is not None
    cells = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td><td>([^<]+)</td></tr>",
                       table.group(1))
    assert cells == [("the user&#x27;s last turn", "5", "2 (40.0%)"),
                     ("a system prompt", "6", "5 (83.3%)"),
                     ("(no text: a given cost, a ceiling, or nothing asked)", "2", "0 (0.0%)"),
                     ("(not recorded)", "1", "0 (0.0%)")]
    hint = re.search(r'<p id="trust-hint">(.*?)</p>', html, re.S)
    assert hint is not None
    assert hint.group(1).startswith("5 of the guard's 7 refusals (71.4%) were priced by a "
                                    "sentence of a system or developer prompt")
    assert "--trusted-prompts" in hint.group(1)


def test_report_says_how_to_trust_tools_that_priced_refusals(tmp_path: Path) -> None:
    db = tmp_path / "tools.db"
    with open_store(db) as store:
        store.connect()
        store.insert(DECISIONS, _priced_rows([("user", "model", "refuse", 1),
                                              ("tools", "model", "refuse", 3),
                                              ("tools", "model", "answer", 1)]))
    out = tmp_path / "r"
    assert main(["audit", "report", "--path", str(db), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert '<p id="trust-hint">' not in html  # no prompt priced a refusal
    hint = re.search(r'<p id="trust-tools-hint">(.*?)</p>', html, re.S)
    assert hint is not None
    assert hint.group(1).startswith("3 of the guard's 4 refusals (75.0%) were priced by a "
                                    "tool definition")
    assert "--trusted-tools" in hint.group(1)


def test_report_without_prompt_priced_refusals_gives_no_trust_hint(tmp_path: Path) -> None:
    db = tmp_path / "user.db"
    with open_store(db) as store:
        store.connect()
        store.insert(DECISIONS, _priced_rows([("user", "model", "refuse", 3),
                                              ("system", "model", "answer", 2)]))
    out = tmp_path / "r"
    assert main(["audit", "report", "--path", str(db), "--out", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert '<table id="priced-by">' in html and 'id="trust-hint"' not in html
