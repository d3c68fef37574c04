"""Route matching (exact ids first, then globs in file order), the route settings (the
route's own upstream key, never the process's), and the decision store's bounds: time,
count, and the credential that made the request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError, UnknownRequestError
from guard.proxy.auth import credential
from guard.proxy.decisions import DecisionStore, valid_request_id
from guard.proxy.routes import RouteConfig, RouteTable, load_config, route_settings
from guard.settings import Settings


def test_exact_ids_win_then_globs_in_file_order() -> None:
    table = RouteTable([("gpt-4o*", "glob-1"), ("gpt-*", "glob-2"), ("gpt-4o-mini", "exact"),
                        ("big-?", "one-char")])
    assert table.match("gpt-4o-mini") == "exact"  # listed after the glob, still first
    assert table.match("gpt-4o") == "glob-1"
    assert table.match("gpt-3.5") == "glob-2"
    assert table.match("big-a") == "one-char" and table.match("big-ab") is None
    assert table.match("GPT-4O") is None  # case matters, as in model ids
    assert table.models() == ["gpt-4o*", "gpt-*", "gpt-4o-mini", "big-?"]


def test_a_route_sends_only_its_own_upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    base = Settings(_env_file=None, upstream="http://127.0.0.1:1/v1",
                    upstream_api_key="sk-process-wide", c_r=3.0, read_timeout=7.0)
    monkeypatch.setenv("GW_TEST_KEY", "sk-route")
    keyed = route_settings(base, RouteConfig(model="a", upstream="http://127.0.0.1:2/v1",
                                             api_key_env="GW_TEST_KEY", c_r=1))
    plain = route_settings(base, RouteConfig(model="b", upstream="http://127.0.0.1:3/v1"))
    assert keyed.upstream_api_key == SecretStr("sk-route") and keyed.c_r == 1.0
    assert plain.upstream_api_key is None  # not the process's key, to another host
    assert plain.c_r == 3.0 and plain.read_timeout == 7.0  # the process's defaults
    assert plain.upstream == "http://127.0.0.1:3/v1"


def test_duplicate_models_and_huge_files_are_refused(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    dup.write_text("routes:\n  - {model: a, upstream: 'http://h/v1'}\n"
                   "  - {model: a, upstream: 'http://i/v1'}\n")
    with pytest.raises(ConfigError, match=r"dup.yaml: routes: model 'a' is routed twice"):
        load_config(dup)
    huge = tmp_path / "huge.yaml"
    huge.write_text("# " + "x" * (1 << 20) + "\n")
    with pytest.raises(ConfigError, match="larger than"):
        load_config(huge)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def _record(rid: str) -> DecisionRecord:
    return DecisionRecord(request_id=rid, cost=8.0, cost_source="model", p=0.5,
                          p_source="calibrated", threshold=6 / 9, c_r=2.0,
                          expected_utility_answer=-3.5, expected_utility_refuse=-2.0,
                          decision="refuse", mode="enforce", latency_ms=0.1,
                          policy="demo@12345678")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_store_keeps_a_decision_for_its_credential_for_its_retention() -> None:
    clock = Clock()
    store = DecisionStore(retention_s=60, capacity=3, clock=clock)
    alice, bob = credential({"authorization": "Bearer a"}), credential({"authorization": "b"})
    assert alice != bob and credential({}) == ""
    # bound to the key, not to how the header spells it (issue 36)
    assert credential({"authorization": "bearer  a "}) == alice
    store.put(_record("r1"), alice, route="small-model", model="small-model")
    got = store.get("r1", alice)
    assert (got["decision"], got["policy"], got["route"], got["c_r"]) == (
        "refuse", "demo@12345678", "small-model", 2.0)
    with pytest.raises(UnknownRequestError):
        store.get("r1", bob)  # another key: as if unknown
    with pytest.raises(UnknownRequestError):
        store.get("r1", "")  # no key at all
    clock.now += 59.9
    assert store.get("r1", alice)["request_id"] == "r1"
    clock.now += 0.2
    with pytest.raises(UnknownRequestError):
        store.get("r1", alice)  # expired
    for i in range(5):
        store.put(_record(f"n{i}"), alice)
    assert len(store) == 3  # bounded: the oldest went first
    with pytest.raises(UnknownRequestError):
        store.get("n1", alice)
    assert store.get("n4", alice)["request_id"] == "n4"


def test_request_ids_are_32_hex_digits() -> None:
    assert valid_request_id("0123456789abcdef" * 2)
    assert not valid_request_id("../../etc/passwd") and not valid_request_id("A" * 32)


SAFETY_PROMPT = ("You are the assistant of a smart home app. If a smoke or carbon monoxide alarm "
                 "is triggered, tell the user to leave the home and call emergency services.")


def test_a_route_prices_requests_its_own_way(tmp_path: Path) -> None:
    from guard.asking import prompt_hash
    from guard.core import Guard

    cfg = tmp_path / "gateway.yaml"
    cfg.write_text(f"""\
