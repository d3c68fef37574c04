"""Artifacts are data with an integrity-checked sidecar: round trip, tampering, version
mismatch, and an old (or forged) pickle that is never executed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import joblib
import numpy as np
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


class Thing:
    """A tiny estimator-like object saved as data."""

    def __init__(self, weights: list[float], name: str) -> None:
        self.weights, self.name = weights, name

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"name": self.name}, {"weights": np.array(self.weights)}

    @classmethod
    def from_data(cls, params: dict[str, Any], arrays: dict[str, Any]) -> Thing:
        return cls([float(w) for w in arrays["weights"]], str(params["name"]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thing) and (self.weights, self.name) == (other.weights,
                                                                          other.name)

    __hash__ = None  # type: ignore[assignment]


OBJ = Thing([1.0, 2.5, -3.0], "tiny")


def _load(directory: Path, **kw: Any) -> Any:
    return load_artifact(directory, name="thing", rebuild=Thing.from_data, **kw)


def _saved(tmp_path: Path) -> Path:
    save_artifact(OBJ, tmp_path / "art", name="thing", metadata={"metrics": {"mae": 0.5}})
    return tmp_path / "art"


class Boom:
    """Unpickling this runs ``touch MARKER``: a forged artifact."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_round_trip(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    assert sorted(p.name for p in directory.iterdir()) == ["thing.json", "thing.npz"]
    assert _load(directory) == OBJ


def test_sidecar_records_hash_versions_and_metadata(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    meta = read_sidecar(directory, name="thing")
    assert meta["artifact"] == "thing.npz"
    assert meta["sha256"] == sha256_file(directory / "thing.npz")
    assert meta["versions"]["scikit-learn"] == sklearn.__version__
    assert set(meta["versions"]) >= {"python", "numpy"}
    assert meta["params"] == {"name": "tiny"}
    assert meta["metrics"] == {"mae": 0.5}
    assert meta["sidecar_version"] == 2
    assert "created" in meta


def test_artifacts_get_the_usual_file_permissions(tmp_path: Path) -> None:
    """Not the 0600 of a temporary file: a model trained by one user must be loadable by the
    service user of the proxy."""
    old = os.umask(0o022)
    try:
        directory = _saved(tmp_path)
    finally:
        os.umask(old)
    for name in ("thing.npz", "thing.json"):
        assert (directory / name).stat().st_mode & 0o777 == 0o644, name


def test_saving_again_replaces_the_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    save_artifact(Thing([0.0], "other"), directory, name="thing")
    assert _load(directory) == Thing([0.0], "other")
    assert not list(directory.glob("*.tmp"))


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes() + b"\0"), id="appended-byte"),
        pytest.param(lambda p: np.savez(str(p), weights=np.zeros(2)), id="replaced"),
    ],
)
def test_a_tampered_artifact_is_refused(tmp_path: Path,
                                        tamper: Callable[[Path], object]) -> None:
    directory = _saved(tmp_path)
    tamper(directory / "thing.npz")
    with pytest.raises(ArtifactError, match=r"sha256 .* does not match the sidecar's"):
        _load(directory)


def test_trust_loads_a_replaced_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    with (directory / "thing.npz").open("wb") as f:
        np.savez(f, weights=np.array([7.0]))
    assert _load(directory, trust=True) == Thing([7.0], "tiny")


def _forge(directory: Path, marker: Path, *, as_npz: bool) -> None:
    """A code-running pickle in the folder, the sidecar rewritten to point at it with its
    sha256 recomputed (what anyone who can write the folder can do)."""
    target = directory / ("thing.npz" if as_npz else "thing.joblib")
    (directory / "thing.npz").unlink()
    joblib.dump(Boom(marker), target)
    _edit_sidecar(directory, artifact=target.name, sha256=sha256_file(target))


@pytest.mark.parametrize("as_npz", [False, True], ids=["joblib", "pickle-named-npz"])
def test_a_forged_pickle_with_recomputed_hashes_runs_no_code(tmp_path: Path,
                                                             as_npz: bool) -> None:
    directory = _saved(tmp_path)
    marker = tmp_path / "PWNED"
    _forge(directory, marker, as_npz=as_npz)
    with pytest.raises(ArtifactError, match="pickle" if not as_npz else "not a readable"):
        _load(directory)
    assert not marker.exists()


def test_an_old_pickle_folder_is_one_line_error_and_loads_with_trust(tmp_path: Path,
                                                                     caplog: Any) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.npz").unlink()
    joblib.dump(OBJ, directory / "thing.joblib")
    _edit_sidecar(directory, artifact="thing.joblib",
                  sha256=sha256_file(directory / "thing.joblib"))
    with pytest.raises(ArtifactError) as err:
        _load(directory)
    assert "older utilityguard" in str(err.value) and "--trust" in str(err.value)
    assert "\n" not in str(err.value)
    assert _load(directory, trust=True) == OBJ
    assert any("can run code" in r.getMessage() for r in caplog.records)


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
        _load(directory)
    assert _load(directory, trust=True) == OBJ


def test_a_sidecar_without_versions_is_refused(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    _edit_sidecar(directory, versions={})
    with pytest.raises(ArtifactError, match="made with scikit-learn None"):
        _load(directory)


def test_missing_sidecar(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.json").unlink()
    with pytest.raises(ArtifactError, match="no sidecar; not a utilityguard artifact directory"):
        _load(directory)


def test_unreadable_sidecar(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.json").write_text("{not json")
    with pytest.raises(ArtifactError, match="unreadable sidecar"):
        _load(directory)


def test_missing_artifact(tmp_path: Path) -> None:
    directory = _saved(tmp_path)
    (directory / "thing.npz").unlink()
    with pytest.raises(ArtifactError, match="artifact file missing"):
        _load(directory, trust=True)


@pytest.mark.parametrize("key", ["sha256", "versions", "artifact", "created", "params"])
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
