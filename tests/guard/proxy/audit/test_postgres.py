"""The PostgreSQL audit backend against a real server: same schema as SQLite, export from
either backend, two proxy processes on one database, a database restart mid-stream (reconnect,
nothing lost), records past the bound counted, the password never in a log, and an older log
gaining the columns it lacks."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import psycopg
import pytest

from benchmarks.perf.pg_server import PASSWORD, PostgresServer
from guard.cli import main
from guard.decision_records import DecisionRecord
from guard.exceptions import AuditStoreUnavailable
from guard.proxy.audit import DECISIONS, AuditWriter, decision_row, open_store, read_rows
from guard.proxy.metrics import ProxyMetrics


def record(i: int, decision: str = "answer") -> DecisionRecord:
    return DecisionRecord(request_id=f"r{i}", cost=4.0, cost_source="model", p=0.5,
                          p_source="uncalibrated", threshold=0.4, c_r=2.0,
                          expected_utility_answer=-1.5, expected_utility_refuse=-2.0,
                          decision=decision, mode="enforce", latency_ms=0.1)  # type: ignore[arg-type]


def pg_ids(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT request_id FROM decisions ORDER BY id")]


def test_same_schema_as_sqlite(pg_url: str, tmp_path: Path) -> None:
    for target in (pg_url, tmp_path / "a.db"):
        with open_store(target) as store:
            store.connect()
    with psycopg.connect(pg_url) as conn:
        pg = {r[0]: r[1] for r in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'decisions'")}
    lite = {r[1]: r[2] for r in sqlite3.connect(tmp_path / "a.db").execute(
        "PRAGMA table_info(decisions)")}
    assert set(pg) == set(lite) and "request_id" in pg and "query" in pg
    kinds = {"double precision": "REAL", "integer": "INTEGER", "text": "TEXT", "bigint":
             "INTEGER"}
    assert {c: kinds[t] for c, t in pg.items()} == lite
    assert lite["p"] == "REAL" and lite["stream"] == "INTEGER" and lite["mode"] == "TEXT"


def test_writer_and_export_read_either_backend(pg_url: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    outs = []
    for target in (pg_url, tmp_path / "a.db"):
        writer = AuditWriter(target, store_queries=True)
        writer.start()
        for i in range(3):
            writer.submit(record(i, "refuse" if i == 1 else "answer"), query=f"q{i}\x00nul",
                          model="m", stream=i == 2)
        writer.close()
        assert writer.written == 3 and not writer.dropped
        outs.append(tmp_path / f"out{len(outs)}.jsonl")
    assert main(["audit", "export", "--audit-url", pg_url, "--out", str(outs[0])]) == 0
    assert "guard:***@" in capsys.readouterr().out
    assert main(["audit", "export", "--path", str(tmp_path / "a.db"), "--out",
                 str(outs[1])]) == 0
    got = [[{k: v for k, v in json.loads(line).items() if k != "ts"}
            for line in out.read_text().splitlines()] for out in outs]
    assert got[0] == got[1]
    assert [(r["request_id"], r["decision"], r["stream"], r["query"]) for r in got[0]] == [
        ("r0", "answer", False, "q0?nul"), ("r1", "refuse", False, "q1?nul"),
        ("r2", "answer", True, "q2?nul")]
    monkeypatch.setenv("UTILITYGUARD_AUDIT_URL", pg_url)
    env_out = tmp_path / "env.jsonl"
    assert main(["audit", "export", "--out", str(env_out)]) == 0
    assert env_out.read_text() == outs[0].read_text()
    assert [r["request_id"] for r in read_rows(pg_url, DECISIONS)] == ["r0", "r1", "r2"]


def test_export_errors_are_one_line(postgres: PostgresServer, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    empty = postgres.create_database("not_an_audit_log")
    out = str(tmp_path / "o.jsonl")
    assert main(["audit", "export", "--audit-url", empty, "--out", out]) == 2
    assert "not a utilityguard audit log" in capsys.readouterr().err
    dead = f"postgresql://guard:{PASSWORD}@127.0.0.1:9/x"
    assert main(["audit", "export", "--audit-url", dead, "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: postgresql://guard:***@127.0.0.1:9/x")
    assert err.count("\n") == 1 and PASSWORD not in err
    assert main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--audit-url", dead]) == 2
    err = capsys.readouterr().err  # refused before serving: one line, no password
    assert err.startswith("utilityguard: error: postgresql://guard:***@127.0.0.1:9/x")
    assert err.count("\n") == 1 and PASSWORD not in err


def test_two_proxy_processes_one_database(pg_url: str, upstream: Any, serve_process: Any,
                                          chat: Any) -> None:
    """Two ``serve`` processes (URL in the environment) on one database: every decision of
    both is there exactly once, and neither printed the password."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    env["UTILITYGUARD_AUDIT_URL"] = pg_url
    args = ["--upstream", upstream[1].url + "/v1", "--log-level", "info"]
    replicas = [serve_process(args, env=env, timeout=60) for _ in range(2)]
    sent: list[list[str]] = [[], []]

    def drive(k: int) -> None:
        with openai.OpenAI(base_url=replicas[k].url + "/v1", api_key="k", max_retries=0,
                           timeout=20) as c:
            for i in range(40):
                q = ("dose unsure" if i % 3 == 0 else "sure") + f" {k}-{i}"
                raw = c.chat.completions.with_raw_response.create(**chat(q, stream=i % 2 == 1))
                sent[k].append(raw.headers["x-utilityguard-request-id"])

    threads = [threading.Thread(target=drive, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    outputs = [r.stop() for r in replicas]
    assert [len(s) for s in sent] == [40, 40]
    stored = pg_ids(pg_url)
    assert sorted(stored) == sorted(sent[0] + sent[1])  # all of both, none twice
    with psycopg.connect(pg_url) as conn:
        decisions = dict(conn.execute(
            "SELECT decision, count(*) FROM decisions GROUP BY decision").fetchall())
    assert decisions == {"refuse": 28, "answer": 52}  # i % 3 == 0: 14 of 40 per replica
    for out in outputs:
        assert "Traceback" not in out and PASSWORD not in out


def test_database_restart_mid_stream(postgres: PostgresServer, pg_url: str,
                                     start_proxy: Any, make_client: Any, chat: Any,
                                     caplog: pytest.LogCaptureFixture) -> None:
    """Requests keep being answered while the database restarts; the writer reconnects and
    every decision made meanwhile is written (none dropped)."""
    caplog.set_level(logging.INFO)
    served = start_proxy(audit_url=pg_url)
    proxy = served.app.state.proxy
    # the client's 10 s timeout, no retries (openai_client): a request that waited for the
    # stopped database would fail, for it restarts only after the outage's requests are answered
    c = make_client(served)
    ids: list[str] = []

    def ask(n: int) -> None:
        for _ in range(n):
            raw = c.chat.completions.with_raw_response.create(**chat("sure"))
            ids.append(raw.headers["x-utilityguard-request-id"])

    ask(20)
    postgres.stop()
    ask(30)  # answered while the database is down
    deadline = time.monotonic() + 10
    while proxy.audit.connected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not proxy.audit.connected
    ready = httpx.get(served.url + "/readyz", timeout=10)
    assert ready.status_code == 200  # still serving: the database is reported, not required
    audit = ready.json()["audit"]
    # where the database lives is not shown to whoever can reach /readyz (issue 20)
    where = pg_url.rsplit("@", 1)[-1]  # host:port/database
    assert audit["connected"] is False and "log" not in audit and where not in ready.text
    postgres.start()
    ask(20)
    served.stop()
    metrics = proxy.metrics
    assert pg_ids(pg_url) == ids and len(ids) == 70
    assert metrics.audit_reconnects.value() >= 1
    assert metrics.audit_written.value() == 70
    assert sum(metrics.audit_dropped.value(r) for r in ("queue_full", "rejected",
                                                        "shutdown")) == 0
    assert "reconnected" in caplog.text and "unavailable" in caplog.text
    assert PASSWORD not in caplog.text


def test_past_the_bound_counted_never_silent(postgres: PostgresServer, pg_url: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    metrics = ProxyMetrics()
    writer = AuditWriter(pg_url, queue_size=5, metrics=metrics, backoff_max=0.2)
    writer.start()
    postgres.stop()
    try:
        assert writer.submit(record(0))
        deadline = time.monotonic() + 10
        while writer.connected and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not writer.connected  # the writer holds r0 and retries
        accepted = [writer.submit(record(i)) for i in range(1, 21)]
        assert accepted == [True] * 5 + [False] * 15
        assert metrics.audit_dropped.value("queue_full") == 15
    finally:
        postgres.start()
    writer.close()
    assert pg_ids(pg_url) == [f"r{i}" for i in range(6)]
    assert writer.written == 6 and dict(writer.dropped) == {"queue_full": 15}
    assert "dropped 1 record(s) (queue_full)" in caplog.text  # warned (rate-limited)
    assert "6 record(s) written, 15 dropped (queue_full 15)" in caplog.text


def test_shutdown_while_database_down_counts_what_is_left(postgres: PostgresServer,
                                                         pg_url: str) -> None:
    metrics = ProxyMetrics()
    writer = AuditWriter(pg_url, metrics=metrics, backoff_max=0.1)
    writer.start()
    postgres.stop()
    try:
        for i in range(4):
            writer.submit(record(i))
        writer.close(timeout=1.0)
    finally:
        postgres.start()
    assert writer.written == 0 and dict(writer.dropped) == {"shutdown": 4}
    assert metrics.audit_dropped.value("shutdown") == 4


def test_unreachable_database_fails_at_startup(postgres: PostgresServer) -> None:
    writer = AuditWriter(f"postgresql://guard:{PASSWORD}@127.0.0.1:9/x")
    with pytest.raises(AuditStoreUnavailable) as info:
        writer.start()
    assert PASSWORD not in str(info.value) and "guard:***@127.0.0.1:9" in str(info.value)


def test_feedback_to_one_replica_reaches_a_decision_of_the_other(
        pg_url: str, upstream: Any, serve_process: Any, chat: Any) -> None:
    """Replica A decides; a label posted to replica B (which never saw the request) is
    accepted, stored beside A's decision in the shared database, and an id neither replica
    decided is 404 on both."""
    import os

    from guard.proxy.feedback import labelled_decisions

    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    env["UTILITYGUARD_AUDIT_URL"] = pg_url
    args = ["--upstream", upstream[1].url + "/v1"]
    a, b = (serve_process(args, env=env, timeout=60) for _ in range(2))
    with openai.OpenAI(base_url=a.url + "/v1", api_key="k", max_retries=0, timeout=20) as c:
        raw = c.chat.completions.with_raw_response.create(**chat("sure 1"))
    rid = raw.headers["x-utilityguard-request-id"]
    deadline = time.monotonic() + 20  # A's writer is asynchronous: wait for the row
    while rid not in pg_ids(pg_url) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rid in pg_ids(pg_url)
    with httpx.Client(base_url=b.url, timeout=20) as h:
        r = h.post("/v1/feedback", json={"request_id": rid, "correct": False, "cost": 7.5})
        assert r.status_code == 200, r.text
        assert r.json()["recorded"] is True
        unknown = h.post("/v1/feedback", json={"request_id": "f" * 32, "correct": True})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["param"] == "request_id"
    for replica in (a, b):
        replica.stop()  # flushes B's writer
    rows = [r for r in labelled_decisions(pg_url) if r["request_id"] == rid]
    assert len(rows) == 1
    assert (rows[0]["label_correct"], rows[0]["label_cost"]) == (False, 7.5)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_older_log_gains_the_priced_by_column(backend: str, request: pytest.FixtureRequest,
                                                 tmp_path: Path) -> None:
    # a log written before decisions recorded where the text that set the price sits: the
    # store adds the column when it opens it; the old rows read None, new rows their value
    target: Any = (request.getfixturevalue("pg_url") if backend == "postgres"
                   else tmp_path / "old.db")
    with open_store(target) as store:
        store.connect()
        store.insert(DECISIONS, [DECISIONS.row(dict(zip(DECISIONS.names, decision_row(
            record(0), ts=1.0, model="m", stream=False, query=None), strict=True)))])
    drop = "ALTER TABLE decisions DROP COLUMN priced_by"
    if backend == "postgres":
        with psycopg.connect(target) as conn:
            conn.execute(drop)
    else:
        with contextlib.closing(sqlite3.connect(target)) as conn:
            conn.execute(drop)
            conn.commit()
    new = record(1, "refuse").model_copy(update={"priced_by": "system"})
    with open_store(target) as store:
        store.connect()
        store.insert(DECISIONS, [DECISIONS.row(dict(zip(DECISIONS.names, decision_row(
            new, ts=2.0, model="m", stream=False, query=None), strict=True)))])
    got = [(r["request_id"], r["priced_by"]) for r in read_rows(target, DECISIONS)]
    assert got == [("r0", None), ("r1", "system")]
