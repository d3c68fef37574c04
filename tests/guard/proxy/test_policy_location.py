"""Artifacts come from where they say they are (issue 36, item 3), on a real ``serve`` process.

A folder ``./default`` or ``./smollm2`` in the working directory used to replace the shipped
policy of that name: for ``serve``, for ``Guard()`` and for ``POST /admin/reload
{"policy": "smollm2"}`` past the ``--policy-dir`` allow-list. A shipped name now resolves
inside the package only, and every path a ``policy.json`` names stays inside its folder and
its hash list. The planted folders below are real policies (copies of the shipped ones whose
``policy.json`` sets ``c_r`` 1000: they answer everything), so on the old code they load.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from guard.exceptions import ArtifactError, ConfigError
from guard.policy import load_policy
from guard.policy.artifact import shipped_dir

ADMIN = "sk-admin-location-7"


def _plant(where: Path, name: str) -> str:
    """A copy of the shipped ``name`` in ``where/name`` that answers everything; its label."""
    target = where / name
    shutil.copytree(shipped_dir() / name, target)
    meta = json.loads((target / "policy.json").read_text())
    meta["c_r"] = 1000.0
    (target / "policy.json").write_text(json.dumps(meta, indent=2))
    return load_policy(target).label


def test_a_folder_in_the_working_directory_does_not_replace_a_shipped_policy(
        serve_process: Callable[..., Any], upstream: Any, tmp_path: Path) -> None:
    planted = {name: _plant(tmp_path, name) for name in ("default", "smollm2")}
    shipped = {name: load_policy(shipped_dir() / name).label for name in planted}
    assert planted["default"] != shipped["default"], "control: the planted one differs"
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--policy", "default"],
                           env={**env, "UTILITYGUARD_ADMIN_API_KEY": ADMIN})  # cwd: tmp_path
    body = {"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2? sure"}]}
    with httpx.Client(base_url=served.url, timeout=30) as c:
        r = c.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        assert r.headers["x-utilityguard-policy"] == shipped["default"]
        auth = {"authorization": f"Bearer {ADMIN}"}
        r = c.post("/admin/reload", headers=auth, json={"policy": "smollm2"})
        assert r.status_code == 200, r.text
        assert r.json()["policy"] == shipped["smollm2"]
        r = c.post("/v1/chat/completions", json=body)
        assert r.headers["x-utilityguard-policy"] == shipped["smollm2"]
        # the planted folder is reachable by its path only, and that is not allowed here
        r = c.post("/admin/reload", headers=auth, json={"policy": "./smollm2"})
        assert r.status_code == 403, r.text


def test_shipped_names_resolve_in_the_package_for_the_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = _plant(tmp_path, "smollm2")
    monkeypatch.chdir(tmp_path)
    assert load_policy("smollm2").label == load_policy(shipped_dir() / "smollm2").label
    assert load_policy("./smollm2").label == planted  # a path is a path


def _copy_smollm2(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    target = tmp_path / "policy"
    shutil.copytree(shipped_dir() / "smollm2", target)
    return target, json.loads((target / "policy.json").read_text())


@pytest.mark.parametrize("where", ["../outside", "/tmp", "calibrator/../../outside"])
def test_a_cost_model_folder_outside_the_policy_is_refused(tmp_path: Path, where: str
                                                            ) -> None:
    target, meta = _copy_smollm2(tmp_path)
    (tmp_path / "outside").mkdir()
    meta["cost_model"] = {"source": "file", "dir": where}
    (target / "policy.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="cost model folder"):
        load_policy(target)
    with pytest.raises(ArtifactError, match="cost model folder"):
        load_policy(target, trust=True)  # --trust skips hashes, not the folder's bounds


def test_a_listed_file_outside_the_policy_is_refused(tmp_path: Path) -> None:
    target, meta = _copy_smollm2(tmp_path)
    (tmp_path / "x.npz").write_bytes(b"x")
    meta["files"]["../x.npz"] = "0" * 64
    (target / "policy.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="not a path inside the policy folder"):
        load_policy(target)


def test_a_part_folder_symlinked_outside_is_refused(tmp_path: Path) -> None:
    target, _ = _copy_smollm2(tmp_path)
    shutil.move(target / "calibrator", tmp_path / "elsewhere")
    (target / "calibrator").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ArtifactError, match=r"outside the policy folder|leads outside"):
        load_policy(target)


def test_a_file_missing_from_the_hash_list_is_refused(tmp_path: Path) -> None:
    target, _ = _copy_smollm2(tmp_path)
    extra = target / "calibrator" / "extra.json"
    extra.write_text("{}")
    with pytest.raises(ArtifactError, match=r"not in policy\.json's hash list"):
        load_policy(target)


def test_a_nul_byte_in_a_policy_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"'smoll\\x00m2': no such policy"):
        load_policy("smoll\x00m2")
