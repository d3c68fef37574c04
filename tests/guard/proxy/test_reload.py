"""Reloading the policy without downtime: SIGHUP and ``POST /admin/reload`` on a real
``utilityguard serve`` process, under load, and a policy that fails to load."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.policy import TrainingSet, fit_policy, load_policy, save_policy
from tests.guard.proxy.conftest import ANSWER, Served

ADMIN = "admin-SECRET-31c9"
QUESTIONS = ("What is the dose of drug 3? sure", "What will the stock 4 do?",
             "What is the dose of drug 5?", "What will the stock 6 do? sure")


def _training(seed: int) -> TrainingSet:
    rng = np.random.default_rng(seed)
    n = 160
    answerable = np.arange(n) % 2 == 0
    questions = [f"What is the dose of drug {i}?" if a else f"What will the stock {i} do?"
                 for i, a in enumerate(answerable)]
    signal_ = -np.abs(rng.normal(0.3, 0.4, n))
    correct = answerable & (rng.random(n) < np.exp(signal_))
    return TrainingSet(questions, answerable, np.full(n, 1.5), np.ones(n, dtype=bool),
                       correct, signal_, [])


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("policies")
    out = {}
    for name, seed, c_r in (("first", 1, 1.0), ("second", 2, 4.0)):
        save_policy(fit_policy(_training(seed), signal="logprob_mean", c_r=c_r, name=name),
                    root / name)
        out[name] = root / name
    return out


def _put(src: Path, live: Path) -> None:
    """Replace the live policy directory by a copy of ``src`` (a swap by rename)."""
    tmp = live.with_name(live.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp)
    old = live.with_name(live.name + ".old")
    if live.exists():
        live.rename(old)
    tmp.rename(live)
    shutil.rmtree(old, ignore_errors=True)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def serve(upstream: Any, tmp_path: Path) -> Any:
    """Start ``utilityguard serve --policy LIVE`` as a process; stopped at teardown."""
    procs: list[subprocess.Popen[bytes]] = []
    log = tmp_path / "serve.log"
    sink = log.open("wb")

    def start(live: Path, *extra: str) -> tuple[str, int]:
        port = _port()
        env = {**os.environ, "UTILITYGUARD_ADMIN_API_KEY": ADMIN}
        cmd = [sys.executable, "-m", "guard.cli", "serve", "--upstream", upstream[1].url + "/v1",
               "--port", str(port), "--policy", str(live), "--log-level", "warning", *extra]
        proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=sink,
                                stderr=subprocess.STDOUT)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    return url, proc.pid
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)

    yield start, log
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    sink.close()


def _expected(policy_dir: Path, question: str) -> DecisionRecord:
    lp = -0.01 if "sure" in question else -0.1  # what the fake upstream's tokens carry
    return Guard.from_policy(load_policy(policy_dir)).decide(question, ANSWER,
                                                  confidence={"logprob_mean": lp})


def _ask(client: httpx.Client, question: str) -> httpx.Response:
    return client.post("/v1/chat/completions", json={
        "model": "fake-model", "messages": [{"role": "user", "content": question}]})


def _check(r: httpx.Response, want: dict[str, dict[str, DecisionRecord]], question: str) -> str:
    """The response was decided entirely by the policy its header names."""
    assert r.status_code == 200, r.text
    label = r.headers["x-utilityguard-policy"]
    rec = want[label][question]
    assert r.headers["x-utilityguard-decision"] == rec.decision
    for header, value in (("cost", rec.cost), ("confidence", rec.p),
                          ("threshold", rec.threshold)):
        assert r.headers[f"x-utilityguard-{header}"] == f"{value:.6g}", header
    return label


def test_reload_under_load_swaps_atomically_and_drops_nothing(
        serve: Any, policies: dict[str, Path], tmp_path: Path) -> None:
    start, _ = serve
    live = tmp_path / "live"
    _put(policies["first"], live)
    url, pid = start(live, "--policy-dir", str(policies["second"].parent))
    labels = {name: load_policy(d).label for name, d in policies.items()}
    want = {labels[n]: {q: _expected(d, q) for q in QUESTIONS} for n, d in policies.items()}
    assert len({rec.decision + str(rec.threshold) for v in want.values()
                for rec in v.values()}) > 2  # the two policies decide differently
    seen: list[str] = []
    stop = time.monotonic() + 60

    def hammer(k: int) -> int:
        n = 0
        with httpx.Client(base_url=url, timeout=30) as c:
            while time.monotonic() < stop and (n < 40 or len(set(seen)) < 2):
                q = QUESTIONS[(k + n) % len(QUESTIONS)]
                seen.append(_check(_ask(c, q), want, q))
                n += 1
        return n

    with ThreadPoolExecutor(3) as pool, httpx.Client(base_url=url, timeout=30) as admin:
        futures = [pool.submit(hammer, k) for k in range(3)]
        for i in range(6):
            name = ("second", "first")[i % 2]
            _put(policies[name], live)
            r = admin.post("/admin/reload", headers={"authorization": f"Bearer {ADMIN}"})
            assert r.status_code == 200, r.text
            assert r.json() == {"reloaded": True, "policy": labels[name]}
            time.sleep(0.2)
        sent = sum(f.result() for f in futures)
    assert len(seen) == sent >= 120  # every request answered (none dropped), each checked
    assert set(seen) == set(labels.values())

    # SIGHUP reloads too
    _put(policies["second"], live)
    os.kill(pid, signal.SIGHUP)
    with httpx.Client(base_url=url, timeout=30) as c:
        deadline = time.monotonic() + 20
        while _check(_ask(c, QUESTIONS[0]), want, QUESTIONS[0]) != labels["second"]:
            assert time.monotonic() < deadline, "SIGHUP did not reload"
            time.sleep(0.1)


def test_a_policy_that_fails_to_load_leaves_the_old_one_serving(
        serve: Any, policies: dict[str, Path], tmp_path: Path) -> None:
    start, log = serve
    live = tmp_path / "live"
    _put(policies["first"], live)
    url, pid = start(live, "--policy-dir", str(policies["second"].parent))
    first = load_policy(policies["first"]).label
    with (live / "calibrator" / "calibrator.npz").open("ab") as fh:
        fh.write(b"tampered")
    with httpx.Client(base_url=url, timeout=30) as c:
        for headers in ({}, {"authorization": "Bearer wrong"}):
            r = c.post("/admin/reload", headers=headers)
            assert r.status_code == 401 and set(r.json()["error"]) >= {"message", "code"}
        r = c.post("/admin/reload", headers={"authorization": f"Bearer {ADMIN}"})
        assert r.status_code == 500
        message = r.json()["error"]["message"]
        assert "still serving " + first in message and "modified" in message
        assert _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"] == first
        os.kill(pid, signal.SIGHUP)
        time.sleep(1.0)
        assert _ask(c, QUESTIONS[1]).headers["x-utilityguard-policy"] == first
    text = log.read_text()
    assert text.count("policy reload failed, still serving " + first) == 2
    assert "Traceback" not in text


def test_the_admin_endpoint_is_off_without_an_admin_key(
        start_proxy: Callable[..., Served]) -> None:
    proxy = start_proxy(policy="smollm2", c_r=2.0)
    with httpx.Client(base_url=proxy.url, timeout=10) as c:
        r = c.post("/admin/reload", headers={"authorization": "Bearer anything"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "admin_disabled"


def test_the_admin_can_switch_to_another_policy(start_proxy: Callable[..., Served],
                                                policies: dict[str, Path]) -> None:
    proxy = start_proxy(policy="smollm2", admin_api_key=ADMIN,
                        policy_dirs=[str(policies["second"].parent)])
    auth = {"authorization": f"Bearer {ADMIN}"}
    second = load_policy(policies["second"]).label
    with httpx.Client(base_url=proxy.url, timeout=30) as c:
        assert _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"].startswith("smollm2@")
        for bad in (b"[1]", b'{"policy": 3}', b'{"policy": "x", "more": 1}', b"{oops"):
            r = c.post("/admin/reload", headers=auth, content=bad)
            assert r.status_code == 400, bad
        missing = str(policies["second"].parent / "no-such-policy")
        r = c.post("/admin/reload", headers=auth, json={"policy": missing})
        assert r.status_code == 500 and "no-such-policy" in r.json()["error"]["message"]
        # outside every --policy-dir (also by ../ or an absolute path): 403, nothing loaded
        for outside in ("/tmp", str(policies["second"].parent / ".." / "elsewhere")):
            r = c.post("/admin/reload", headers=auth, json={"policy": outside})
            assert r.status_code == 403 and r.json()["error"]["param"] == "policy", outside
        assert _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"].startswith("smollm2@")
        r = c.post("/admin/reload", headers=auth, json={"policy": str(policies["second"])})
        assert r.status_code == 200 and r.json()["policy"] == second
        assert _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"] == second


def test_sighup_reloads_the_configured_policy_not_the_admins_switch(
        serve: Any, policies: dict[str, Path], tmp_path: Path) -> None:
    """The decision: SIGHUP (and an empty POST /admin/reload) re-read what the operator
    configured (--policy LIVE), so a switch by ``{"policy": ...}`` lasts until the next
    reload; it used to reload the policy last switched to."""
    start, _ = serve
    live = tmp_path / "live"
    _put(policies["first"], live)
    url, pid = start(live, "--policy-dir", str(policies["second"].parent))
    first, second = (load_policy(policies[n]).label for n in ("first", "second"))
    auth = {"authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=url, timeout=30) as c:
        r = c.post("/admin/reload", headers=auth, json={"policy": str(policies["second"])})
        assert r.status_code == 200 and r.json()["policy"] == second
        assert _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"] == second
        os.kill(pid, signal.SIGHUP)
        deadline = time.monotonic() + 20
        while _ask(c, QUESTIONS[0]).headers["x-utilityguard-policy"] != first:
            assert time.monotonic() < deadline, "SIGHUP did not reload the configured policy"
            time.sleep(0.1)
        r = c.post("/admin/reload", headers=auth, json={"policy": str(policies["second"])})
        assert r.json()["policy"] == second
        r = c.post("/admin/reload", headers=auth)  # empty: the configured one again
        assert r.status_code == 200 and r.json()["policy"] == first