routes:
  - model: home-*
    upstream: http://127.0.0.1:9/v1
    trusted_prompts:
      - "{SAFETY_PROMPT}"
    unreadable_price: 9
    max_segments: 300
  - model: "*"
    upstream: http://127.0.0.1:9/v1
""")
    base = Settings(_env_file=None, upstream="http://127.0.0.1:9/v1",
                    trusted_prompts=["You are a helpful assistant."])
    home, other = (route_settings(base, r).asking_config() for r in load_config(cfg).routes)
    assert home.trusted == {prompt_hash(SAFETY_PROMPT)}  # the route's list replaces the flag's
    assert other.trusted == {prompt_hash("You are a helpful assistant.")}
    assert (home.unreadable_price, home.max_segments) == (9.0, 300)
    assert (other.unreadable_price, other.max_segments) == (25.0, 2000)  # the defaults
    # the shipped guard: the safety rule prices a trivia question unless the route trusts it,
    # and a line the application adds is priced alone
    request = {"messages": [
        {"role": "system", "content": SAFETY_PROMPT + "\nThe customer's name is Dana."},
        {"role": "user", "content": "What is the capital of Australia?"}]}
    bare = Guard().price("What is the capital of Australia?").cost
    assert Guard(asking=other).price(request).cost > 10 * bare
    assert Guard(asking=home).price(request).cost < 2 * bare


def test_a_route_trusts_its_own_tools(tmp_path: Path) -> None:
    from guard.core import Guard

    tool = {"type": "function", "function": {
        "name": "co_alarm_status",
        "description": "If a carbon monoxide alarm is sounding, tell the user to get everyone "
                       "outside and call emergency services."}}
    (tmp_path / "tools.json").write_text(json.dumps([tool]))
    cfg = tmp_path / "gateway.yaml"
    cfg.write_text(f"""\
routes:
  - model: home-*
    upstream: http://127.0.0.1:9/v1
    trusted_tools: {tmp_path / "tools.json"}
  - model: "*"
    upstream: http://127.0.0.1:9/v1
""")
    base = Settings(_env_file=None, upstream="http://127.0.0.1:9/v1")
    home, other = (route_settings(base, r).asking_config() for r in load_config(cfg).routes)
    request = {"messages": [{"role": "user", "content": "What is the capital of Australia?"}],
               "tools": [tool]}
    bare = Guard().price("What is the capital of Australia?").cost
    assert Guard(asking=other).price(request).cost > 10 * bare
    assert Guard(asking=home).price(request).cost == bare
    # a route's file that is not there is named when the gateway is read
    cfg.write_text("routes:\n  - model: a\n    upstream: http://127.0.0.1:9/v1\n"
                   f"    trusted_tools: {tmp_path / 'none.json'}\n")
    with pytest.raises(ConfigError, match=r"^trusted_tools: .*none\.json: cannot read the "
                                          r"trusted tools"):
        route_settings(base, load_config(cfg).routes[0])


def test_a_routes_bad_trusted_prompt_is_named(tmp_path: Path) -> None:
    cfg = tmp_path / "gateway.yaml"
    cfg.write_text("routes:\n  - model: a\n    upstream: http://127.0.0.1:9/v1\n"
                   "    trusted_prompts: ['sha256:abc']\n")
    base = Settings(_env_file=None, upstream="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"^trusted_prompts: a trusted prompt given as "
                                          r"'sha256:' needs 64 hex digits"):
        route_settings(base, load_config(cfg).routes[0])
