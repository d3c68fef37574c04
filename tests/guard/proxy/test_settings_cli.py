"""Settings (env, .env, flags), ``utilityguard serve`` end to end, and the public names."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import ValidationError

import guard.proxy
from guard.cli import build_parser, main
from guard.cli_serve import load_settings
from guard.settings import Settings


def test_settings_sources_and_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("UTILITYGUARD_MODE=shadow\nUTILITYGUARD_C_R=3\n"
                                   "UTILITYGUARD_UPSTREAM=http://from-dotenv/v1\n")
    monkeypatch.setenv("UTILITYGUARD_C_R", "5")
    monkeypatch.setenv("UTILITYGUARD_API_KEYS", '["k1", "k2"]')
    monkeypatch.setenv("UTILITYGUARD_NO_CONFIDENCE", "0.25")
    monkeypatch.setenv("UTILITYGUARD_AUDIT_PATH", "")
    s = Settings(port=9000)
    assert (s.mode, s.c_r, s.upstream, s.port) == ("shadow", 5.0, "http://from-dotenv/v1", 9000)
    assert [k.get_secret_value() for k in s.api_keys] == ["k1", "k2"]
    assert (s.no_confidence, s.audit_path) == (0.25, None)
    assert "k1" not in repr(s) and "k1" not in str(s)
    monkeypatch.delenv("UTILITYGUARD_API_KEYS")
    monkeypatch.setenv("UTILITYGUARD_API_KEY", "single")
    monkeypatch.setenv("UTILITYGUARD_TIMEOUT", "3")
    s = Settings()
    assert ([k.get_secret_value() for k in s.api_keys], s.read_timeout) == (["single"], 3.0)


@pytest.mark.parametrize("values, match", [
    pytest.param({"upstream": "ftp://x"}, "http:// or https://", id="upstream-scheme"),
    pytest.param({"c_r": -1}, "c_r must be a finite number >= 0", id="negative-c_r"),
    pytest.param({"confidence": "vibes"}, "logprobs", id="confidence-kind"),
    pytest.param({"no_confidence": "maybe"}, "refuse", id="no-confidence"),
    pytest.param({"api_keys": "a,,"}, None, id="keys-ok"),
])
def test_settings_validation(values: dict[str, Any], match: str | None) -> None:
    if match is None:
        assert len(Settings(_env_file=None, **values).api_keys) == 1
        return
    with pytest.raises(ValidationError, match=match):
        Settings(_env_file=None, **values)


def test_serve_flags_override_environment(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("UTILITYGUARD_UPSTREAM", "http://env/v1")
    monkeypatch.setenv("UTILITYGUARD_C_R", "7")
    monkeypatch.setenv("UTILITYGUARD_MODE", "shadow")
    monkeypatch.setenv("UTILITYGUARD_API_KEYS", "env-key")
    argv = ["serve", "--c-r", "1.5", "--confidence", "verbal", "--audit-queries",
            "--api-key", "k1", "--api-key", "k2", "--timeout", "9", "--max-body-size", "99"]
    s = load_settings(build_parser(argv).parse_args(argv))
    assert (s.upstream, s.c_r, s.mode, s.confidence, s.audit_queries) == (
        "http://env/v1", 1.5, "shadow", "verbal", True)
    assert [k.get_secret_value() for k in s.api_keys] == ["k1", "k2"]
    assert (s.read_timeout, s.max_body_bytes) == (9.0, 99)


@pytest.mark.parametrize("argv, message", [
    pytest.param(["serve"], "no upstream", id="no-upstream"),
    pytest.param(["serve", "--upstream", "http://u/v1", "--c-r", "-2"], "c_r",
                 id="bad-c_r"),
    pytest.param(["audit"], "audit needs an action", id="audit-no-action"),
])
def test_cli_user_errors(argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch,
                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("UTILITYGUARD_UPSTREAM", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "env", "expected"), [
    pytest.param(["--upstream", "not-a-url"], {},
                 "invalid setting --upstream (UTILITYGUARD_UPSTREAM): upstream must be an "
                 "http:// or https:// URL; got 'not-a-url'", id="upstream-not-a-url"),
    pytest.param(["--upstream", "http://u/v1"], {"UTILITYGUARD_PORT": "eighty"},
                 "invalid setting --port (UTILITYGUARD_PORT): Input should be a valid "
                 "integer, unable to parse string as an integer, got 'eighty'",
                 id="port-from-the-environment"),
    pytest.param(["--upstream", "http://u/v1", "--trusted-prompts", "sha256:abc"], {},
                 "invalid setting --trusted-prompts (UTILITYGUARD_TRUSTED_PROMPTS): a trusted "
                 "prompt given as 'sha256:' needs 64 hex digits", id="trusted-prompt-hash"),
    pytest.param(["--upstream", "http://u/v1", "--trusted-tools", "tools.json"], {},
                 "invalid setting --trusted-tools (UTILITYGUARD_TRUSTED_TOOLS): tools.json: "
                 "cannot read the trusted tools: No such file or directory",
                 id="trusted-tools-missing"),
])
def test_settings_errors_are_in_the_projects_words(
        argv: list[str], env: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: 'serve --upstream not-a-url' said "invalid settings: upstream: Value error,
    # upstream must be ..." (pydantic's wording); the flag and its variable are named instead
    monkeypatch.chdir(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err == f"utilityguard: error: {expected}\n"
    assert "Value error" not in err


@pytest.mark.parametrize("flags", [
    pytest.param(["--policy", "no-such-policy"], id="policy"),
    pytest.param(["--config", "missing.yaml"], id="config"),
])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_validates_before_it_says_it_listens(
        flags: list[str], workers: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: "listening on ..." was logged before the policy or config was loaded, then
    # serve exited 2
    monkeypatch.chdir(tmp_path)
    upstream = [] if "--config" in flags else ["--upstream", "http://127.0.0.1:9/v1"]
    caplog.set_level("INFO", logger="guard")
    assert main(["serve", *upstream, *flags, "--port", "0", "--workers", workers]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: ") and err.count("\n") == 1
    assert "listening" not in caplog.text and "listening" not in err


def test_serve_command_end_to_end(upstream: Any, tmp_path: Path, serve_process: Any) -> None:
    """``utilityguard serve`` as a process (shipped cost model), stopped by SIGTERM."""
    db = tmp_path / "audit.db"
    env = {**os.environ, "UTILITYGUARD_AUDIT_PATH": str(db), "UTILITYGUARD_C_R": "2"}
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--log-level", "warning"],
                           env=env, timeout=30)
    with openai.OpenAI(base_url=served.url + "/v1", api_key="k", max_retries=0,
                       timeout=10) as c:
        raw = c.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "What is 6 x 7? sure"}])
    assert raw.headers["x-utilityguard-decision"] in ("answer", "refuse")
    assert float(raw.headers["x-utilityguard-cost"]) > 0
    output = served.stop(timeout=30)
    assert served.proc.returncode in (0, -signal.SIGTERM), output  # uvicorn re-raises it
    assert "Traceback" not in output
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT cost_source FROM decisions").fetchall() == [("model",)]
    conn.close()


def test_proxy_all_is_sorted_and_complete() -> None:
    names = guard.proxy.__all__
    assert names == sorted(names, key=lambda n: (0 if n[0].isupper() else 1, n))
    for name in names:  # the names load on first use (guard.proxy imports lightly)
        getattr(guard.proxy, name)
    public = {n for n, v in vars(guard.proxy).items()
              if not n.startswith("_") and not isinstance(v, type(guard))}
    assert set(names) == public


def test_every_settings_field_is_a_serve_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """The flags are generated from the model: each field has ``--<field-name>`` and names
    its environment variable in the help."""
    with pytest.raises(SystemExit):
        build_parser(["serve"]).parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in Settings.model_fields:
        assert "--" + name.replace("_", "-") in text
        assert "UTILITYGUARD_" + name.upper() in text.replace("- ", "-")
    for spelling in ("--trust", "--api-key", "--timeout", "--max-body-size"):
        assert spelling in text


def test_worker_config_carries_the_settings_not_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The uvicorn config of ``--workers N`` pickles (spawned workers receive it) and rebuilds
    the flags' settings; the environment is left as it was."""
    import pickle

    from guard.cli_serve import worker_config

    argv = ["serve", "--upstream", "http://127.0.0.1:9/v1", "--c-r", "3.5", "--mode", "shadow",
            "--audit-queries", "--read-timeout", "7", "--api-key", "sekrit"]
    before = dict(os.environ)
    settings = load_settings(build_parser(argv).parse_args(argv))
    config = pickle.loads(pickle.dumps(worker_config(settings, 2, port=0)))
    got = config.app.args[0]
    assert (got.c_r, got.mode, got.audit_queries, got.read_timeout) == (3.5, "shadow", True, 7.0)
    assert [k.get_secret_value() for k in got.api_keys] == ["sekrit"]
    assert config.factory and config.workers == 2
    assert dict(os.environ) == before


