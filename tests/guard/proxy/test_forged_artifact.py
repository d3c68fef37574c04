"""A code-running pickle planted in a policy folder, every hash recomputed, runs no code
(issue 20, item 4): not on load, not on ``POST /admin/reload``, not on the reload SIGHUP
triggers (the same ``guard.proxy.reload.reload()`` of the configured policy, here asked for
by an empty ``POST /admin/reload``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import joblib
import pytest

from cost_models.persistence import ArtifactError, sha256_file
from guard.policy import load_policy
from guard.policy.artifact import POLICY_FILE, shipped_dir

ADMIN = "sk-admin-forged-test"


class Boom:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def forge(policy: Path, marker: Path, part: str, *, keep_name: bool) -> None:
    """Replace ``part`` (``calibrator`` or ``answerability``) by a pickle that runs
    ``touch marker``; rewrite its sidecar and ``policy.json`` with every sha256 recomputed."""
    sub = policy / part
    target = sub / (f"{part}.npz" if keep_name else f"{part}.joblib")
    for f in sub.glob(f"{part}.*"):
        if f.suffix != ".json":
            f.unlink()
    joblib.dump(Boom(marker), target)
    side = sub / f"{part}.json"
    meta = json.loads(side.read_text())
    meta.update(artifact=target.name, sha256=sha256_file(target))
    side.write_text(json.dumps(meta))
    pmeta = json.loads((policy / POLICY_FILE).read_text())
    pmeta["files"] = {f"{d}/{f.name}": sha256_file(f) for d in ("calibrator", "answerability")
                      for f in sorted((policy / d).iterdir())}
    (policy / POLICY_FILE).write_text(json.dumps(pmeta))


@pytest.mark.parametrize("part", ["calibrator", "answerability"])
@pytest.mark.parametrize("keep_name", [False, True], ids=["as-joblib", "named-npz"])
def test_load_runs_no_code(tmp_path: Path, part: str, keep_name: bool) -> None:
    policy, marker = tmp_path / "p", tmp_path / "PWNED"
    shutil.copytree(shipped_dir() / "smollm2", policy)
    forge(policy, marker, part, keep_name=keep_name)
    with pytest.raises(ArtifactError):
        load_policy(policy)
    assert not marker.exists()


def test_reload_and_the_sighup_reload_run_no_code(start_proxy: Callable[..., Any],
                                                  tmp_path: Path) -> None:
    live, other, marker = tmp_path / "dirs" / "live", tmp_path / "dirs" / "other", \
        tmp_path / "PWNED"
    shutil.copytree(shipped_dir() / "smollm2", live)
    shutil.copytree(shipped_dir() / "smollm2", other)
    proxy = start_proxy(policy=str(live), admin_api_key=ADMIN,
                        policy_dirs=[str(tmp_path / "dirs")])
    forge(other, marker, "calibrator", keep_name=False)
    forge(live, marker, "answerability", keep_name=True)
    auth = {"authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=proxy.url, timeout=60) as c:
        r = c.post("/admin/reload", headers=auth, json={"policy": str(other)})
        assert r.status_code == 500 and "pickle" in r.json()["error"]["message"]
        r = c.post("/admin/reload", headers=auth)  # the configured policy: what SIGHUP does
        assert r.status_code == 500
        ok = c.post("/v1/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "What is 2 + 2? sure"}]})
        assert ok.status_code == 200  # the old policy still serves
        assert ok.headers["x-utilityguard-policy"] == load_policy("smollm2").label
    assert not marker.exists()


def test_a_real_sighup_runs_no_code(serve_process: Callable[..., Any], tmp_path: Path) -> None:
    """``utilityguard serve --policy DIR`` as a process; the pickle is planted in DIR (every
    hash recomputed) while it serves, then the process gets a real SIGHUP: it logs the failed
    reload, runs no code and goes on serving."""
    live, marker = tmp_path / "dirs" / "live", tmp_path / "PWNED"
    shutil.copytree(shipped_dir() / "smollm2", live)
    served = serve_process(["--policy", str(live), "--upstream", "http://127.0.0.1:9/v1"],
                           timeout=90.0)
    forge(live, marker, "calibrator", keep_name=False)
    os.kill(served.proc.pid, signal.SIGHUP)
    until = time.monotonic() + 5.0  # the reload refuses the folder at once; serve meanwhile
    with httpx.Client(base_url=served.url, timeout=10) as c:
        while time.monotonic() < until:
            assert c.get("/healthz").status_code == 200
            time.sleep(0.5)
    output = served.stop()
    assert "policy reload failed" in output and "pickle" in output, output
    assert not marker.exists()
