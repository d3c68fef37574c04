"""The docs site: ``mkdocs build --strict`` succeeds, the CLI reference is the parsers', and two
built pages rendered in headless Chromium show the navigation and a highlighted code block
(asserted on the DOM; the screenshots are kept in ``test-artifacts/docs/``, or
``$UTILITYGUARD_TEST_ARTIFACTS/docs/``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.docs.blocks import ROOT
from tests.helpers import run_chromium

ARTIFACTS = Path(os.environ.get("UTILITYGUARD_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "docs"
NAV = ("Quickstart", "Concepts", "The proxy", "Deployment", "Integrations", "The bench",
       "Results", "CLI", "Python API", "Contributing")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_the_cli_reference_is_the_parsers(site: Path) -> None:
    # every command pyproject.toml declares, and every flag of serve, is on the built page
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as f:
        commands = tomllib.load(f)["project"]["entry-points"]["utilityguard.commands"]
    page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for name in commands:
        assert f'id="utilityguard-{name}"' in page, name
    done = subprocess.run([sys.executable, "-m", "guard.cli", "serve", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", done.stdout)) - {"--help"}
    assert len(flags) > 20
    missing = sorted(f for f in flags if f"<code>{f}" not in page)
    assert not missing, missing


def _nav_titles(dom: str) -> set[str]:
    links = re.findall(r'<a[^>]*class="md-nav__link[^"]*"[^>]*>(.*?)</a>', dom, re.S)
    return {re.sub(r"<[^>]+>|\s+", " ", link).strip() for link in links}


@pytest.mark.parametrize(("page", "code"), [
    ("quickstart/index.html", "utilityguard decide"),
    ("proxy/index.html", "client.chat.completions.create"),
])
def test_page_renders_navigation_and_code(site: Path, page: str, code: str) -> None:
    url = (site / page).as_uri()
    dom = run_chromium("--dump-dom", url).stdout
    titles = _nav_titles(dom)
    missing = [t for t in NAV if t not in titles]
    assert not missing, f"navigation lacks {missing}; it has {sorted(titles)}"
    blocks = re.findall(r'<div class="[^"]*highlight[^"]*">\s*<pre.*?</pre>', dom, re.S)
    text = [re.sub(r"<[^>]+>", "", b) for b in blocks]
    assert any(code in t for t in text), f"no rendered code block with {code!r} in {page}"
    assert any("<span" in b for b in blocks), "the code blocks are not syntax-highlighted"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / (page.split("/")[0] + ".png")
    shot.unlink(missing_ok=True)
    run_chromium(f"--screenshot={shot}", "--window-size=1280,1400", "--hide-scrollbars", url)
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    assert (pixels < 245).any(axis=1).mean() > 0.03, "the screenshot is blank"
    assert len(np.unique(pixels, axis=0)) > 50, "the screenshot has no styled content"
