"""A case-insensitive pattern searched faster on ASCII text, with the same matches.

Python's ``re`` compares every character through its case folding under ``IGNORECASE``; on
the refusal phrases (an alternation of several hundred phrases, searched in every reply the
guard would answer) that makes a search about 1.4x slower than the same pattern on text
already in lower case. :class:`Folded` searches an ASCII text as its lower-case copy with the
pattern compiled without ``IGNORECASE``, and any other text with the pattern itself. For ASCII
text the two find the same matches at the same places: lower-casing ASCII keeps every index,
and a pattern with no upper-case letter of its own (no ``[A-Z]``, no escaped code point, no
inline flag) matches a letter of either case under ``IGNORECASE`` exactly where it matches
its lower-case form without it. :class:`Folded` refuses a pattern it cannot prove that for.
The match returned is of the lower-case copy: its spans are the text's, its ``group()`` is
lower case. ``tests/guard/test_refusal_folded.py`` compares the spans with the pattern's own
on every shipped reply and on random mixed-case text.
"""

from __future__ import annotations

import re

#: escapes whose letter is a class, an anchor or a control character, never a letter to match
_CASELESS_ESCAPES = frozenset("AbBdDsSwWZ" + "ntrfv")
#: what may follow ``(?``: groups and look-arounds, never an inline flag
_GROUP_STARTS = (":", "=", "!", "<=", "<!", "P<", "P=")


def foldable(pattern: str) -> bool:
    """Whether searching ``pattern`` under ``IGNORECASE`` equals searching the lower-case text
    without it (see the module docstring): no upper-case ASCII letter outside a caseless
    escape, no escaped code point or back-reference by number, no inline flag.

    >>> foldable(r"\\bi (?:cannot|can't) answer\\b")
    True
    >>> foldable(r"[A-Z]ouch"), foldable(r"\\x41"), foldable(r"(?-i:No)"), foldable(r"(?i)x")
    (False, False, False, False)
    """
    if not pattern.isascii():
        return False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1:i + 2]
            if nxt.isalnum() and nxt not in _CASELESS_ESCAPES:
                return False  # \\x41, \\u..., \\N{...}, \\1 back-references: not proven
            i += 2
            continue
        if c == "(" and pattern.startswith("(?", i) and \
                not pattern.startswith(_GROUP_STARTS, i + 2):
            return False
        if c.isupper():
            return False
        i += 1
    return True


class Folded:
    """``rx`` (an ``IGNORECASE`` pattern :func:`foldable` accepts) with :meth:`search` and
    :meth:`match` taking the lower-case path on ASCII text."""

    __slots__ = ("_cased", "rx")

    def __init__(self, rx: re.Pattern[str]) -> None:
        if not rx.flags & re.IGNORECASE or not foldable(rx.pattern):
            raise ValueError(f"not a pattern Folded can search faster: {rx.pattern[:60]!r}")
        self.rx = rx
        self._cased = re.compile(rx.pattern, rx.flags & ~re.IGNORECASE)

    def search(self, text: str) -> re.Match[str] | None:
        return self._cased.search(text.lower()) if text.isascii() else self.rx.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self._cased.match(text.lower()) if text.isascii() else self.rx.match(text)
