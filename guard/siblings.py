"""utilityguard's top-level packages have generic names — ``guard``, ``policies``,
``cost_models``, ``benchmarks`` — and a file or folder of the same name that Python finds
first (a ``policies.py`` next to the user's script: the script's directory comes first on
``sys.path``) shadows one of them. Python then says only ``No module named
'policies.decision'; 'policies' is not a package``. :func:`check` turns that into an error
that names the file, says why it is found and how to avoid it. Importing this module checks
the packages ``guard`` depends on (:data:`GUARD_NEEDS`; ``guard/__init__.py`` imports it
before anything else), and the command line checks the package of a command that does not
import.

Standard library only: it runs before anything else of utilityguard is imported.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

#: utilityguard's top-level packages, installed side by side.
PACKAGES = ("guard", "policies", "cost_models", "benchmarks", "utilityguard_base")
#: The directory that holds them (this file is ``<root>/guard/siblings.py``).
ROOT = Path(__file__).resolve().parent.parent


class ShadowedPackageError(ImportError):
    """A file or folder of the user's is found instead of one of utilityguard's packages."""


def shadowing(name: str) -> str | None:
    """The file or folder Python imports as ``name`` instead of utilityguard's package of
    that name (found earlier on ``sys.path``, or imported already); ``None`` when ``name`` is
    utilityguard's own or cannot be found at all (the usual ImportError then says so)."""
    own = (ROOT / name).resolve()
    module = sys.modules.get(name)
    if module is not None:
        origin = getattr(module, "__file__", None)
        locations = list(getattr(module, "__path__", None) or [])
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        origin, locations = spec.origin, list(spec.submodule_search_locations or [])
    if origin not in (None, "namespace") and Path(origin).resolve().parent == own:
        return None
    if any(Path(p).resolve() == own for p in locations):
        return None
    return str(origin) if origin not in (None, "namespace") else (
        str(locations[0]) if locations else name)


def message(name: str, found: str) -> str:
    """Why ``import name`` gets ``found`` instead of utilityguard's package, and what to do."""
    return (f"utilityguard's package {name!r} is shadowed by {found}: Python finds that "
            f"{'folder' if Path(found).is_dir() else 'file'} first (the running script's "
            f"directory, the current directory or PYTHONPATH come before the installed "
            f"packages), so utilityguard cannot import its own {name!r}. Rename it (or run "
            f"from another directory). utilityguard's top-level packages are "
            f"{', '.join(PACKAGES)}: no module of yours may have these names.")


def check(*names: str) -> None:
    """Raise :class:`ShadowedPackageError` naming the first of ``names`` that is shadowed."""
    for name in names:
        found = shadowing(name)
        if found is not None:
            raise ShadowedPackageError(message(name, found), name=name, path=found)


#: What ``guard`` imports before anything else of its own: checked when ``guard`` is
#: imported (its ``__init__`` imports this module first).
GUARD_NEEDS = ("utilityguard_base", "policies", "cost_models")
check(*GUARD_NEEDS)
