"""The audit log (SQLite, off the request path, nothing lost on shutdown), its JSONL export,
the Prometheus metrics, and no secret in any log or in the audit database."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from guard.cli import main
from guard.decision_records import DecisionRecord
from guard.proxy import AuditWriter, ProxyMetrics

CLIENT_KEY = "sk-client-SECRET-7f3a9"
UPSTREAM_KEY = "sk-upstream-SECRET-c41d2"
DECISION_RECORD_FIELDS = {"request_id", "cost", "cost_source", "p", "p_source", "threshold", "c_r",
                 "expected_utility_answer", "expected_utility_refuse", "decision", "mode",
                 "latency_ms"}
RECORD = DecisionRecord(request_id="r", cost=4.0, cost_source="model", p=0.5,
                        p_source="uncalibrated", threshold=0.4, c_r=2.0,
                        expected_utility_answer=-1.5, expected_utility_refuse=-2.0,
                        decision="answer", mode="enforce", latency_ms=0.1)


def rows(db: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM decisions ORDER BY id")]
    finally:
        conn.close()


@pytest.mark.parametrize("store_queries", [pytest.param(False, id="no-queries"),
                                           pytest.param(True, id="queries")])
def test_audit_rows(start_proxy: Any, make_client: Any, chat: Any, tmp_path: Path,
                    store_queries: bool) -> None:
    db = tmp_path / "audit" / "log.db"
    served = start_proxy(audit_path=db, audit_queries=store_queries)
    c = make_client(served)
    ids = [c.chat.completions.with_raw_response.create(**chat(q, stream=s))
           .headers["x-utilityguard-request-id"]
           for q, s in (("sure", False), ("dose unsure", False), ("sure", True))]
    served.stop()
    got = rows(db)
    assert [r["request_id"] for r in got] == ids
    assert [r["decision"] for r in got] == ["answer", "refuse", "answer"]
    assert [r["stream"] for r in got] == [0, 0, 1]
    assert [r["priced_by"] for r in got] == ["user"] * 3  # each question is the user's turn
    assert set(got[0]) >= DECISION_RECORD_FIELDS and got[0]["model"] == "fake-model"
    assert [r["query"] for r in got] == (["sure", "dose unsure", "sure"] if store_queries
                                         else [None] * 3)
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_audit_loses_nothing_on_clean_shutdown(start_proxy: Any, chat: Any,
                                               tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db)
    n = 200

    async def main_() -> None:
        limit = asyncio.Semaphore(32)
        async with openai.AsyncOpenAI(base_url=served.url + "/v1", api_key="k",
                                      max_retries=0, timeout=20) as ac:
            async def one(i: int) -> None:
                async with limit:
                    await ac.chat.completions.create(**chat(f"q{i} sure", stream=i % 2 == 0))
            await asyncio.gather(*(one(i) for i in range(n)))

    asyncio.run(asyncio.wait_for(main_(), 60))
    served.stop()
    assert len(rows(db)) == n


def test_audit_survives_unencodable_text(tmp_path: Path) -> None:
    writer = AuditWriter(tmp_path / "a.db", store_queries=True)
    writer.start()
    writer.submit(RECORD, query="lone \ud800 surrogate", model="m\udfff")
    writer.submit(RECORD, query="fine")
    writer.close()
    assert [(r["query"], r["model"]) for r in rows(tmp_path / "a.db")] == [
        ("lone ? surrogate", "m?"), ("fine", None)]


def test_audit_queue_full_drops_and_counts(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                           ) -> None:
    record = RECORD
    metrics = ProxyMetrics()
    writer = AuditWriter(tmp_path / "a.db", queue_size=2, metrics=metrics)
    with caplog.at_level(logging.WARNING, logger="guard.proxy.audit"):
        accepted = [writer.submit(record) for _ in range(5)]  # writer not started yet
    assert accepted == [True, True, False, False, False]
    assert metrics.audit_dropped.value("queue_full") == 3 and "(queue_full)" in caplog.text
    writer.start()
    writer.close()
    writer.close()  # idempotent
    assert len(rows(tmp_path / "a.db")) == 2 and metrics.audit_written.value() == 2


def test_audit_export_cli(start_proxy: Any, make_client: Any, chat: Any, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
                          ) -> None:
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db)
    make_client(served).chat.completions.create(**chat("dose unsure"))
    served.stop()
    out = tmp_path / "out.jsonl"
    assert main(["audit", "export", "--path", str(db), "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 1 and set(records[0]) >= DECISION_RECORD_FIELDS
    assert (records[0]["decision"], records[0]["cost"], records[0]["stream"]) == (
        "refuse", 20.0, False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UTILITYGUARD_AUDIT_PATH", str(db))
    assert main(["audit", "export", "--out", "env.jsonl"]) == 0
    assert (tmp_path / "env.jsonl").read_text() == out.read_text()
    assert main(["audit", "export", "--path", str(tmp_path / "missing.db"), "--out",
                 str(out)]) == 2
    assert "no such audit database" in capsys.readouterr().err


def test_metrics_after_requests(start_proxy: Any, make_client: Any, chat: Any) -> None:
    served = start_proxy()
    c = make_client(served)
    for q in ("sure", "cheap unsure", "dose unsure"):
        c.chat.completions.create(**chat(q))
    with pytest.raises(openai.InternalServerError):
        c.chat.completions.create(**chat("status-503"))
    with pytest.raises(openai.BadRequestError):
        c.chat.completions.create(model="m", messages=[])
    r = httpx.get(served.url + "/metrics", timeout=10)
    assert r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    got = {(x.name, tuple(sorted(x.labels.items()))): x.value
           for f in text_string_to_metric_families(r.text) for x in f.samples}
    chat_ = ("endpoint", "chat_completions")
    for (name, labels), value in {
        ("utilityguard_requests_total", (chat_, ("status", "200"))): 3,
        ("utilityguard_requests_total", (chat_, ("status", "502"))): 1,
        ("utilityguard_requests_total", (chat_, ("status", "400"))): 1,
        ("utilityguard_decisions_total", (("decision", "answer"), ("mode", "enforce"))): 2,
        ("utilityguard_decisions_total", (("decision", "refuse"), ("mode", "enforce"))): 1,
        ("utilityguard_upstream_errors_total", (("kind", "status_5xx"),)): 1,
        # each question is the user's only turn, and it set the price
        ("utilityguard_priced_by_total", (("decision", "answer"), ("priced_by", "user"))): 2,
        ("utilityguard_priced_by_total", (("decision", "refuse"), ("priced_by", "user"))): 1,
        ("utilityguard_request_duration_seconds_count", (chat_,)): 5,
        ("utilityguard_added_latency_seconds_count", (("stream", "false"),)): 3,
        ("utilityguard_upstream_duration_seconds_bucket", (("le", "+Inf"),
                                                           ("stream", "false"))): 3,
    }.items():
        assert got[name, labels] == value, (name, labels)
    assert "# TYPE utilityguard_added_latency_seconds histogram" in r.text.splitlines()


def test_no_secret_in_logs_or_audit(start_proxy: Any, make_client: Any, chat: Any,
                                    tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db, audit_queries=True, api_keys=CLIENT_KEY,
                         upstream_api_key=UPSTREAM_KEY, read_timeout=0.2)
    c = make_client(served)
    for q in ("sure", "dose unsure", "status-400", "status-503", "not-json", "sleep"):
        for stream in (False, True):
            with contextlib.suppress(openai.APIStatusError):
                c.chat.completions.create(**chat(q, stream=stream))
    with pytest.raises(openai.AuthenticationError):
        make_client(served, api_key="sk-wrong-SECRET-0000").models.list()
    served.stop()
    server_logs = "\n".join(r.getMessage() + str(r.args) for r in caplog.records
                            if not r.name.startswith(("openai", "httpx2")))
    assert "upstream answered HTTP 503" in server_logs  # the proxy did log
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("audit.db*"))
    assert len(rows(db)) == 4 and b"dose unsure" in stored
    for secret in (CLIENT_KEY, UPSTREAM_KEY, "sk-wrong-SECRET-0000", "SECRET"):
        assert secret not in server_logs and secret.encode() not in stored
