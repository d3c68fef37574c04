"""The py-spy summary of ``benchmarks.perf.profile_load``: shares counted from collapsed
stacks written by hand (a recursive frame counts once per sample on the stack)."""

from __future__ import annotations

from benchmarks.perf.profile_load import render, summarize

STACKS = "\n".join([
    "main (/v/lib/python3.11/site-packages/app.py:1);f (/work/x/guard/a.py:5) 3",
    "main (/v/lib/python3.11/site-packages/app.py:1);g (/work/x/guard/b.py:7);"
    "g (/work/x/guard/b.py:9) 1",
    "main (/v/lib/python3.11/site-packages/app.py:1) 2",
    "not a sample line",
])


def test_inclusive_and_own_shares() -> None:
    total, inclusive, own = summarize(STACKS)
    assert total == 6
    assert inclusive == {"app.py:main": 6, "x/guard/a.py:f": 3, "x/guard/b.py:g": 1}
    assert own == {"x/guard/a.py:f": 3, "x/guard/b.py:g": 1, "app.py:main": 2}
    text = render(total, inclusive, own, ["# head"])
    assert "100.0%  app.py:main" in text and " 50.0%  x/guard/a.py:f" in text
