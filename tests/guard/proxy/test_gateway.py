"""``utilityguard serve --config FILE``: a real serve process in front of two real upstream
servers on 127.0.0.1, two routes with different policies and ``C_R``, read through the
official ``openai`` client: routing, thresholds, the body's policy, unknown models,
``/v1/models``, ``/v1/decisions/{id}`` per key, and reloads with a good and a bad file.

Every expected decision is computed here from the policy on disk
(``Guard.from_policy(DIR, c_r=...).decide(...)`` with the logprob the fake upstream sends),
independently of the proxy."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from guard.cli import main
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.policy import fit_policy, load_policy, save_policy
from tests.guard.proxy.conftest import ANSWER, FakeUpstream, Served
from tests.guard.proxy.test_reload import QUESTIONS, _training

KEYS = ("sk-gw-alice-SECRET-1", "sk-gw-bob-SECRET-2")
ADMIN = "admin-gw-SECRET-3"
SMALL_KEY = "sk-up-small-SECRET-4"


@pytest.fixture(scope="module")
def two_upstreams() -> Iterator[tuple[tuple[FakeUpstream, Served], ...]]:
    fakes = [FakeUpstream(), FakeUpstream()]
    served = [Served(f.app()) for f in fakes]
    yield tuple(zip(fakes, served, strict=True))
    for s in served:
        s.stop()


@pytest.fixture(scope="module")
def gw_policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gw-policies")
    out = {}
    for name, seed in (("alpha", 1), ("beta", 2)):
        save_policy(fit_policy(_training(seed), signal="logprob_mean", c_r=2.0, name=name),
                    root / name)
        out[name] = root / name
    return out


def write_config(path: Path, small: str, big: str, policies: dict[str, Path],
                 small_c_r: Any = 1, big_c_r: Any = 8) -> None:
    path.write_text(f"""\
routes:
  - model: small-model            # an exact id
    upstream: {small}/v1
    api_key_env: SMALL_KEY        # the upstream key, read from the environment
    policy: {policies['alpha']}
    c_r: {small_c_r}
    mode: enforce
    confidence: logprobs
  - model: "big-*"
    upstream: {big}/v1
    policy: {policies['beta']}
    c_r: {big_c_r}
