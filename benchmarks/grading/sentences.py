"""Where a reply's sentences break, as the grading rules read them (one home for the splitter
every rule module uses)."""

from __future__ import annotations

import re

#: A break between sentences: whitespace after ".", "!" or "?", or one or more line breaks.
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")

__all__ = ["SENTENCE_BREAK"]