def test_serve_with_two_workers(upstream: Any, serve_process: Any) -> None:
    """``serve --workers 2``: worker processes build the app from the flags (``--c-r 3.5``
    shows in every threshold: ``(L - 3.5) / (1 + L)``), and answer."""
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--log-level", "warning",
                            "--workers", "2", "--c-r", "3.5"], timeout=60)
    with openai.OpenAI(base_url=served.url + "/v1", api_key="k", max_retries=0,
                       timeout=10) as c:
        for _ in range(4):
            raw = c.chat.completions.with_raw_response.create(
                model="m", messages=[{"role": "user", "content": "What is 6 x 7? sure"}])
            assert raw.headers["x-utilityguard-decision"] in ("answer", "refuse")
            cost = float(raw.headers["x-utilityguard-cost"])
            assert float(raw.headers["x-utilityguard-threshold"]) == pytest.approx(
                (cost - 3.5) / (1 + cost), abs=1e-3)
    assert "Traceback" not in served.stop()


def test_a_port_in_use_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == (f"utilityguard: error: cannot listen on 127.0.0.1:{port}: the port is "
                   "already in use (another server runs there: stop it or pass --port)\n")


def test_serve_help_names_every_endpoint_and_where_the_decision_is(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser(["serve"]).parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for endpoint in ("/v1/chat/completions", "/v1/responses", "/v1/feedback", "/admin/reload",
                     "/readyz", "/healthz", "/metrics", "/v1/models",
                     "/v1/decisions/{request_id}", "--config"):
        assert endpoint in text, endpoint
    assert "in the body" in text and "last chunk" in text and "headers" in text
