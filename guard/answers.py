"""Answer normalization: choice letters, numbers, free text and code blocks.

Shared by self-consistency (which compares sampled answers) and by the bench's grader (which
compares an answer with its reference).
"""

from __future__ import annotations

import re
import string
import unicodedata

_LETTERS = "ABCDEFGHIJ"
_OPTION_LINE = re.compile(r"^\s*\(?([A-J])[\).:]\s*(.+?)\s*$", re.MULTILINE)
_ANSWER_IS = re.compile(
    r"\b(?:answer|option|choice)\s*(?:is|would be|:)?\s*:?\s*\(?\**([A-J])\**\)?(?![A-Za-z])",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^\W*\(?([A-J])(?:[\).:,]|\s*$|\s+(?:is|-))")
_NUMBER = re.compile(r"(?<![\w.])[-−]?\$?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-−]?\.\d+")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION: dict[str, str | int | None] = {c: " " for c in string.punctuation + "“”‘’–—"}
_PUNCTUATION_TO_SPACE = str.maketrans(_PUNCTUATION)
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def options_in(question: str) -> dict[str, str]:
    """The lettered options of a multiple-choice question: ``{"A": "text", ...}``."""
    return {m.group(1): m.group(2) for m in _OPTION_LINE.finditer(question)}


def extract_choice(reply: str, question: str | None = None) -> str | None:
    """The choice letter a reply commits to, or ``None``.

    Order: an explicit "answer is B"; a reply that opens with a letter ("B", "B)", "(B)");
    the text of exactly one option quoted in the reply. A reply that lists two or more options
    line by line without committing to one gives ``None``.

    Examples
    --------
    >>> extract_choice("The answer is (C).")
    'C'
    >>> extract_choice("B) Ammonia")
    'B'
    >>> extract_choice("Ammonia is the one.", "Q?\\nA) Water\\nB) Ammonia\\nC) Soap")
    'B'
    >>> extract_choice("A) no\\nB) no\\nC) no") is None
    True
    """
    valid = set(options_in(question)) if question else set(_LETTERS)
    valid = valid or set(_LETTERS)
    if (m := _ANSWER_IS.search(reply)) and m.group(1).upper() in valid:
        return m.group(1).upper()
    listed = {m.group(1) for m in _OPTION_LINE.finditer(reply)}
    if len(listed) >= 2:  # a list of options is not a commitment to one
        return None
    if (m := _LEADING.match(reply.strip())) and m.group(1) in valid:
        return m.group(1)
    if question:
        low = normalize_text(reply)
        hits = [k for k, v in options_in(question).items() if normalize_text(v) and
                re.search(rf"\b{re.escape(normalize_text(v))}\b", low)]
        if len(hits) == 1:
            return hits[0]
    return None


def parse_number(token: str) -> float | None:
    """A float from a number token such as ``"$1,234.50"`` or ``"−3"``."""
    t = token.replace("−", "-").replace("$", "").replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def extract_numbers(reply: str) -> list[float]:
    """All numbers in a reply, in order."""
    out = []
    for m in _NUMBER.finditer(reply):
        v = parse_number(m.group(0))
        if v is not None:
            out.append(v)
    return out


def final_number(reply: str) -> float | None:
    """The number a reply commits to: the one after "answer is", else the last one.

    Examples
    --------
    >>> final_number("3 apples and 4 pears make 7 fruit.")
    7.0
    >>> final_number("The answer is $1,250.50, since 1000 + 250.5 = 1250.5")
    1250.5
    >>> final_number("no digits") is None
    True
    """
    m = re.search(r"\banswer\s*(?:is|:|=)\s*:?\s*", reply, re.IGNORECASE)
    if m:
        after = extract_numbers(reply[m.end() :])
        if after:
            return after[0]
    nums = extract_numbers(reply)
    return nums[-1] if nums else None


def normalize_text(text: str) -> str:
    """Lowercase, strip accents, punctuation and articles, fold white space.

    >>> normalize_text("  The Eiffel-Tower! ")
    'eiffel tower'
    """
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = t.translate(_PUNCTUATION_TO_SPACE)
    t = _ARTICLES.sub(" ", t)
    return " ".join(t.split())


def extract_code(reply: str) -> str:
    """The Python code in a reply: fenced blocks (a missing closing fence is tolerated),
    else the reply from its first ``def``/``import``/``class`` line on."""
    blocks = [b for b in _FENCE.findall(reply) if b.strip()]
    if blocks:
        return "\n\n".join(blocks)
    m = re.search(r"^(?:def |import |from |class )", reply, re.MULTILINE)
    return reply[m.start() :] if m else reply


def normalize_answer(reply: str, answer_type: str, question: str | None = None) -> str:
    """A canonical form used to compare answers (self-consistency): the choice letter, the
    number (rounded to 6 significant digits), or the normalized text."""
    if answer_type == "choice":
        letter = extract_choice(reply, question)
        if letter:
            return letter
    if answer_type == "number":
        v = final_number(reply)
        if v is not None:
            return f"{v:.6g}"
    return normalize_text(reply)
