"""The fenced code blocks of the README and the docs pages, and how each kind is run.

The convention (docs/contributing.md): ``python`` blocks run as a Python script from the
repository root with the repository on ``PYTHONPATH``; ``bash`` blocks run in ``bash -euo
pipefail`` from the repository root with ``utilityguard`` on ``PATH``; ``console`` blocks are
shown, not run; ``yaml`` / ``json`` / ``text`` (and the other data languages) are data. A block
preceded by ``<!-- docs-test: proxy -->`` runs with ``127.0.0.1:8787`` and ``127.0.0.1:8080``
pointing at a real guard proxy and its stand-in upstream that the test started.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = frozenset({"python", "bash"})
SHOWN = frozenset({"console", "yaml", "json", "text", "toml", "ini", "dockerfile"})
MARKERS = frozenset({"proxy"})
#: the addresses the docs use: the proxy's default, and the model server behind it
PROXY_ADDRESS, UPSTREAM_ADDRESS = "127.0.0.1:8787", "127.0.0.1:8080"
TIMEOUT = 120.0  # a hung block fails; its speed is not what is tested

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<name>[\w-]+)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its code and its marker."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}" \
               f":{self.line}"


def blocks(path: Path) -> Iterator[Block]:
    """Every fenced block of the Markdown file ``path``, in order (an unclosed fence is an
    error: everything after it would silently not be run)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence = match["indent"], match["fence"]
        lang = (match["info"].strip().split() or [""])[0].lower()
        marker = None
        prev = i - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        if prev >= 0 and (m := _MARKER.match(lines[prev])):
            marker = m["name"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and lines[j].strip().strip(fence[0]) == ""):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        if j == len(lines):
            raise ValueError(f"{path}:{i + 1}: the code fence is never closed")
        yield Block(path, i + 1, lang, "\n".join(body) + "\n", marker)
        i = j + 1


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def command_shim(directory: Path) -> Path:
    """A directory holding a ``utilityguard`` that runs this interpreter's ``guard.cli`` (the
    checkout's code, whatever ``utilityguard`` the environment has installed)."""
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "utilityguard"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m guard.cli "$@"\n', encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def prepare(block: Block, addresses: Mapping[str, str] | None = None) -> str:
    """The code to run: with a marker's ``addresses`` substituted."""
    code = block.code
    for old, new in (addresses or {}).items():
        code = code.replace(old, new)
    return code


def run(block: Block, workdir: Path, *, addresses: Mapping[str, str] | None = None,
        cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run ``block`` (python or bash) from ``cwd``; scratch files go to ``workdir``."""
    if block.lang not in RUN:
        raise ValueError(f"{block.where}: a {block.lang!r} block is not run")
    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / ("block.py" if block.lang == "python" else "block.sh")
    script.write_text(prepare(block, addresses), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(command_shim(workdir / "bin")), env.get("PATH", "")])
    env["TMPDIR"] = str(workdir)
    env["NO_COLOR"] = "1"
    argv = ([sys.executable, str(script)] if block.lang == "python"
            else ["bash", "-euo", "pipefail", str(script)])
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
