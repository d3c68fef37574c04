"""The question segments of a request: every text the cost model prices.

The price of a request is the **maximum** cost over its segments, so that it is never lower
than the price of any question it carries (:meth:`guard.Guard.price`). The segments of a
request's asked texts (what it asks, :mod:`guard.asking`) are:

* each text whole;
* each sentence of each text, and of all texts joined in order (a question split over
  several turns or content parts is whole again in the join); sentences end after ``.``,
  ``?``, ``!``, ``;``, ``:`` followed by a space, and at line breaks, so that a long cheap
  preamble or a cheap question next to a costly one does not dilute it;
* for a sentence longer than 12 words, every window of 12 words 4 apart and of 24 words 8
  apart (:data:`WINDOWS`), so that padding without punctuation does not dilute either: a
  question of up to 8 words lies whole in a window of 12 with at most 4 other words, one of
  up to 16 in a window of 24;
* for a text of several sentences longer than 48 words, every window of 48 words 16 apart
  across its sentences (:data:`TEXT_WINDOWS`), so that a question of several sentences (a
  context, then the question) keeps its price when other text surrounds it in the same
  message: one of up to 32 words lies whole in a window.

Duplicates are priced once; the order is kept (the first costliest segment wins a tie).
Every segment is priced in one batch call of the cost model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: Sentence boundaries: after ``. ? ! ; :`` followed by white space, and line breaks.
_SENTENCE = re.compile(r"(?<=[.?!;:])\s+|\s*[\r\n]+\s*")
_WORD = re.compile(r"\S+")
#: ``(words, stride)`` of the windows of a long sentence: every window of ``words`` words,
#: ``stride`` words apart, for each size.
WINDOWS = ((12, 4), (24, 8))
#: ``(words, stride)`` of the windows across the sentences of a long text.
TEXT_WINDOWS = ((48, 16),)
#: What joins the texts of a request into one (the conversation as one text).
JOIN = "\n"
#: What the guard prices: one text, the texts of a request, or a request (its body, its
#: messages, or a :class:`guard.request_walk.Asked`; :func:`guard.asking.as_asked`).
Query = str | Sequence[str] | Any


def as_text(query: Query | None) -> str:
    """A query as one text (its texts joined with :data:`JOIN`), for a record.

    >>> as_text(["Be brief.", "Max dose?"])
    'Be brief.\\nMax dose?'
    """
    if query is None:
        return ""
    return query if isinstance(query, str) else JOIN.join(query)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (stripped, empty ones dropped).

    >>> sentences("Thanks. What is the dose?\\nAnd for a child?")
    ['Thanks.', 'What is the dose?', 'And for a child?']
    """
    return [s for s in (p.strip() for p in _SENTENCE.split(text)) if s]


def windows(sentence: str, sizes: tuple[tuple[int, int], ...] = WINDOWS) -> list[str]:
    """The windows of a long sentence, each size of ``sizes`` (none for a short one).

    >>> len(windows(" ".join(["w"] * 40)))
    11
    >>> windows("a short sentence")
    []
    """
    words = _WORD.findall(sentence)
    out: list[str] = []
    for size, stride in sizes:
        if len(words) <= size:
            continue
        starts = list(range(0, len(words) - size + 1, stride))
        if starts[-1] != len(words) - size:
            starts.append(len(words) - size)
        out.extend(" ".join(words[s:s + size]) for s in starts)
    return out


def question_segments(text: str, across: bool = True) -> list[str]:
    """``text`` itself, its sentences, the windows of its long sentences and (``across``) the
    windows across its sentences.

    >>> question_segments("Hi there. Max dose?")
    ['Hi there. Max dose?', 'Hi there.', 'Max dose?']
    """
    out = [text]
    parts = sentences(text)
    for s in parts:
        out.append(s)
        out.extend(windows(s))
    if across and len(parts) > 1:
        out.extend(windows(" ".join(parts), TEXT_WINDOWS))
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def owned_segments(texts: Sequence[str]) -> list[tuple[str, int]]:
    """Every segment of a request's ``texts`` (see the module docstring), each with the index
    of the text it comes from (-1 for a sentence that runs across texts); empty texts give
    none.

    >>> owned_segments(["Be brief.", "What is the maximum daily dose", "of acetaminophen?"])[-1]
    ('What is the maximum daily dose of acetaminophen?', -1)
    """
    # a lone surrogate (valid JSON, not valid UTF-8) is priced as U+FFFD, never an error
    texts = [_SURROGATE.sub("\ufffd", t) for t in texts]
    parts: list[tuple[str, int]] = []
    for k, t in enumerate(texts):
        if t.strip():
            parts.extend((s, k) for s in question_segments(t))
    live = [t for t in texts if t.strip()]
    if len(live) > 1:  # sentences that run across texts, rejoined (the others are repeats);
        # no windows across the texts' sentences: each text has its own
        parts.extend((s, -1) for s in question_segments(" ".join(live), across=False)[1:])
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    for s, k in parts:
        if s and s.strip() and s not in seen:
            seen.add(s)
            out.append((s, k))
    return out


def request_segments(texts: Sequence[str]) -> list[str]:
    """Every segment of a request's ``texts`` (:func:`owned_segments`); ``[""]`` when it has
    no text (priced as the empty query).

    >>> segs = request_segments(["What is the maximum daily dose", "of acetaminophen?"])
    >>> segs[-1]
    'What is the maximum daily dose of acetaminophen?'
    """
    return [s for s, _ in owned_segments(texts)] or [""]
