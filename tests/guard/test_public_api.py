"""The guard package's public names: ``__all__`` is sorted, complete and importable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import guard
import guard.confidence


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions and modules."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


PACKAGES = [pytest.param(guard, id="guard"), pytest.param(guard.confidence, id="confidence")]


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_sorted(package: ModuleType) -> None:
    assert package.__all__ == sorted(package.__all__, key=_isort_key)
    assert len(set(package.__all__)) == len(package.__all__)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_complete_and_importable(package: ModuleType) -> None:
    public = {
        name for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    expected = public | ({"exceptions"} if package is guard else set())
    assert set(package.__all__) == expected
    for name in package.__all__:
        assert getattr(package, name) is not None


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
    import policies.exceptions

    for name in exc.__all__:  # the tree is drawn once, at the root
        assert name in (policies.exceptions.__doc__ or ""), f"{name} is missing from the tree"


def test_pytest_collects_the_examples_of_every_package(pytestconfig: pytest.Config) -> None:
    """One doctest runner: pytest's ``--doctest-modules`` over ``testpaths``, which names the
    four packages, so every module's examples run (no hand-kept list of modules)."""
    assert "--doctest-modules" in pytestconfig.getini("addopts")
    paths = {Path(str(p)).name for p in pytestconfig.getini("testpaths")}
    assert {"policies", "cost_models", "guard", "benchmarks"} <= paths


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


def test_the_proxy_metrics_leave_prometheus_settings_alone() -> None:
    code = ("import prometheus_client.metrics as m; import guard.proxy.metrics as pm; "
            "r = pm.ProxyMetrics(); r.requests.inc('models', '200'); text = r.render(); "
            "print(m._use_created, '_created' in text, 'utilityguard_requests_total' in text)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["True", "False", "True"]


def test_every_error_class_lives_in_the_one_exceptions_module() -> None:
    import policies.exceptions

    for name in guard.exceptions.__all__:
        assert getattr(guard.exceptions, name).__module__ == "policies.exceptions", name
    defined = sorted(
        name for name, value in vars(policies.exceptions).items()
        if isinstance(value, type) and issubclass(value, BaseException)
        and value.__module__ == "policies.exceptions")
    assert defined == sorted(policies.exceptions.__all__) == sorted(guard.exceptions.__all__)
