"""The guard package's public names: ``__all__`` is sorted, complete, importable, and lists
every type the public API's signatures use; the error tree lives in one module; a light
import stays light."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import guard
import guard.confidence
import guard.policy.artifact  # the names Guard.from_policy's hints refer to
import utilityguard_base.exceptions

#: The distribution's packages: a type defined in one of them is the distribution's own.
OWN = ("guard", "policies", "cost_models", "utilityguard_base", "benchmarks")
#: What a user calls: the guard, the decorator and the functions of ``__all__``.
ENTRY_POINTS = ("Guard", "guarded", "last_decision", "is_refusal", "raw_probability")
#: The errors the entry points raise on purpose (their docstrings say when).
RAISED = ("UtilityGuardError", "InvalidValueError", "ConfigError", "ConfidenceError",
          "CalibrationError", "ArtifactError")
#: The errors only the proxy raises: in ``guard.exceptions``, not in ``guard.__all__``.
PROXY_ONLY = ("AuthenticationError", "ClientDisconnected", "ClientRequestError",
              "InvalidRequestError", "PayloadTooLargeError", "PermissionDeniedError",
              "UpstreamPoolExhausted", "UpstreamTooLarge")


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions and modules."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


PACKAGES = [pytest.param(guard, id="guard"), pytest.param(guard.confidence, id="confidence")]


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted(package: ModuleType) -> None:
    assert package.__all__ == sorted(package.__all__, key=_isort_key)
    assert len(set(package.__all__)) == len(package.__all__)


def test_every_public_name_of_guard_loads_and_is_listed() -> None:
    for name in guard.__all__:
        assert getattr(guard, name) is not None, name
    assert set(guard.__all__) <= set(dir(guard))
    loaded = {name for name, value in vars(guard).items()
              if not name.startswith("_") and not isinstance(value, ModuleType)}
    assert loaded <= set(guard.__all__) | set(PROXY_ONLY) | {
        "brier", "cross_val_probability", "ece", "consistency"}


def test_confidence_all_is_complete_and_importable() -> None:
    package = guard.confidence
    public = {name for name, value in vars(package).items()
              if not name.startswith("_") and not isinstance(value, ModuleType)}
    assert set(package.__all__) == public
    for name in package.__all__:
        assert getattr(package, name) is not None


def _members(obj: Any) -> Iterator[Callable[..., Any]]:
    """``obj`` itself, or a class's constructor, its public methods and property getters
    (those the distribution defines)."""
    if not inspect.isclass(obj):
        yield obj
        return
    for klass in obj.__mro__:
        if not klass.__module__.startswith(OWN):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") and name != "__init__":
                continue
            if isinstance(member, property) and member.fget is not None:
                yield member.fget
            elif isinstance(member, (classmethod, staticmethod)):
                yield member.__func__
            elif inspect.isfunction(member):
                yield member


def _own_types(hint: Any) -> Iterator[type]:
    """The distribution's public classes a type hint names (through unions and generics; a
    private one, such as the type of the sentinel ``USE_DEFAULT``, is no API)."""
    if isinstance(hint, type) and hint.__module__.startswith(OWN) and \
            not hint.__name__.startswith("_"):
        yield hint
    for arg in typing.get_args(hint):
        yield from _own_types(arg)


def _namespace() -> dict[str, Any]:
    """Every class of the distribution's loaded modules, by name: what annotations written
    under ``TYPE_CHECKING`` refer to."""
    out: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith(OWN) and module is not None:
            out.update({k: v for k, v in vars(module).items() if isinstance(v, type)})
    return out


def test_all_lists_every_type_the_public_signatures_use() -> None:
    """The types a user passes to or gets from the entry points are importable from
    ``guard`` (issue 37: ``Price``, ``DecisionConfig`` were not)."""
    names = _namespace()
    used: dict[str, set[str]] = {}
    for entry in ENTRY_POINTS:
        for member in _members(getattr(guard, entry)):
            hints = typing.get_type_hints(member, localns=names)
            for hint in hints.values():
                for t in _own_types(hint):
                    used.setdefault(t.__name__, set()).add(f"{entry}: {member.__qualname__}")
    missing = {name: sorted(where) for name, where in used.items()
               if name not in guard.__all__ or getattr(guard, name) is not names[name]}
    assert not missing, missing
    assert {"Price", "DecisionConfig", "DecisionRecord", "Confidence", "Policy"} <= set(used)


def test_all_lists_the_errors_the_api_raises_and_leaves_the_proxys_out() -> None:
    assert set(RAISED) <= set(guard.__all__)
    assert not set(PROXY_ONLY) & set(guard.__all__)
    for name in PROXY_ONLY:  # still where they were
        assert getattr(guard, name) is getattr(guard.exceptions, name)


def test_exceptions_hierarchy() -> None:
    exc = guard.exceptions
    for name in exc.__all__:
        assert issubclass(getattr(exc, name), exc.UtilityGuardError)
    for name in ("ConfigError", "ConfidenceError", "CalibrationError"):
        assert issubclass(getattr(exc, name), ValueError)
    for name in ("UpstreamTimeout", "UpstreamUnavailable", "UpstreamStatusError"):
        assert issubclass(getattr(exc, name), exc.UpstreamError)
    err = exc.UpstreamStatusError(503, "overloaded")
    assert (err.status, err.body, str(err)) == (503, "overloaded", "upstream answered HTTP 503: "
                                                "overloaded")
    tree = utilityguard_base.exceptions.__doc__ or ""
    for name in exc.__all__:  # the tree is drawn once, at the root
        assert name in tree, f"{name} is missing from the tree"


def test_pytest_collects_the_examples_of_every_package(pytestconfig: pytest.Config) -> None:
    """One doctest runner: pytest's ``--doctest-modules`` over ``testpaths``, which names the
    five packages, so every module's examples run (no hand-kept list of modules)."""
    assert "--doctest-modules" in pytestconfig.getini("addopts")
    paths = {Path(str(p)).name for p in pytestconfig.getini("testpaths")}
    assert {"utilityguard_base", "policies", "cost_models", "guard", "benchmarks"} <= paths


