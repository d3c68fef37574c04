"""Saving and loading fitted estimators as data, with an integrity-checked JSON sidecar.

Artifacts are data: an estimator is saved as ``<name>.npz`` (its numeric arrays, read back
with ``allow_pickle=False``) and the sidecar ``<name>.json``, which holds its parameters
(``params``, rebuilt on load by the estimator class the *caller* names — never a class the
file names), the sha256 of the ``.npz``, the library versions it was made with and free-form
metadata (training-data hash, metrics, the command). Loading recomputes the hash and
compares the scikit-learn version, and refuses a mismatch with a clear error unless
``trust=True``. Nothing in the folder is executed.

A folder from an older utilityguard holds a pickle (``<name>.joblib``), which runs code when
loaded: it is refused with a one-line error; ``trust=True`` (``--trust``) loads it anyway,
with a warning — only for a file you made yourself.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import secrets
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from utilityguard_base.exceptions import ArtifactError, InvalidValueError

SIDECAR_VERSION = 2
log = logging.getLogger(__name__)
#: Rebuilds an estimator from its sidecar parameters and its arrays.
Rebuild = Callable[[dict[str, Any], dict[str, Any]], Any]
#: Sidecar fields written by :func:`save_artifact` itself; metadata must not override them.
RESERVED = ("artifact", "created", "params", "sha256", "sidecar_version", "versions")


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_rows(rows: Any) -> str:
    """A stable hash of JSON-serializable training rows (the training-data hash)."""
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, sort_keys=True, default=str).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def versions() -> dict[str, str]:
    import joblib
    import sklearn

    return {
        "python": platform.python_version(),
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
        "joblib": joblib.__version__,
    }


def save_artifact(
    obj: Any,
    directory: str | os.PathLike[str],
    *,
    name: str,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """Write ``<directory>/<name>.npz`` and its sidecar ``<name>.json`` (``obj.to_data()``:
    parameters and arrays); return the sidecar."""
    clash = sorted(set(metadata or {}) & set(RESERVED))
    if clash:
        raise InvalidValueError(
            f"metadata must not set {', '.join(clash)}: save_artifact writes them")
    params, arrays = obj.to_data()
    if any(np.asarray(v).dtype == object for v in arrays.values()):
        raise InvalidValueError("an artifact's arrays must be numeric or strings, not objects")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    target = d / f"{name}.npz"
    # write next to the target, then rename (atomic)
    tmp_path = d / f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp.npz"
    try:
        with open(tmp_path, "wb") as f:
            np.savez_compressed(f, **arrays)
        tmp_path.replace(target)
    finally:
        tmp_path.unlink(missing_ok=True)
    (d / f"{name}.joblib").unlink(missing_ok=True)  # an older pickle would contradict it
    sidecar = {
        "sidecar_version": SIDECAR_VERSION,
        "artifact": target.name,
        "sha256": sha256_file(target),
        "versions": versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "params": params,
        **(metadata or {}),
    }
    side = d / f"{name}.json"
    side.write_text(json.dumps(sidecar, indent=2, sort_keys=False, default=str) + "\n")
    return side


def read_sidecar(directory: str | os.PathLike[str], *, name: str) -> dict[str, Any]:
    side = Path(directory) / f"{name}.json"
    if not side.exists():
        raise ArtifactError(f"{side}: no sidecar; not a utilityguard artifact directory")
    try:
        data: dict[str, Any] = json.loads(side.read_text())
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{side}: unreadable sidecar ({exc.msg})") from None
    return data


def load_artifact(directory: str | os.PathLike[str], *, name: str, rebuild: Rebuild,
                  trust: bool = False) -> Any:
    """Load ``<name>.npz`` after checking it against its sidecar, rebuilt by ``rebuild``
    (the estimator class's ``from_data``) from the sidecar's parameters and its arrays.

    Raises :class:`ArtifactError` when the file's sha256 differs from the sidecar's, the
    artifact was made with another scikit-learn version, or it is an old pickle; ``trust``
    skips the checks and loads an old pickle with a warning (only for files you made).
    """
    d = Path(directory)
    meta = read_sidecar(d, name=name)
    target = d / Path(str(meta.get("artifact", f"{name}.npz"))).name
    if target.suffix != ".npz":
        return _load_pickle(target, trust)
    if not target.exists():
        raise ArtifactError(f"{target}: artifact file missing")
    if not trust:
        digest = sha256_file(target)
        if digest != meta.get("sha256"):
            raise ArtifactError(
                f"{target}: sha256 {digest[:12]}... does not match the sidecar's "
                f"{str(meta.get('sha256'))[:12]}...; the file was modified or replaced. "
                "Refusing to load it; pass trust=True / --trust only for a file you made."
            )
        made_with = meta.get("versions", {}).get("scikit-learn")
        running = versions()["scikit-learn"]
        if made_with != running:
            raise ArtifactError(
                f"{target}: made with scikit-learn {made_with}, this is {running}; "
                "retrain it (or pass trust=True / --trust to load anyway)"
            )
    try:
        with np.load(target, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        return rebuild(dict(meta.get("params") or {}), arrays)
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise ArtifactError(f"{target}: not a readable utilityguard artifact ({exc})") from None


def _load_pickle(target: Path, trust: bool) -> Any:
    """An old pickle artifact: refused, or (``trust``) loaded with a warning."""
    if not trust:
        raise ArtifactError(
            f"{target}: a pickle artifact from an older utilityguard, which runs code when "
            "loaded; refit or convert it (a saved policy or cost model is data now), or pass "
            "--trust (trust=True) to load it anyway, only for a file you made yourself")
    if not target.exists():
        raise ArtifactError(f"{target}: artifact file missing")
    log.warning("loading the pickle %s because trust was given: it can run code", target)
    import joblib

    return joblib.load(target)
