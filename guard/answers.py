"""Answer normalization: choice letters, numbers, free text and code blocks.

Shared by self-consistency (which compares sampled answers) and by the bench's grader (which
compares an answer with its reference).

A multiple-choice reply can point at an option in three ways: a letter it states ("The answer is
B", a reply that opens with "B)"), the text written after such a letter ("A) In the garage"),
and an option's text quoted on its own. Small models open most replies with "A)" whatever they
mean, so :func:`read_choice` reads all three: when they point at different options ("A) No"
where A is "Yes"; "A) Right ventricle ... The correct answer is D") the reply contradicts
itself and commits to none (``conflict``). A list of several options commits to none either.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass

_LETTERS = "ABCDEFGHIJ"
_OPTION_LINE = re.compile(r"^\s*\(?([A-J])[\).:]\s*(.+?)\s*$", re.MULTILINE)
# "answer is B", "correct option: (C)", "The correct answer is D) Left ventricle"; a following
# "not" ("The answer is not A") is no statement of A
_STATED = re.compile(
    r"(?i:\b(?:answer|option|choice)\s*(?:is|would be|:)?)\s*:?\s*\(?([A-J])\)?(?![A-Za-z])"
    r"(?:[\).:]?[ \t]*([^\n]*))?"
)
# "Answer: Yes, ...": the answer stated in words, read against Yes/No options
_ANSWER_WORDS = re.compile(r"(?i:\banswer\s*(?:is|:))\s*(yes|no)\b", re.IGNORECASE)
# a reply that opens with a letter: "B) ...", "B.", "B is ...", or a bare "B" on its own line
_LABELLED = re.compile(r"^\W*\(?([A-J])(?:[\).:,][ \t]*([^\n]*)|[ \t]*(?:\n|$)|"
                       r"\s+(?:is|-)\s*([^\n]*))")
_MATCH = 0.6  # share of an option's words a quoted text must contain to name that option
_NUMBER = re.compile(r"(?<![\w.])[-−]?\$?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-−]?\.\d+")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION: dict[str, str | int | None] = {c: " " for c in string.punctuation + "“”‘’–—"}
_PUNCTUATION_TO_SPACE = str.maketrans(_PUNCTUATION)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_DIGIT_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def options_in(question: str) -> dict[str, str]:
    """The lettered options of a multiple-choice question: ``{"A": "text", ...}``."""
    return {m.group(1): m.group(2) for m in _OPTION_LINE.finditer(question)}


def extract_choice(reply: str, question: str | None = None) -> str | None:
    """The choice letter a reply commits to, or ``None`` (see :func:`read_choice`).

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
    return read_choice(reply, question).letter


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
    >>> normalize_text("About 30,000 of them, at 37.8 degrees.")
    'about 30000 of them at 37.8 degrees'
    """
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    # a number keeps its digits together: "30,000" is not "30", "37.8" is not "37"
    t = _DIGIT_POINT.sub("\x00", _THOUSANDS.sub("", t))
    t = t.translate(_PUNCTUATION_TO_SPACE).replace("\x00", ".")
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


@dataclass(frozen=True)
class ChoiceReading:
    """What a reply points at: the option letter, or ``None``; ``conflict`` when its letters
    and quoted texts disagree; ``by_text_only`` when no letter was stated and only an option's
    quoted text names the choice (a weaker commitment)."""

    letter: str | None
    conflict: bool = False
    by_text_only: bool = False


def _words(text: str) -> list[str]:
    return normalize_text(text).split()


def _score(quoted: str, option: str) -> float:
    """How well ``quoted`` names ``option``: 1.0 when it contains the option's words in order,
    else the share of the option's words it contains (and of its own words in the option)."""
    q, o = _words(quoted), _words(option)
    if not q or not o:
        return 0.0
    # whole words, and a number not inside a longer one: "0.5 mg" does not quote "5 mg"
    if re.search(rf"(?<![\w.]){re.escape(' '.join(o))}(?!\w|\.\d)", " ".join(q)):
        return 1.0
    common = len(set(q) & set(o))
    return min(common / len(set(o)), common / len(set(q)))


def option_named_by(text: str, options: dict[str, str]) -> str | None:
    """The option whose text ``text`` quotes, if exactly one stands out."""
    scores = sorted(((_score(text, v), k) for k, v in options.items()), reverse=True)
    if not scores or scores[0][0] < _MATCH:
        return None
    if len(scores) > 1 and scores[1][0] >= scores[0][0]:
        return None  # two options quoted as well as each other: no single one
    return scores[0][1]


def read_choice(reply: str, question: str | None) -> ChoiceReading:
    """The option a reply commits to, and whether it contradicts itself.

    Examples
    --------
    >>> q = "Which?\\nA) Yes\\nB) No"
    >>> r = read_choice("B) No", q)
    >>> r.letter, r.conflict
    ('B', False)
    >>> r = read_choice("A) No", q)
    >>> r.letter, r.conflict
    (None, True)
    """
    text = reply.replace("*", "")
    options = options_in(question) if question else {}
    valid = set(options) or set("ABCDEFGHIJ")
    # a list of options is no commitment to one (only a stated letter after it is)
    listing = len({m.group(1) for m in _OPTION_LINE.finditer(text)}) >= 2
    pointed: set[str] = set()
    first_line = text.strip().split("\n", 1)[0]
    if not listing and (m := _LABELLED.match(text.strip())) and m.group(1) in valid:
        pointed.add(m.group(1))
        label = m.group(2) or m.group(3) or ""
        if label and options and (named := option_named_by(label, options)):
            pointed.add(named)
    for m in _STATED.finditer(text):
        letter = m.group(1).upper()
        if letter in valid:
            pointed.add(letter)
            if m.group(2) and options and (named := option_named_by(m.group(2), options)):
                pointed.add(named)
    # an answer given in words after a letter: "B.\nAnswer: Yes, the court has jurisdiction"
    # where B is "No" (a Yes/No option named by its opening word)
    if pointed and options:
        for m in _ANSWER_WORDS.finditer(text):
            named = next((k for k, v in options.items()
                          if _words(v) == [m.group(1).lower()]), None)
            if named:
                pointed.add(named)
    if not pointed and options and not listing:
        # no letter at all: the option whose text the reply (or its first line) quotes
        named = option_named_by(first_line, options)
        hits = [k for k, v in options.items() if _score(text, v) >= 1.0]
        if named is None and len(hits) == 1:
            named = hits[0]
        if named:
            return ChoiceReading(named, by_text_only=True)
    if len(pointed) > 1:
        return ChoiceReading(None, conflict=True)
    return ChoiceReading(next(iter(pointed), None))
