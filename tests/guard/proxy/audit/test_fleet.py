"""State every replica sees (issue 36, items 1 and 4): two ``serve`` replicas on one real
PostgreSQL database, and one ``serve --workers 2`` on one SQLite file.

* ``GET /v1/decisions/{id}``: a decision made on one replica is read on the other (it used to
  be 20/20 on the replica that made it, 0/20 on the other), by the key that made it whatever
  the spelling of its ``Authorization`` header; another key gets the 404 of an unknown id.
* ``--refusal-budget``: one estimate, one ``C_R`` for both replicas (their ``/metrics``
  agree; the steps in ``budget_steps`` form one sequence).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg

KEYS = [f"sk-fleet-{i:02d}" for i in range(10)]
OTHER = "sk-fleet-other"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    return {**env, "UTILITYGUARD_API_KEYS": ",".join([*KEYS, OTHER]), **extra}


def _ask(url: str, key: str, question: str) -> str:
    with httpx.Client(base_url=url, timeout=20) as c:  # a new connection each time
        r = c.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
                   json={"model": "m", "messages": [{"role": "user", "content": question}]})
    assert r.status_code == 200, r.text
    return r.headers["x-utilityguard-request-id"]


def _read(url: str, rid: str, authorization: str) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=20) as c:
        return c.get(f"/v1/decisions/{rid}", headers={"authorization": authorization})


def _gauge(url: str, name: str) -> float:
    text = httpx.get(url + "/metrics", timeout=10).text
    found = re.search(rf"^utilityguard_refusal_budget_{name} (\S+)$", text, re.M)
    assert found, text[-2000:]
    return float(found.group(1))


def _replicas(serve_process: Callable[..., Any], pg_url: str, args: list[str]
              ) -> tuple[Any, Any, list[tuple[str, str]]]:
    """Two replicas on one database, and 160 decisions made alternately on each:
    ``(request id, key)``."""
    a, b = (serve_process(args, env=_env(UTILITYGUARD_AUDIT_URL=pg_url), timeout=60)
            for _ in range(2))
    made: list[tuple[str, str]] = []
    for i in range(160):
        key = KEYS[i % len(KEYS)]
        question = ("What dose of drug %d? unsure" if i % 3 == 0 else "What is %d + 1? sure") % i
        made.append((_ask((a, b)[i % 2].url, key, question), key))
    return a, b, made


def test_two_replicas_one_database_read_every_decision(
        pg_url: str, upstream: Any, serve_process: Callable[..., Any]) -> None:
    a, b, made = _replicas(serve_process, pg_url, ["--upstream", upstream[1].url + "/v1"])
    # every decision on both replicas, by the key that made it, however its header is spelled
    spellings = ["Bearer {k}", "bearer {k}", "Bearer  {k}", "BEARER {k}"]
    for n, (rid, key) in enumerate(made[::8]):
        bodies = []
        for replica in (a, b):
            r = _read(replica.url, rid, spellings[n % len(spellings)].format(k=key))
            assert r.status_code == 200, (replica.url, r.text)
            bodies.append({k: v for k, v in r.json().items() if k != "created"})
            other = _read(replica.url, rid, f"Bearer {OTHER}")
            unknown = _read(replica.url, "f" * 32, f"Bearer {key}")
            assert other.status_code == unknown.status_code == 404
            assert other.json()["error"]["message"].replace(rid, "ID") == \
                unknown.json()["error"]["message"].replace("f" * 32, "ID")
        assert bodies[0] == bodies[1] and bodies[0]["request_id"] == rid
    for replica in (a, b):
        assert "Traceback" not in replica.stop()


def test_two_replicas_one_database_hold_one_budget(
        pg_url: str, upstream: Any, serve_process: Callable[..., Any]) -> None:
    """Both replicas follow the fleet's step (read every second): one estimate, one C_R,
    one sequence of steps."""
    a, b, _ = _replicas(serve_process, pg_url, [
        "--upstream", upstream[1].url + "/v1", "--refusal-budget", "0.3", "--budget-window",
        "40", "--budget-key-share", "0.1", "--budget-max-rate", "600"])
    time.sleep(2.5)
    assert _gauge(a.url, "c_r") == _gauge(b.url, "c_r")
    assert _gauge(a.url, "estimated_rate") == _gauge(b.url, "estimated_rate")
    assert _gauge(a.url, "updates_total") == _gauge(b.url, "updates_total") > 3
    with psycopg.connect(pg_url) as conn:
        seqs = [s for (s,) in conn.execute("SELECT seq FROM budget_steps WHERE route = '*' "
                                           "ORDER BY id")]
        last = conn.execute("SELECT c_r FROM budget_steps ORDER BY seq DESC LIMIT 1").fetchone()
    assert seqs == list(range(1, len(seqs) + 1))  # one sequence, no step taken twice
    assert last[0] == _gauge(a.url, "c_r")
    for replica in (a, b):
        assert "Traceback" not in replica.stop()


def test_the_workers_of_one_replica_share_decisions_through_sqlite(
        tmp_path: Path, upstream: Any, serve_process: Callable[..., Any]) -> None:
    """``--workers 2`` on one SQLite file: each request on a new connection lands on either
    worker, and every decision is read back (it used to be the worker that made it only)."""
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--workers", "2",
                            "--audit-path", str(tmp_path / "audit.db")], env=_env(), timeout=90)
    made = [(_ask(served.url, KEYS[i % 3], f"What is {i} + 1? sure"), KEYS[i % 3])
            for i in range(20)]
    codes = [_read(served.url, rid, f"Bearer {key}").status_code for rid, key in made]
    assert codes == [200] * 20
    assert "Traceback" not in served.stop()


def test_a_refit_reads_the_fleets_labels_from_the_database_url(
        pg_url: str, tmp_path: Path, capsys: Any) -> None:
    """``fit --from-audit "$UTILITYGUARD_AUDIT_URL"``: the URL is read as a URL (it was taken
    for a file path), and its password appears neither in the output nor in the card."""
    from benchmarks.perf.pg_server import PASSWORD
    from guard.cli import main
    from guard.decision_records import DecisionRecord
    from guard.proxy.audit import FEEDBACK, AuditWriter
    from guard.proxy.feedback import feedback_row

    writer = AuditWriter(pg_url, store_queries=True)
    writer.start()
    for i in range(40):
        sure = i % 2 == 0
        record = DecisionRecord(
            request_id=f"{i:032x}", cost=1.2, cost_source="model", p=0.9, p_source="uncalibrated",
            threshold=0.1, c_r=2.0, expected_utility_answer=0.5, expected_utility_refuse=-2.0,
            decision="answer", mode="enforce", latency_ms=1.0, signal="logprob_mean",
            signal_value=-0.01 if sure else -2.0)
        writer.submit(record, query=f"What is item {i}?", key_id="client-key")
        label = {"request_id": record.request_id, "correct": sure == (i % 10 != 0),
                 "answerable": None, "cost": None}
        writer.submit_row(FEEDBACK, feedback_row(label, "labeller-key"))
    writer.close()
    out = tmp_path / "refit"
    assert main(["fit", "--from-audit", pg_url, "--out", str(out), "--min-labels", "20",
                 "--max-key-share", "1"]) == 0  # one labelling key, trusted
    captured = capsys.readouterr()
    card = (out / "policy.json").read_text()
    assert "postgresql://guard:***@" in card
    assert PASSWORD not in captured.out + captured.err + card
