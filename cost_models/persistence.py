"""Saving and loading fitted estimators with an integrity-checked JSON sidecar.

joblib files execute code when loaded, so an artifact is never loaded blindly: next to
``<name>.joblib`` a ``<name>.json`` sidecar records the artifact's sha256, the library versions
it was made with, and free-form metadata (training-data hash, metrics, the command). Loading
recomputes the hash and compares the scikit-learn version, and refuses a mismatch with a clear
error unless ``trust=True`` is passed explicitly.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from policies.exceptions import ArtifactError, InvalidValueError

SIDECAR_VERSION = 1
#: Sidecar fields written by :func:`save_artifact` itself; metadata must not override them.
RESERVED = ("artifact", "created", "sha256", "sidecar_version", "versions")


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
    """Write ``<directory>/<name>.joblib`` and its sidecar ``<name>.json``; return the sidecar."""
    clash = sorted(set(metadata or {}) & set(RESERVED))
    if clash:
        raise InvalidValueError(
            f"metadata must not set {', '.join(clash)}: save_artifact writes them")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    target = d / f"{name}.joblib"
    # write next to the target, then rename (atomic); joblib creates the file, so it gets the
    # usual permissions (umask), not the 0600 of a NamedTemporaryFile
    tmp_path = d / f".{name}.joblib.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        import joblib

        joblib.dump(obj, tmp_path, compress=3)
        tmp_path.replace(target)
    finally:
        tmp_path.unlink(missing_ok=True)
    sidecar = {
        "sidecar_version": SIDECAR_VERSION,
        "artifact": target.name,
        "sha256": sha256_file(target),
        "versions": versions(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
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


def load_artifact(directory: str | os.PathLike[str], *, name: str, trust: bool = False) -> Any:
    """Load ``<name>.joblib`` after checking it against its sidecar.

    Raises :class:`ArtifactError` when the file's sha256 differs from the sidecar's or the
    artifact was made with another scikit-learn version; ``trust=True`` skips both checks
    (only for artifacts you made yourself).
    """
    d = Path(directory)
    meta = read_sidecar(d, name=name)
    target = d / str(meta.get("artifact", f"{name}.joblib"))
    if not target.exists():
        raise ArtifactError(f"{target}: artifact file missing")
    if not trust:
        digest = sha256_file(target)
        if digest != meta.get("sha256"):
            raise ArtifactError(
                f"{target}: sha256 {digest[:12]}... does not match the sidecar's "
                f"{str(meta.get('sha256'))[:12]}...; the file was modified or replaced. "
                "Refusing to load (joblib runs code on load); pass trust=True / --trust only "
                "for a file you made yourself."
            )
        made_with = meta.get("versions", {}).get("scikit-learn")
        running = versions()["scikit-learn"]
        if made_with != running:
            raise ArtifactError(
                f"{target}: made with scikit-learn {made_with}, this is {running}; "
                "retrain it (or pass trust=True / --trust to load anyway)"
            )
    import joblib

    return joblib.load(target)
