"""``benchmarks.__all__`` is sorted and lists exactly the names the package exports."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

import benchmarks
import benchmarks.examples
import benchmarks.perf

METRIC_MODULES = (
    "benchmarks.utility_auc",
    "benchmarks.table",
    "benchmarks.selective",
    "benchmarks.riskeval",
)


def _exported(pkg: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(pkg).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }


@pytest.mark.parametrize(
    "pkg",
    [
        pytest.param(benchmarks, id="benchmarks"),
        pytest.param(benchmarks.perf, id="benchmarks.perf"),
        pytest.param(benchmarks.examples, id="benchmarks.examples"),
    ],
)
def test_all_is_sorted_and_matches_the_exported_names(pkg: ModuleType) -> None:
    assert pkg.__all__ == sorted(pkg.__all__)
    assert set(pkg.__all__) == _exported(pkg)


@pytest.mark.parametrize("module_name", METRIC_MODULES)
def test_package_reexports_every_public_name_of_the_metric_modules(module_name: str) -> None:
    # sys.modules, not attribute access: the function benchmarks.utility_auc shadows the
    # submodule of the same name on the package
    module = sys.modules[module_name]
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and getattr(value, "__module__", None) == module_name
        and (inspect.isfunction(value) or inspect.isclass(value))
    }
    assert public <= set(benchmarks.__all__)
    for name in public:
        assert getattr(benchmarks, name) is getattr(module, name)


@pytest.mark.parametrize("name", [n for n in benchmarks.__all__ if n[0].islower()])
def test_every_public_function_has_a_doctest(name: str) -> None:
    assert ">>> " in (inspect.getdoc(getattr(benchmarks, name)) or "")


def test_example_file_ships_and_is_valid() -> None:
    path = benchmarks.examples.EXAMPLE_FILE
    assert isinstance(path, Path)
    assert path.is_file()
    # package data pattern "data/*" of pyproject: the file must sit in a data/ directory
    assert path.parent.name == "data"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert 20 <= len(rows) <= 30
    fields = {"id", "question", "answerable", "cost", "domain", "answered", "correct",
              "confidence"}
    for row in rows:
        assert set(row) == fields
        assert row["cost"] > 0
        assert isinstance(row["confidence"]["logprob_mean"], float)
    assert len({r["id"] for r in rows}) == len(rows)


def test_example_module_says_the_records_are_made_up() -> None:
    doc = " ".join((benchmarks.examples.__doc__ or "").split())
    assert "made up for illustration" in doc
