"""``POST /v1/feedback`` on a real proxy, and ``utilityguard fit --from-audit`` on its log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from guard.cli import main
from guard.policy import load_policy
from guard.proxy.feedback import labelled_decisions
from tests.guard.proxy.conftest import CLIENT_KEY, Served

AUTH = {"authorization": f"Bearer {CLIENT_KEY}"}


def _ask(client: httpx.Client, question: str) -> str:
    r = client.post("/v1/chat/completions", headers=AUTH, json={
        "model": "fake-model", "messages": [{"role": "user", "content": question}]})
    assert r.status_code == 200, r.text
    return r.headers["x-utilityguard-request-id"]


@pytest.fixture
def served(start_proxy: Callable[..., Served], tmp_path: Path) -> tuple[Served, Path]:
    db = tmp_path / "audit.db"
    return start_proxy(audit_path=db, api_keys=[CLIENT_KEY], audit_queries=True,
                       feedback_rate=1000), db


def test_a_label_is_appended_beside_its_decision(served: tuple[Served, Path]) -> None:
    proxy, db = served
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        rid = _ask(c, "What is 6 x 7? sure")
        # sent at once: the decision may still be queued for the audit writer
        r = c.post("/v1/feedback", headers=AUTH, json={"request_id": rid, "correct": True})
        assert r.status_code == 200, r.text
        assert r.json() == {"recorded": True, "request_id": rid, "correct": True,
                            "answerable": None, "cost": None}
        r = c.post("/v1/feedback", headers=AUTH, json={"request_id": rid, "correct": False,
                                                        "answerable": True, "cost": 3.5})
        assert r.status_code == 200
    proxy.stop()
    rows = labelled_decisions(db)
    assert len(rows) == 1  # one decision, with its latest label
    assert (rows[0]["label_correct"], rows[0]["label_answerable"], rows[0]["label_cost"]) == (
        False, True, 3.5)
    with sqlite3.connect(db) as conn:  # nothing overwritten: both labels are in the file
        assert conn.execute("SELECT correct, cost FROM feedback ORDER BY id").fetchall() == [
            (1, None), (0, 3.5)]


@pytest.mark.parametrize(("body", "status", "param"), [
    ({"request_id": "0" * 32, "correct": True}, 404, "request_id"),
    ({"request_id": "REAL", "correct": "yes"}, 400, "correct"),
    ({"request_id": "REAL", "correct": 1}, 400, "correct"),
    ({"request_id": "REAL", "answerable": "false"}, 400, "answerable"),
    ({"request_id": "REAL", "cost": -1}, 400, "cost"),
    ({"request_id": "REAL", "cost": True}, 400, "cost"),
    ({"request_id": "REAL", "cost": "NaN"}, 400, "cost"),
    ({"request_id": "REAL", "correct": None}, 400, None),
    ({"request_id": "REAL", "correct": True, "note": "x"}, 400, "note"),
    ({"request_id": 7, "correct": True}, 400, "request_id"),
    ({"request_id": "x" * 200, "correct": True}, 400, "request_id"),
])
def test_bad_labels_are_rejected_in_the_openai_envelope(
        served: tuple[Served, Path], body: dict[str, Any], status: int,
        param: str | None) -> None:
    proxy, db = served
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        rid = _ask(c, "What is 6 x 7?")
        if body.get("request_id") == "REAL":
            body = {**body, "request_id": rid}
        r = c.post("/v1/feedback", headers=AUTH, json=body)
        assert r.status_code == status, r.text
        err = r.json()["error"]
        assert set(err) == {"message", "type", "param", "code"} and err["param"] == param
        assert c.post("/v1/feedback", headers=AUTH, content=b"{not json").status_code == 400
        assert c.post("/v1/feedback", json={"request_id": rid, "correct": True}
                      ).status_code == 401  # same auth as the proxy
    proxy.stop()
    with sqlite3.connect(db) as conn:  # no label was stored (the table may not even exist)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "feedback" in tables:
            assert conn.execute("SELECT COUNT(*) FROM feedback").fetchone() == (0,)


def test_without_an_audit_log_feedback_says_why(start_proxy: Callable[..., Served]) -> None:
    proxy = start_proxy()
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        rid = _ask(c, "What is 6 x 7?")
        r = c.post("/v1/feedback", json={"request_id": rid, "correct": True})
    assert r.status_code == 400 and "--audit-path" in r.json()["error"]["message"]


def test_fit_from_audit_refits_from_labels_and_refuses_with_too_few(
        served: tuple[Served, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    proxy, db = served
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        for i in range(80):
            # confident replies are right 9 times in 10, unsure ones 1 in 10; "will" questions
            # (about the future) are unanswerable
            kind = ("sure", "unsure")[i % 2]
            future = i % 4 >= 2
            q = f"What {'will happen to' if future else 'is'} item {i}? {kind}"
            rid = _ask(c, q)
            right = (i // 4) % 10 != 0 if kind == "sure" else (i // 4) % 10 == 0
            label = {"request_id": rid, "correct": right and not future,
                     "answerable": not future}
            assert c.post("/v1/feedback", headers=AUTH, json=label).status_code == 200
    proxy.stop()
    out = tmp_path / "mine"
    # the client labelled its own decisions: counted only when asked (issue 36)
    own = ["--accept-self-labels", "--max-key-share", "1"]
    assert main(["fit", "--from-audit", str(db), "--out", str(out), "--min-labels", "100",
                 *own]) == 2
    err = capsys.readouterr().err
    assert "80 labelled answers" in err and "at least 100" in err
    assert main(["fit", "--from-audit", str(db), "--out", str(out), "--min-labels", "40",
                 *own]) == 0
    printed = capsys.readouterr().out
    assert "answerability: refit from 2594 seed items and 80 labelled questions" in printed
    assert "cost_model: the shipped default" in printed
    policy = load_policy(out)
    assert policy.signal == "logprob_mean" and policy.answerability is not None
    # the refit calibrator learned the labels: sure replies are far likelier to be right
    p_sure, p_unsure = policy.calibrator.predict([-0.01, -2.0])
    assert p_sure > 0.3 > p_unsure
    a_now, a_future = policy.alpha_of(["What is item 999?", "What will happen to item 999?"])
    assert a_now > a_future
    meta = json.loads((out / "policy.json").read_text())
    assert meta["training"]["n"] == 80 and "from-audit" in meta["command"]


def test_fit_from_a_missing_audit_log_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no-such.db"
    assert main(["fit", "--from-audit", str(missing), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: ") and str(missing) in err
    assert err.count("\n") == 1 and "Traceback" not in err
