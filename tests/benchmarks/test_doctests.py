"""Run the examples in the benchmarks docstrings (pytest's --doctest-modules covers tests/ and
policies/ only)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "benchmarks.utility_auc",
    "benchmarks.table",
    "benchmarks.selective",
    "benchmarks.riskeval",
    "benchmarks.examples",
    "benchmarks.grading.numbers",
    "benchmarks.grading.premise",
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
