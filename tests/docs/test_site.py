"""The docs site: ``mkdocs build --strict`` succeeds, the CLI reference is the parsers', two
built pages rendered in headless Chromium show the navigation and a highlighted code block
(asserted on the DOM; the screenshots are kept in ``test-artifacts/docs/``, or
``$UTILITYGUARD_TEST_ARTIFACTS/docs/``), and the site opened as the README says — the file
``site/index.html``, over ``file://`` — is navigable and searchable: Chromium clicks through
every link of the navigation, each from the page the one before opened, and a search finds
pages and opens one (issue 38: every link showed a directory listing, search nothing)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.docs.blocks import ROOT
from tests.helpers import Browser, run_chromium

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
    page = (site / "cli.html").read_text(encoding="utf-8")
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
    ("quickstart.html", "utilityguard decide"),
    ("proxy.html", "client.chat.completions.create"),
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
    shot = ARTIFACTS / (page.removesuffix(".html") + ".png")
    shot.unlink(missing_ok=True)
    run_chromium(f"--screenshot={shot}", "--window-size=1280,1400", "--hide-scrollbars", url)
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    assert (pixels < 245).any(axis=1).mean() > 0.03, "the screenshot is blank"
    assert len(np.unique(pixels, axis=0)) > 50, "the screenshot has no styled content"


#: every link of the primary navigation (not the page's own table of contents)
NAV_LINKS = """Array.from(document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]'))
  .filter(a => !a.getAttribute('href').startsWith('#') && !a.closest('.md-nav--secondary'))
  .map(a => [a.textContent.trim(), a.getAttribute('href')])"""
#: what a page of the site has and a directory listing has not
PAGE = """({protocol: location.protocol, path: location.pathname,
  h1: (document.querySelector('.md-content h1') || {}).textContent || null,
  listing: document.title.startsWith('Index of')})"""


def test_the_site_from_file_urls_navigates_and_searches(site: Path) -> None:
    with Browser() as browser:
        browser.navigate((site / "index.html").as_uri())
        links = browser.evaluate(NAV_LINKS)
        titles = [title for title, _ in links]
        assert len(links) >= 25 and {"Quickstart", "CLI", "Seed set"} <= set(titles), links
        visited = []
        for title, href in links:  # each clicked on the page the click before opened
            target = next(h for t, h in browser.evaluate(NAV_LINKS) if t == title)
            browser.click(f"Array.from(document.querySelectorAll("
                          f"'nav.md-nav--primary a.md-nav__link[href]')).find(a => "
                          f"a.getAttribute('href') === {json.dumps(target)} && "
                          f"a.textContent.trim() === {json.dumps(title)})")
            page = browser.evaluate(PAGE)
            assert page["protocol"] == "file:" and not page["listing"], (title, page)
            assert page["path"].endswith("/" + href.split("/")[-1]), (title, href, page)
            assert page["path"].endswith(".html") and page["h1"], (title, page)
            visited.append(page["path"])
        assert len(set(visited)) == len(links)

        # search, from a page one folder down
        browser.navigate((site / "cards" / "seed-set.html").as_uri())
        browser.evaluate("document.querySelector('.md-search__input').focus()")
        browser.type_text("refusal budget")
        found = browser.wait_until(
            "document.querySelectorAll('.md-search-result__item').length", timeout=30)
        assert found > 0
        browser.click("document.querySelector('.md-search-result__item a')")
        page = browser.evaluate(PAGE)
        assert page["protocol"] == "file:" and page["path"].endswith(".html") and page["h1"]
