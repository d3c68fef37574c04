""":class:`guard.refusal_folded.Folded` finds exactly what its pattern finds.

For every pattern the refusal detector searches through :class:`Folded`, the match spans are
compared with the pattern's own (under ``IGNORECASE``) on every sentence of every shipped
reply and gold record, on their upper-cased and randomly re-cased copies, and on non-ASCII
text (the pattern's own path). The expectation is the plain pattern's result, computed here
independently of :class:`Folded`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import guard.refusal_detection as rd
from guard.refusal_folded import Folded, foldable
from guard.refusal_phrases import DECLINE, LACKS

ROOT = Path(__file__).resolve().parents[2]
FILES = [*sorted((ROOT / "benchmarks" / "data").glob("*/responses.jsonl")),
         *sorted((ROOT / "tests" / "benchmarks" / "data").glob("gold*.jsonl"))]
PATTERNS = {"DECLINE": DECLINE, "LACKS": LACKS, "CONCLUSION": rd._CONCLUSION,
            "ASKS": rd._ASKS, "DEFERS": rd._DEFERS}


def _texts() -> Iterator[str]:
    rng = random.Random(7)
    for path in FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            reply = json.loads(line).get("response")
            if not isinstance(reply, str):
                continue
            for piece in [reply, *re.split(r"(?<=[.!?])\s+|\n", reply)][:40]:
                yield piece
                yield piece.upper()
                yield "".join(c.upper() if rng.random() < 0.5 else c for c in piece)


def _spans(m: re.Match[str] | None) -> tuple[int, int] | None:
    return None if m is None else m.span()


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 4 and sum(1 for _ in _texts()) > 10_000


@pytest.mark.slow  # every shipped reply (make test-fast leaves it out)
@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_same_matches_as_the_pattern_on_every_shipped_reply(name: str) -> None:
    rx = PATTERNS[name]
    folded = Folded(rx)
    checked = matched = 0
    for text in _texts():
        want_search, want_match = _spans(rx.search(text)), _spans(rx.match(text))
        assert _spans(folded.search(text)) == want_search, (name, text[:120])
        assert _spans(folded.match(text)) == want_match, (name, text[:120])
        checked += 1
        matched += want_search is not None
    assert checked > 10_000 and matched > 0  # the pattern did match somewhere


@pytest.mark.parametrize("text", [
    "I CANNOT ANSWER that, sorry.", "I ÇANNOT answer", "İ cannot answer",
    "ſorry, I cannot answer", "The KELVIN sign: \u212a. I cannot answer.",
    "Je ne peux pas répondre. I cannot answer."])
def test_non_ascii_text_takes_the_patterns_own_path(text: str) -> None:
    assert _spans(Folded(DECLINE).search(text)) == _spans(DECLINE.search(text))


def test_a_pattern_it_cannot_prove_is_refused() -> None:
    for pattern in (r"[A-Z]ouch", r"\x41", r"(?-i:No) way", r"(?i)x", r"(a)\1"):
        assert not foldable(pattern)
        with pytest.raises(ValueError):
            Folded(re.compile(pattern, re.IGNORECASE))
    with pytest.raises(ValueError):  # not case-insensitive: nothing to fold
        Folded(re.compile("abc"))
