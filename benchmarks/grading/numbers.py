"""Grading a numeric reply: which number the reply commits to, within the reference's precision.

The committed number is the one after "answer is" when the reply says so; else, for a "how many
X" question, the number the reply states as "N X" in a first sentence that restates the question
("The human skeleton consists of approximately 206 bones"; a later "the skull contains around 86
bones" talks about something else; a worked solution, which opens with "To find ...", is left to
the last number); else the last number. A unit conversion in parentheses after a number
("165°F (74°C)") is the same quantity, not a new one, and is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from guard.answers import extract_numbers, final_number, normalize_text, parse_number

# "165°F (74°C)", "5 miles (8 km)", "$10 (about €9)": the parenthesized conversion is dropped
_CONVERSION = re.compile(
    r"(\d(?:[\d,.]*\d)?\s*(?:°\s*[A-Za-z]?|%|[A-Za-zµ$€£]{1,12}\.?)?)\s*"
    r"\(\s*(?:about |approximately |approx\.? |roughly |around |~|≈)?[-−$€£]?\d[^()\n]{0,25}\)"
)
_HOW_MANY = re.compile(r"\bhow many ([a-z]+)\b(?!-)", re.IGNORECASE)
_FRAMING = re.compile(r"^\W*(?:to (?:solve|find|determine|calculate|answer|figure)|let)\b",
                      re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_QUESTION_STOP = {"how", "many", "what", "which", "does", "there", "with", "have", "that",
                  "this", "from", "into", "were", "they", "their", "about", "typical", "usually"}


def without_conversions(reply: str) -> str:
    """``reply`` with parenthesized unit conversions after a number removed.

    >>> without_conversions("Cook it to 165°F (74°C) or higher.")
    'Cook it to 165°F or higher.'
    """
    return _CONVERSION.sub(lambda m: m.group(1), reply)


def _restated(reply: str, question: str) -> float | None:
    """The last "N <counted thing>" of a reply whose first sentence restates a "how many"
    question with a number (a direct answer; worked solutions open otherwise)."""
    m = _HOW_MANY.search(question)
    if not m:
        return None
    thing = m.group(1).lower()
    topic = {w for w in normalize_text(question).split()
             if len(w) > 3 and w != thing and w not in _QUESTION_STOP}
    found = None
    for sentence in _SENTENCE.split(reply.strip())[:1]:
        words = set(normalize_text(sentence).split())
        if not words & topic or _FRAMING.match(sentence):
            continue
        for n in re.finditer(rf"([-−]?\d[\d,]*(?:\.\d+)?)\s+(?:[a-z]+\s+)?{re.escape(thing)}\b",
                             sentence, re.IGNORECASE):
            found = parse_number(n.group(1))
    return found


def committed_number(reply: str, question: str | None = None) -> float | None:
    """The number ``reply`` commits to (see the module docstring)."""
    text = without_conversions(reply)
    if re.search(r"\banswer\s*(?:is|:|=)", text, re.IGNORECASE):
        return final_number(text)
    if question and (n := _restated(text, question)) is not None:
        return n
    return final_number(text)


def guessed_number(reply: str) -> bool:
    """Whether the committed number is a guess among several: the reply states two or more
    different numbers and never says which is its answer ("answer is")."""
    text = without_conversions(reply)
    if re.search(r"\banswer\s*(?:is|:|=)", text, re.IGNORECASE):
        return False
    return len(set(extract_numbers(text))) >= 2


def _tolerance(ref: str) -> float:
    t = ref.strip().replace(",", "")
    if "." in t and "e" not in t.lower():
        return 0.5 * 10.0 ** -len(t.split(".", 1)[1]) + 1e-9
    return 0.0


def grade_number(reply: str, references: Sequence[str], question: str | None = None) -> bool:
    """Whether the committed number equals a reference within the reference's own precision
    (``"12.3"`` accepts 12.25-12.35; integers need an exact match up to 1e-6 relative)."""
    got = committed_number(reply, question)
    if got is None:
        return False
    for ref in references:
        want = parse_number(ref)
        if want is None:
            continue
        tol = max(_tolerance(ref), 1e-6 * abs(want), 1e-9)
        if abs(got - want) <= tol:
            return True
    return False


__all__ = ["committed_number", "grade_number", "guessed_number", "without_conversions"]
