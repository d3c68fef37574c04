"""No import cycle among the modules of the distribution's packages.

The graph is built from the source with :mod:`ast`: every ``import`` and ``from ... import``
of a module is an edge, wherever it stands — at the top, inside a function (a deferred import
is still a dependency) or under ``if TYPE_CHECKING:`` (a type is one too). ``from a import b``
is an edge to ``a.b`` when that is a module, else to ``a``; importing ``a.b`` is not counted
as an edge to ``a``'s ``__init__`` (every module would then depend on its package).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("foundation", "policies", "cost_models", "guard", "benchmarks")


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Module name -> source file, for every ``.py`` file of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports, anywhere in it."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
    return {m for m in out if m in known and m != name}


def graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    found = modules(root, packages)
    return {name: imported(name, path, set(found)) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each
    sorted; a self-import does not count."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    edges = graph(ROOT, PACKAGES)
    loops = cycles(edges)
    shown = [" <-> ".join(c) + ": " + "; ".join(
        f"{a} -> {b}" for a in c for b in sorted(edges[a] & set(c))) for c in loops]
    assert not loops, "\n".join(shown)


def test_the_graph_sees_every_kind_of_import() -> None:
    """Top-level, deferred and type-only imports are all edges (else the test above could
    pass on a graph that misses them)."""
    edges = graph(ROOT, PACKAGES)
    assert "guard.delivery" in edges["guard.core"]  # top level
    assert "guard.policy.artifact" in edges["guard.default_policy"]  # inside a function
    assert "guard.proxy.state" in edges["guard.proxy.exchange"]  # under TYPE_CHECKING
    assert "guard.proxy.audit.schema" in edges["guard.proxy.audit.store"]


@pytest.mark.parametrize("second", [
    pytest.param("from a import one\n", id="top-level"),
    pytest.param("def f():\n    from a.one import x\n", id="deferred"),
    pytest.param("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import one\n",
                 id="type-only"),
])
def test_a_cycle_is_found(tmp_path: Path, second: str) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "__init__.py").write_text("")
    (tmp_path / "a" / "one.py").write_text("import a.two\nx = 1\n")
    (tmp_path / "a" / "two.py").write_text(second)
    assert cycles(graph(tmp_path, ["a"])) == [["a.one", "a.two"]]
