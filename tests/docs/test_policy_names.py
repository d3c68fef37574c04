"""The shipped policies' names in the docs are the shipped files' (issue 38: docs/gateway.md
and docs/budget.md named smollm2 hashes of earlier fits). A policy's name ends with the first
8 hex digits of the sha256 of its ``policy.json``; every ``smollm2@SHA8`` / ``default@SHA8``
on a page must be the one :func:`guard.policy.load_policy` computes from the shipped file,
so a refit fails here until the pages' recorded runs and measurements are made again.
``docs/results.md`` and the changelog are dated records of earlier fits and keep theirs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guard.policy import load_policy
from guard.policy.artifact import shipped_policies
from tests.docs.blocks import ROOT

DATED = {"results.md", "changelog.md"}
PAGES = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name not in DATED]
NAME = re.compile(r"\b([a-z][a-z0-9_-]*)@([0-9a-f]{8})\b")


def test_the_pages_that_name_shipped_policies_are_checked() -> None:
    named = {p.name for p in PAGES if NAME.search(p.read_text(encoding="utf-8"))}
    assert {"gateway.md", "budget.md"} <= named


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_shipped_policy_names_are_the_shipped_files(page: Path) -> None:
    shipped = {name: load_policy(name).label for name in shipped_policies()}
    text = page.read_text(encoding="utf-8")
    for match in NAME.finditer(text):
        name = match.group(1)
        if name in shipped:
            line = text.count("\n", 0, match.start()) + 1
            assert match.group(0) == shipped[name], (
                f"{page.relative_to(ROOT)}:{line} names {match.group(0)}; the shipped "
                f"{name} is {shipped[name]}")
