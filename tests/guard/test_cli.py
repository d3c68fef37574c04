"""The ``utilityguard`` root: one exception root turned into one line, usage errors with a
"did you mean", ``--version``; any other exception is a bug and is not hidden."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import guard.cli as cli
from guard import exceptions
from guard.cli import main
from guard.exceptions import (
    ArtifactError,
    BenchError,
    CLIError,
    CollectError,
    DatasetError,
    JudgeError,
)
from utilityguard_base.exceptions import InvalidValueError, UtilityGuardError

VALUE_ERRORS = [exceptions.ConfigError, exceptions.ConfidenceError, exceptions.CalibrationError,
                ArtifactError, DatasetError, BenchError]
OTHER_ERRORS = [CLIError, JudgeError, CollectError, exceptions.UpstreamError,
                exceptions.ClientRequestError]


@pytest.mark.parametrize("cls", VALUE_ERRORS + OTHER_ERRORS, ids=lambda c: c.__name__)
def test_every_error_class_has_the_one_root(cls: type[Exception]) -> None:
    assert issubclass(cls, UtilityGuardError)


@pytest.mark.parametrize("cls", VALUE_ERRORS, ids=lambda c: c.__name__)
def test_value_errors_are_invalid_values_and_value_errors(cls: type[Exception]) -> None:
    assert issubclass(cls, InvalidValueError) and issubclass(cls, ValueError)


def test_the_root_docstring_draws_every_error_class() -> None:
    import utilityguard_base.exceptions as root

    assert root.__doc__ is not None
    for cls in [*VALUE_ERRORS, *OTHER_ERRORS, InvalidValueError]:
        assert cls.__name__ in root.__doc__


def _with_command(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    """Make ``utilityguard metric`` raise ``exc``."""
    real = cli.build_parser

    def build(argv: object = None) -> argparse.ArgumentParser:
        parser = real(["metric"])

        def boom(_args: argparse.Namespace) -> int:
            raise exc

        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                action.choices["metric"].set_defaults(func=boom)
        return parser

    monkeypatch.setattr(cli, "build_parser", build)


@pytest.mark.parametrize("exc", [DatasetError("items.jsonl: line 3 is not JSON"),
                                 JudgeError("items.jsonl: line 3 is not JSON"),
                                 FileNotFoundError("items.jsonl: line 3 is not JSON")],
                         ids=["value-error", "runtime-error", "os-error"])
def test_a_rooted_error_is_one_line_and_exit_2(exc: Exception, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _with_command(monkeypatch, exc)
    assert main(["metric", "x.jsonl"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "utilityguard: error: items.jsonl: line 3 is not JSON\n"


def test_any_other_exception_is_a_bug_and_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_command(monkeypatch, ValueError("an unexpected internal state"))
    with pytest.raises(ValueError, match="unexpected internal state"):
        main(["metric", "x.jsonl"])


def test_version() -> None:
    out = subprocess.run([sys.executable, "-m", "guard.cli", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out == f"utilityguard {version('utilityguard')}\n"


@pytest.mark.parametrize("argv, expected", [
    (["serv"], "'serv': did you mean 'serve'? (see 'utilityguard --help')"),
    (["serve", "--c_r", "2"],
     "serve: unrecognized arguments: --c_r 2; '--c_r': did you mean '--c-r'? "
     "(see 'utilityguard serve --help')"),
    (["serve", "--mode", "enforc"],
     "'enforc': did you mean 'enforce'? (see 'utilityguard serve --help')"),
    (["cost", "trian"], "'trian': did you mean 'train'? (see 'utilityguard cost --help')"),
    (["cost", "train", "--dta", "x.jsonl", "--out", "m"],
     "'--dta': did you mean '--data'? (see 'utilityguard cost train --help')"),
    (["metric", "x.jsonl", "--zzzzzz"],
     "unrecognized arguments: --zzzzzz (see 'utilityguard metric --help')"),
])
def test_usage_errors_are_one_line_with_a_suggestion(argv: list[str], expected: str,
                                                     capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: ") and err.count("\n") == 1
    assert err.rstrip("\n").endswith(expected)


def test_help_loads_no_heavy_library() -> None:
    """``utilityguard --help`` imports every command's parser, none of their heavy work."""
    code = ("import sys; from guard.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('sklearn', 'scipy', 'matplotlib') if m in sys.modules),"
            " file=sys.stderr)")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stderr
    assert err.strip() == "[]"


def _instance(name: str) -> Exception:
    cls = getattr(exceptions, name)
    if cls is exceptions.UpstreamStatusError:
        return cls(503, "items.jsonl: line 3 is not JSON")
    return cls("items.jsonl: line 3 is not JSON")  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", exceptions.__all__)
def test_every_error_in_the_tree_is_one_line_and_exit_2(
        name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _with_command(monkeypatch, _instance(name))
    assert main(["metric", "x.jsonl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: ") and err.count("\n") == 1
    assert "items.jsonl: line 3 is not JSON" in err


def test_fit_from_an_audit_log_without_labels_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The feedback reader's error (once a plain ValueError, a traceback) is in the tree."""
    not_a_log = tmp_path / "audit.db"
    not_a_log.write_text("not a database\n")
    assert main(["fit", "--from-audit", str(not_a_log), "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("utilityguard: error: no labelled decisions") and err.count("\n") == 1
