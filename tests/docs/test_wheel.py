"""The installed package works on its own: the wheel is built from this checkout, installed
into a fresh virtual environment, and run from a directory outside the checkout —
``utilityguard decide`` (the shipped cost model), ``Guard.from_policy("smollm2")`` (the shipped
policy), the seed data, a ``serve`` start (until /healthz answers) and ``utilityguard bench``
on the shipped responses. The performance benchmarks are not in the wheel.

Offline and fast: the wheel is built without build isolation (the running environment's
setuptools), and the fresh environment reaches the running environment's third-party packages
through a ``.pth`` file pointing at a directory of links to them — every one except
utilityguard's own (its editable install, its metadata), so the only ``guard`` it can import
is the wheel's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from benchmarks.perf.servers import free_port, wait_until_serving
from tests.docs.blocks import ROOT

pytestmark = pytest.mark.slow
PACKAGES = ("utilityguard_base", "guard", "cost_models", "policies", "benchmarks")
OWN = ("utilityguard", "__editable__", "guard", "cost_models", "policies", "benchmarks")


def _run(*argv: str | Path, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{argv}: {done.returncode}\n{done.stdout[-2000:]}" \
                                 f"\n{done.stderr[-3000:]}"
    return done


def _third_party(links: Path) -> Path:
    """A directory of links to the running environment's site-packages entries, without
    utilityguard's own."""
    links.mkdir()
    for key in ("purelib", "platlib"):
        for entry in Path(sysconfig.get_paths()[key]).iterdir():
            name = entry.name.lower().replace("-", "_")
            if name.startswith(OWN) or (links / entry.name).exists():
                continue
            if entry.suffix == ".pth":  # processed only in a site directory: keep them off
                continue
            (links / entry.name).symlink_to(entry)
    return links


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from this checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    built = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "--no-index", "--wheel-dir", tmp / "dist", src, cwd=tmp)
    # issue 38: every build warned that project.license as a TOML table is deprecated
    assert "project.license" not in built.stdout + built.stderr, built.stderr[-3000:]
    wheels = list((tmp / "dist").glob("utilityguard-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh environment's bin directory, with the wheel installed."""
    tmp = tmp_path_factory.mktemp("venv")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    site = Path(_run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=tmp).stdout.strip())
    (site / "third_party.pth").write_text(str(_third_party(tmp / "third-party")) + "\n")
    _run(sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index",
         "--quiet", wheel, cwd=tmp)
    return env_dir / "bin"


def _env(bindir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UTILITYGUARD_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    return env


def test_decide_uses_the_shipped_default_policy(installed: Path, tmp_path: Path) -> None:
    done = _run(installed / "utilityguard", "decide", "--json", "--p", "0.7",
                "What is the maximum daily dose of acetaminophen for an adult?",
                cwd=tmp_path, env=_env(installed))
    record = json.loads(done.stdout.splitlines()[0])
    assert record["cost"] > record["c_r"] == 2.0 and record["policy"].startswith("default@")
    cost, alpha = record["cost"], record["alpha"]
    expected = (cost + 1.0 - alpha * 3.0) / (1.0 + cost)  # the rule, written here
    assert record["threshold"] == pytest.approx(expected, abs=1e-5)


def test_policy_and_seed_data_come_with_the_wheel(installed: Path, tmp_path: Path) -> None:
    code = (
        "import json, guard, cost_models\n"
        "from guard import Guard\n"
        "from cost_models.datasets import load_seed\n"
        "g = Guard.from_policy('smollm2')\n"
        "r = g.decide('What is the capital of France?', 'Paris',"
        " confidence={'logprob_mean': -0.05})\n"
        "print(json.dumps({'guard': guard.__file__, 'cost_models': cost_models.__file__,"
        " 'policy': r.policy, 'seed': len(load_seed())}))\n")
    done = _run(installed / "python", "-c", code, cwd=tmp_path, env=_env(installed))
    got = json.loads(done.stdout.splitlines()[-1])
    env_dir = installed.parent.resolve()
    for key in ("guard", "cost_models"):  # the wheel's code, not the checkout's
        assert Path(got[key]).resolve().is_relative_to(env_dir), got[key]
    assert got["policy"].startswith("smollm2@")
    assert got["seed"] > 1000


def test_serve_starts(installed: Path, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([installed / "utilityguard", "serve", "--upstream",
                                 "http://127.0.0.1:9/v1", "--port", str(port)], cwd=tmp_path,
                                env=_env(installed), stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", proc, timeout=120, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_the_wheel_holds_no_performance_benchmark(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("benchmarks/perf/")]
    # the bench, its data and the base package are in it
    for needed in ("benchmarks/cli_bench.py", "benchmarks/bench/run.py",
                   "benchmarks/data/smollm2/responses.jsonl", "utilityguard_base/exceptions.py"):
        assert needed in names, needed


def test_bench_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    """``utilityguard bench`` on the shipped SmolLM2 responses, scored with the shipped
    policy (nothing refitted: seconds), from the installed wheel alone."""
    env = _env(installed)
    find = ("import benchmarks, pathlib; print(pathlib.Path(benchmarks.__file__).parent"
            " / 'data' / 'smollm2' / 'responses.jsonl')")
    responses = _run(installed / "python", "-c", find, cwd=tmp_path, env=env).stdout.strip()
    _run(installed / "utilityguard", "bench", "--responses", responses, "--policy", "smollm2",
         "--bootstrap", "20", "--no-plots", "--out", tmp_path / "out", cwd=tmp_path, env=env)
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["policies"] and (tmp_path / "out" / "report.md").exists()
    gone = subprocess.run([installed / "python", "-c", "import benchmarks.perf"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=False)
    assert gone.returncode == 1 and "No module named 'benchmarks.perf'" in gone.stderr
