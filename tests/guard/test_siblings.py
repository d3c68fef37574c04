"""A user's module named like one of utilityguard's top-level packages (issue 38): a
``policies.py`` next to the user's script made ``from guard import Guard`` fail with
``'policies' is not a package``; the error now names the file and says what to do. Reproduced
as a user meets it: a script in a fresh directory, run by a new Python process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT

SCRIPT = "from guard import Guard\nprint('imported', Guard.__name__)\n"


def _run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # utilityguard as installed, after the script
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.parametrize("shadow", ["policies.py", "cost_models.py", "policies/__init__.py"])
def test_a_shadowing_module_is_named_with_what_to_do(shadow: str, tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(SCRIPT)
    path = tmp_path / shadow
    path.parent.mkdir(exist_ok=True)
    path.write_text("RULES = ['be nice']\n")
    done = _run(tmp_path, "script.py")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    name = shadow.split("/")[0].removesuffix(".py")
    found = tmp_path / (shadow if shadow.endswith(".py") and "/" not in shadow else name)
    assert last.startswith("guard.siblings.ShadowedPackageError: utilityguard's package "
                           f"{name!r} is shadowed by ")
    assert str(found.resolve()) in last or str(found) in last
    assert "Rename it (or run from another directory)" in last
    assert "is not a package" not in done.stderr


def test_without_a_shadowing_module_the_import_works(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "policies_of_mine.py").write_text("x = 1\n")
    done = _run(tmp_path, "script.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "imported Guard\n"


def test_a_command_whose_package_is_shadowed_says_so(tmp_path: Path) -> None:
    (tmp_path / "benchmarks.py").write_text("x = 1\n")
    done = _run(tmp_path, "-m", "guard.cli", "bench")
    assert done.returncode == 2
    assert done.stderr.startswith("utilityguard: error: command 'bench' is unavailable: "
                                  "utilityguard's package 'benchmarks' is shadowed by ")
    assert str(tmp_path / "benchmarks.py") in done.stderr