""")


def expected(policy_dir: Path, c_r: float, question: str) -> DecisionRecord:
    lp = -0.01 if "sure" in question else -0.1  # what the fake upstream's tokens carry
    return Guard.from_policy(load_policy(policy_dir), c_r=c_r).decide(question, ANSWER,
                                                        confidence={"logprob_mean": lp})


def check(raw: Any, want: DecisionRecord) -> dict[str, Any]:
    """The response was decided by ``want``'s policy and C_R; its body's decision object."""
    h = raw.headers
    assert h["x-utilityguard-policy"] == want.policy
    assert h["x-utilityguard-decision"] == want.decision
    assert h["x-utilityguard-threshold"] == f"{want.threshold:.6g}"
    assert h["x-utilityguard-cost"] == f"{want.cost:.6g}"
    body: dict[str, Any] = raw.http_response.json()["utilityguard"]
    assert body["policy"] == want.policy and body["decision"] == want.decision
    assert body["threshold"] == pytest.approx(want.threshold)
    return body


def ask(client: openai.OpenAI, model: str, question: str) -> Any:
    return client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": question}])


def test_serve_config_routes_two_models_to_two_upstreams(
        two_upstreams: Any, gw_policies: dict[str, Path], tmp_path: Path,
        serve_process: Any) -> None:
    (fake_s, up_s), (fake_b, up_b) = two_upstreams
    cfg = tmp_path / "gateway.yaml"
    write_config(cfg, up_s.url, up_b.url, gw_policies)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    env |= {"SMALL_KEY": SMALL_KEY, "UTILITYGUARD_API_KEYS": ",".join(KEYS),
            "UTILITYGUARD_ADMIN_API_KEY": ADMIN}
    db = tmp_path / "audit.db"
    served = serve_process(["--config", str(cfg), "--log-level", "info", "--audit-path",
                            str(db)], env=env, timeout=90)
    alice = openai.OpenAI(base_url=served.url + "/v1", api_key=KEYS[0], max_retries=0,
                          timeout=30)
    bob = openai.OpenAI(base_url=served.url + "/v1", api_key=KEYS[1], max_retries=0,
                        timeout=30)
    alpha, beta = gw_policies["alpha"], gw_policies["beta"]
    with alice, bob, httpx.Client(base_url=served.url, timeout=30) as http:
        # routing, thresholds and the body's policy, per route
        n_s, n_b = len(fake_s.requests), len(fake_b.requests)
        seen = set()
        for q in QUESTIONS:
            small = check(ask(alice, "small-model", q), expected(alpha, 1.0, q))
            big = check(ask(alice, "big-model-7b", q), expected(beta, 8.0, q))
            seen |= {small["decision"], big["decision"]}
            assert small["threshold"] != big["threshold"]
        assert len(fake_s.requests) - n_s == len(QUESTIONS)  # each upstream its own model
        assert len(fake_b.requests) - n_b == len(QUESTIONS)
        assert {r["body"]["model"] for r in fake_s.requests[n_s:]} == {"small-model"}
        assert {r["body"]["model"] for r in fake_b.requests[n_b:]} == {"big-model-7b"}
        # the route's own upstream key; none to the route without api_key_env
        assert fake_s.requests[-1]["headers"]["authorization"] == f"Bearer {SMALL_KEY}"
        assert "authorization" not in fake_b.requests[-1]["headers"]

        # metrics carry the route
        metrics = http.get("/metrics").text
        for route in ("small-model", "big-*"):
            counted = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                       if line.startswith("utilityguard_route_decisions_total{")
                       and f'route="{route}"' in line]
            assert sum(counted) == len(QUESTIONS), (route, counted, metrics[-2000:])

        # an unknown model: 404 in the OpenAI envelope, nothing sent upstream
        with pytest.raises(openai.NotFoundError) as info:
            ask(alice, "other-model", QUESTIONS[0])
        assert info.value.code == "model_not_found"
        assert len(fake_s.requests) - n_s == len(fake_b.requests) - n_b == len(QUESTIONS)

        # /v1/models lists the routes' models
        assert [m.id for m in alice.models.list()] == ["small-model", "big-*"]

        # the decision by request id, for the key that made it only
        raw = ask(alice, "small-model", QUESTIONS[1])
        rid = raw.headers["x-utilityguard-request-id"]
        got = http.get(f"/v1/decisions/{rid}", headers={"authorization": f"Bearer {KEYS[0]}"})
        assert got.status_code == 200
        want = expected(alpha, 1.0, QUESTIONS[1])
        assert got.json()["policy"] == want.policy and got.json()["route"] == "small-model"
        assert got.json()["decision"] == want.decision
        assert got.json()["threshold"] == pytest.approx(want.threshold)
        other = http.get(f"/v1/decisions/{rid}", headers={"authorization": f"Bearer {KEYS[1]}"})
        unknown_id = uuid.uuid4().hex
        unknown = http.get(f"/v1/decisions/{unknown_id}",
                           headers={"authorization": f"Bearer {KEYS[1]}"})
        assert other.status_code == unknown.status_code == 404
        assert other.json() == {"error": {**unknown.json()["error"], "message": unknown.json()[
            "error"]["message"].replace(unknown_id, rid)}}
        assert http.get(f"/v1/decisions/{rid}").status_code == 401

        # a good file, reloaded by the admin endpoint: the new C_R decides
        write_config(cfg, up_s.url, up_b.url, gw_policies, small_c_r=5)
        admin = {"authorization": f"Bearer {ADMIN}"}
        r = http.post("/admin/reload", headers=admin)
        assert r.status_code == 200, r.text
        assert r.json()["routes"] == {"small-model": load_policy(alpha).label,
                                      "big-*": load_policy(beta).label}
        check(ask(alice, "small-model", QUESTIONS[2]), expected(alpha, 5.0, QUESTIONS[2]))

        # a bad file: by the admin endpoint (500, why) and by SIGHUP; the old config serves on
        write_config(cfg, up_s.url, up_b.url, gw_policies, big_c_r=-3)
        r = http.post("/admin/reload", headers=admin)
        assert r.status_code == 500 and "routes[1].c_r" in r.json()["error"]["message"]
        # issue 38: the error named one policy (the first route's) for a two-route gateway
        assert (f"still serving small-model -> {load_policy(alpha).label}, big-* -> "
                f"{load_policy(beta).label}: ") in r.json()["error"]["message"]
        os.kill(served.proc.pid, signal.SIGHUP)
        time.sleep(1.0)
        check(ask(alice, "small-model", QUESTIONS[3]), expected(alpha, 5.0, QUESTIONS[3]))
        check(ask(bob, "big-x", QUESTIONS[3]), expected(beta, 8.0, QUESTIONS[3]))

        # and a good file by SIGHUP
        write_config(cfg, up_s.url, up_b.url, gw_policies, small_c_r=0.5)
        os.kill(served.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 30
        want = expected(alpha, 0.5, QUESTIONS[0])
        while ask(alice, "small-model", QUESTIONS[0]).headers[
                "x-utilityguard-threshold"] != f"{want.threshold:.6g}":
            assert time.monotonic() < deadline, "SIGHUP did not reload the file"
            time.sleep(0.2)
    assert len(seen) == 2, seen  # the routes' decisions differ somewhere: a real check
    output = served.stop()
    assert output.count("config reload failed, still serving the previous routes") == 2
    assert "routes[1].c_r" in output and "Traceback" not in output
    for model, name in (("small-model", "alpha"), ("big-*", "beta")):  # each route announced
        assert f"model {model}: deciding with policy {load_policy(gw_policies[name]).label}" \
            in output
    for secret in (*KEYS, ADMIN, SMALL_KEY):
        assert secret not in output
    with sqlite3.connect(db) as conn:  # audit rows carry the route
        rows = conn.execute("SELECT route, model, policy FROM decisions").fetchall()
    routes = {(route, model) for route, model, _ in rows}
    assert ("small-model", "small-model") in routes and ("big-*", "big-model-7b") in routes
    assert {route for route, _ in routes} == {"small-model", "big-*"}


@pytest.mark.parametrize("text, where", [
    ("routes:\n  - model: a\n    upstream: http://127.0.0.1:9/v1\n"
     "  - model: b\n    upstream: http://127.0.0.1:9/v1\n    c_r: -1\n", "routes[1].c_r: "),
    ("routes:\n  - model: a\n    upstream: ftp://x\n", "routes[0].upstream: "),
    ("routes:\n  - model: a\n    upstream: http://127.0.0.1:9/v1\n    colour: red\n",
     "routes[0].colour: "),
    ("routes: []\n", "routes: "),
    ("routes:\n  - model: a\n    upstream: http://127.0.0.1:9/v1\n    api_key_env: "
     "NO_SUCH_VAR_GW\n", "routes[0].api_key_env: "),
    ("routes: [\n", "not valid YAML"),
    ("!!python/object/apply:os.system ['echo pwned']\n", "not valid YAML"),
])
def test_a_bad_config_is_one_line_exit_2(text: str, where: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UTILITYGUARD_UPSTREAM", raising=False)
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    assert main(["serve", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"utilityguard: error: {cfg}: ") and where in err, err
    assert err.count("\n") == 1
