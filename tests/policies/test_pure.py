"""``policies`` is decision math: numpy and the standard library's math, its errors and value
checks from the base package below it, no I/O, no command line, nothing of the packages above
it (issue 37: every error class, the ``--c-r`` option and the HTTP errors lived here)."""

from __future__ import annotations

import ast
from pathlib import Path

import policies

ALLOWED = ("__future__", "math", "typing", "collections.abc", "dataclasses", "numpy",
           "numpy.typing", "policies", "utilityguard_base.exceptions",
           "utilityguard_base.checks")
#: What would be I/O, a command line or a network client.
FORBIDDEN_CALLS = ("open", "print", "input")


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add(node.module or "")
    return out


def test_policies_imports_only_math() -> None:
    root = Path(policies.__file__).parent
    found = {p.name: _imports(p) for p in sorted(root.glob("*.py"))}
    stray = {name: sorted(m for m in mods
                          if not any(m == a or m.startswith(a + ".") for a in ALLOWED))
             for name, mods in found.items()}
    assert not any(stray.values()), stray


def test_policies_does_no_io() -> None:
    root = Path(policies.__file__).parent
    calls = {(p.name, node.func.id) for p in sorted(root.glob("*.py"))
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id in FORBIDDEN_CALLS}
    assert not calls, calls
