"""pyproject.toml builds without deprecation warnings (issue 38: every install warned that
``project.license`` as a TOML table is deprecated): the license is an SPDX string, which
needs setuptools >= 77 to build (the wheel test builds it and reads the build's output)."""

from __future__ import annotations

import re

from tests.docs.blocks import ROOT


def test_the_license_is_an_spdx_string_and_setuptools_can_read_it() -> None:
    import tomllib  # Python >= 3.11, as the other pyproject test

    with (ROOT / "pyproject.toml").open("rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["license"] == "MIT"
    assert (ROOT / meta["project"]["license-files"][0]).is_file()
    assert not any(c.startswith("License ::") for c in meta["project"].get("classifiers", []))
    for spec in (meta["build-system"]["requires"][0],
                 next(d for d in meta["project"]["optional-dependencies"]["dev"]
                      if d.startswith("setuptools"))):
        version = re.fullmatch(r"setuptools>=(\d+)", spec)
        assert version is not None and int(version.group(1)) >= 77, spec
