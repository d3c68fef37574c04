"""Every ``python`` and ``bash`` block of README.md and docs/*.md runs and exits 0 (the
convention is in docs/contributing.md and tests/docs/blocks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import MARKERS, RUN, SHOWN, Block, blocks, doc_files, run

ALL = [b for path in doc_files() for b in blocks(path)]
RUNNABLE = [b for b in ALL if b.lang in RUN]


def test_there_are_blocks_to_run() -> None:
    assert len({b.path for b in RUNNABLE}) >= 5, "the docs lost their runnable examples"


@pytest.mark.parametrize("block", ALL, ids=[b.where for b in ALL])
def test_every_block_has_a_known_language(block: Block) -> None:
    # a ```sh or an untagged fence would silently never run: say which it is
    assert block.lang in RUN | SHOWN, (
        f"{block.where}: fence language {block.lang!r}; use python or bash (run), console "
        f"(shown, not run) or one of {sorted(SHOWN - {'console'})} (data)")
    assert block.marker is None or block.marker in MARKERS, f"{block.where}: {block.marker!r}"


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    addresses = request.getfixturevalue("docs_proxy") if block.marker == "proxy" else None
    done = run(block, tmp_path, addresses=addresses)
    assert done.returncode == 0, (
        f"{block.where}: the {block.lang} block exited with {done.returncode}\n"
        f"--- code ---\n{block.code}--- stdout ---\n{done.stdout[-3000:]}"
        f"--- stderr ---\n{done.stderr[-3000:]}")
