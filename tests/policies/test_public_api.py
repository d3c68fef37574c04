"""``policies.__all__`` is sorted and lists exactly the names the package exports."""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import policies


def _exported(pkg: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(pkg).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }


def test_all_is_sorted() -> None:
    assert policies.__all__ == sorted(policies.__all__)


def test_all_matches_the_exported_names() -> None:
    assert set(policies.__all__) == _exported(policies)
    assert len(policies.__all__) == len(set(policies.__all__))


@pytest.mark.parametrize("name", [n for n in policies.__all__ if callable(getattr(policies, n))])
def test_every_public_function_has_a_doctest(name: str) -> None:
    obj = getattr(policies, name)
    doc = inspect.getdoc(obj) or ""
    assert ">>> " in doc, f"{name} has no example in its docstring"
