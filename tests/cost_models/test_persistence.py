"""Artifacts with an integrity-checked sidecar: round trip, tampering, version mismatch."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import joblib
import pytest
import sklearn

from cost_models.persistence import (
    load_artifact,
    read_sidecar,
    save_artifact,
    sha256_file,
    sha256_rows,
)
from guard.exceptions import ArtifactError

OBJ = {"weights": [1.0, 2.5, -3.0], "name": "tiny"}


def _saved(tmp_path: Path) -> Path:
    save_artifact(OBJ, tmp_path / "art", name="thing", metadata={"metrics": {"mae": 0.5}})
    return tmp_path / "art"


def test_round_trip(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    assert sorted(p.name for p in directory.iterdir()) == ["thing.joblib", "thing.json"]
    assert load_artifact(directory, name="thing") == OBJ


def test_sidecar_records_hash_versions_and_metadata(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    meta = read_sidecar(directory, name="thing")
    assert meta["artifact"] == "thing.joblib"
    assert meta["sha256"] == sha256_file(directory / "thing.joblib")
    assert meta["versions"]["scikit-learn"] == sklearn.__version__
    assert set(meta["versions"]) >= {"python", "numpy", "joblib"}
    assert meta["metrics"] == {"mae": 0.5}
    assert meta["sidecar_version"] == 1
    assert "created" in meta


def test_artifacts_get_the_usual_file_permissions(tmp_path: Path) -> None:
    """Not the 0600 of a temporary file: a model trained by one user must be loadable by the
    service user of the proxy."""
    old = os.umask(0o022)
    try:
        directory = _saved(tmp_path)
    finally:
        os.umask(old)
    for name in ("thing.joblib", "thing.json"):
        assert (directory / name).stat().st_mode & 0o777 == 0o644, name


def test_saving_again_replaces_the_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    save_artifact({"other": True}, directory, name="thing")
    assert load_artifact(directory, name="thing") == {"other": True}
    assert not list(directory.glob("*.tmp"))


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes() + b"\0"), id="appended-byte"),
        pytest.param(lambda p: joblib.dump({"evil": True}, p), id="replaced"),
    ],
)
def test_a_tampered_artifact_is_refused(tmp_path: Path,
                                        tamper: Callable[[Path], object]) -> None:
    directory = _saved(tmp_path)
    tamper(directory / "thing.joblib")
    with pytest.raises(ArtifactError, match=r"sha256 .* does not match the sidecar's"):
        load_artifact(directory, name="thing")


def test_trust_loads_a_replaced_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    joblib.dump({"replaced": True}, directory / "thing.joblib")
    assert load_artifact(directory, name="thing", trust=True) == {"replaced": True}


def _edit_sidecar(directory: Path, **changes: object) -> None:
    side = directory / "thing.json"
    meta = json.loads(side.read_text())
    for key, value in changes.items():
        meta[key] = value
    side.write_text(json.dumps(meta))


def test_another_scikit_learn_version_is_refused_unless_trusted(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    meta = read_sidecar(directory, name="thing")
    _edit_sidecar(directory, versions={**meta["versions"], "scikit-learn": "0.24.2"})
    with pytest.raises(ArtifactError, match=(
            rf"made with scikit-learn 0\.24\.2, this is {sklearn.__version__}; retrain")):
        load_artifact(directory, name="thing")
    assert load_artifact(directory, name="thing", trust=True) == OBJ


def test_a_sidecar_without_versions_is_refused(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    _edit_sidecar(directory, versions={})
    with pytest.raises(ArtifactError, match="made with scikit-learn None"):
        load_artifact(directory, name="thing")


def test_missing_sidecar(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.json").unlink()
    with pytest.raises(ArtifactError, match="no sidecar; not a utilityguard artifact directory"):
        load_artifact(directory, name="thing")


def test_unreadable_sidecar(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.json").write_text("{not json")
    with pytest.raises(ArtifactError, match="unreadable sidecar"):
        load_artifact(directory, name="thing")


def test_missing_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.joblib").unlink()
    with pytest.raises(ArtifactError, match="artifact file missing"):
        load_artifact(directory, name="thing", trust=True)


@pytest.mark.parametrize("key", ["sha256", "versions", "artifact", "created"])
def test_metadata_cannot_override_the_integrity_fields(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match=f"metadata must not set {key}"):
        save_artifact(OBJ, tmp_path, name="thing", metadata={key: "x"})
    assert not list(tmp_path.iterdir())


def test_artifact_error_is_a_value_error() -> None:
    assert issubclass(ArtifactError, ValueError)  # the CLI renders it as a one-line error


def test_sha256_rows_is_stable_and_order_sensitive() -> None:
    rows = [("q one", 1.5), ("q two", 0.25)]
    assert sha256_rows(rows) == sha256_rows([list(r) for r in rows])
    assert sha256_rows(rows) != sha256_rows(rows[::-1])
    assert len(sha256_rows(rows)) == 64


def test_sha256_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert sha256_file(path) == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