def test_import_guard_loads_no_heavy_library() -> None:
    """A decorator user pays for numpy and pydantic, not for scikit-learn / scipy."""
    code = ("import sys, guard; guard.Guard; guard.Calibrator; "
            "print(sorted(m for m in ('sklearn', 'scipy', 'joblib', 'matplotlib', 'fastapi') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def _loaded_after(statement: str, candidates: tuple[str, ...]) -> list[str]:
    code = (f"import sys; {statement}; "
            f"print(' '.join(sorted(m for m in {candidates!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return out.split()


LIBRARIES = ("httpx", "click", "rich", "pygments", "fastapi", "starlette", "sklearn",
             "prometheus_client")


@pytest.mark.parametrize("statement", [
    pytest.param("import guard", id="guard"),
    pytest.param("import guard; guard.Guard; guard.Calibrator; guard.exceptions.UpstreamError",
                 id="guard-names"),
    pytest.param("import guard.proxy", id="guard.proxy"),
    pytest.param("import guard.exceptions, policies, cost_models", id="exceptions"),
])
def test_a_light_import_loads_no_client_cli_or_server_library(statement: str) -> None:
    assert _loaded_after(statement, LIBRARIES) == []


@pytest.mark.parametrize("statement", [
    pytest.param("import guard.exceptions", id="guard.exceptions"),
    pytest.param("import guard", id="guard"),
    pytest.param("from guard.exceptions import ConfigError, UpstreamError", id="errors"),
    pytest.param("import utilityguard_base.exceptions, utilityguard_base.checks", id="base"),
])
def test_the_errors_load_neither_numpy_nor_pydantic(statement: str) -> None:
    """Issue 37: ``import guard.exceptions`` loaded numpy and pydantic (1.1 s)."""
    assert _loaded_after(statement, ("numpy", "pydantic", "pydantic_core")) == []


def test_the_proxy_metrics_leave_prometheus_settings_alone() -> None:
    code = ("import prometheus_client.metrics as m; import guard.proxy.metrics as pm; "
            "r = pm.ProxyMetrics(); r.requests.inc('models', '200'); text = r.render(); "
            "print(m._use_created, '_created' in text, 'utilityguard_requests_total' in text)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "False", "True"]


def test_every_error_class_lives_in_the_one_exceptions_module() -> None:
    base = utilityguard_base.exceptions
    for name in guard.exceptions.__all__:
        assert getattr(guard.exceptions, name).__module__ == "utilityguard_base.exceptions", name
    defined = sorted(
        name for name, value in vars(base).items()
        if isinstance(value, type) and issubclass(value, BaseException)
        and value.__module__ == "utilityguard_base.exceptions")
    assert defined == sorted(base.__all__) == sorted(guard.exceptions.__all__)
