"""Verbal confidence: the instruction that asks for it, the parser, and its removal.

The parser reads the confidence a model states ("Confidence: 85%", "confidence 0.85", "8/10",
"I am almost certain") and maps it to [0, 1] deterministically. Verbal expressions use a fixed
table (a common mapping of words of estimative probability). The confidence line is removed
from the answer delivered to the user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Appended to the system prompt when verbal confidence is requested.
VERBAL_INSTRUCTION = (
    "After your answer, add a final line of the form 'Confidence: N%' giving the probability "
    "(0-100%) that your answer is correct."
)

#: Words of estimative probability, longest phrases first when matching.
VERBAL_SCALE: dict[str, float] = {
    "absolutely certain": 0.99,
    "completely certain": 0.99,
    "certain": 0.95,
    "almost certain": 0.95,
    "almost certainly": 0.95,
    "very confident": 0.9,
    "highly confident": 0.9,
    "very likely": 0.85,
    "highly likely": 0.85,
    "confident": 0.8,
    "fairly confident": 0.75,
    "quite confident": 0.8,
    "likely": 0.7,
    "probably": 0.7,
    "somewhat confident": 0.6,
    "moderately confident": 0.6,
    "maybe": 0.5,
    "possibly": 0.4,
    "not sure": 0.4,
    "unsure": 0.35,
    "uncertain": 0.35,
    "unlikely": 0.25,
    "not confident": 0.25,
    "very unlikely": 0.1,
    "highly unlikely": 0.1,
    "no idea": 0.1,
}
_PHRASES = sorted(VERBAL_SCALE, key=len, reverse=True)
#: Levels read only on a confidence line ("Confidence: high"); in running text "high" or
#: "low" usually describe something else.
CONFIDENCE_LEVELS: dict[str, float] = {
    "very high": 0.9,
    "high": 0.8,
    "medium": 0.5,
    "moderate": 0.5,
    "low": 0.3,
    "very low": 0.15,
}
_LEVELS = sorted(CONFIDENCE_LEVELS, key=len, reverse=True)
#: A confident phrase under a negation ("not very confident", "not certain") maps to this.
NEGATED_VALUE = 0.3
_NEGATION = re.compile(r"\b(?:not|n't|never|hardly)(?:\s+\w+)?\s*$")
_NUM = r"(\d+(?:\.\d+)?)"
_LABEL = r"(?:confidence(?: level| score)?|certainty|probability(?: of being correct)?)"
# A confidence line starts with the label followed by a separator, "is"/"of", or a number:
# "Confidence: 85%", "**Certainty** - high", "Confidence 8/10"; not "Confidence intervals ...".
_LINE = re.compile(
    rf"^[^\w\n]*{_LABEL}[^\w\n]*?(?:[:=\-–]|\s+(?:is|of)\b|\s*(?=\d)).*$",
    re.IGNORECASE | re.MULTILINE,
)
#: A stated-confidence phrase is looked for in at most this many final characters.
_TAIL_CHARS = 2048
_PERCENT = re.compile(rf"{_NUM}\s*%")
_FRACTION = re.compile(rf"{_NUM}\s*(?:/|out of)\s*(10|100|5)\b")
_PLAIN = re.compile(rf"{_LABEL}\s*(?:is|of|:|=|-)?\s*{_NUM}", re.IGNORECASE)


@dataclass(frozen=True)
class VerbalConfidence:
    """The stated confidence in [0, 1], the text it came from, and the cleaned answer."""

    value: float
    matched: str
    answer: str


def _number_to_probability(text: str) -> float | None:
    if m := _PERCENT.search(text):
        v = float(m.group(1)) / 100.0
    elif m := _FRACTION.search(text):
        v = float(m.group(1)) / float(m.group(2))
    elif m := _PLAIN.search(text):
        x = float(m.group(1))
        v = x if x <= 1.0 else x / 100.0 if x <= 100.0 else -1.0
    else:
        return None
    return v if 0.0 <= v <= 1.0 else None


def _phrase_to_probability(text: str, *, levels: bool = False) -> float | None:
    low = " ".join(text.lower().replace("’", "'").split())
    for phrase in _PHRASES:
        if m := re.search(rf"\b{re.escape(phrase)}\b", low):
            value = VERBAL_SCALE[phrase]
            if value > 0.5 and _NEGATION.search(low[: m.start()]):
                return NEGATED_VALUE
            return value
    if levels:
        for level in _LEVELS:
            if re.search(rf"\b{re.escape(level)}\b", low):
                return CONFIDENCE_LEVELS[level]
    return None


def parse_verbal_confidence(text: str | None) -> VerbalConfidence | None:
    """Find a stated confidence in ``text``; ``None`` when there is none.

    A line that starts with "Confidence" (or "Certainty", "Probability") followed by a
    separator, "is"/"of" or a number is preferred and is removed from the returned answer; it
    may state a number, a phrase of :data:`VERBAL_SCALE` or a level of
    :data:`CONFIDENCE_LEVELS` ("high"). Otherwise the last sentence is searched for a phrase of
    :data:`VERBAL_SCALE`, which stays in the answer. A confident phrase under a negation ("not
    very confident") maps to :data:`NEGATED_VALUE`.

    Examples
    --------
    >>> c = parse_verbal_confidence("Paris.\\nConfidence: 85%")
    >>> c.value, c.answer
    (0.85, 'Paris.')
    >>> parse_verbal_confidence("42\\nConfidence: 0.6").value
    0.6
    >>> parse_verbal_confidence("B\\nConfidence: 8/10").value
    0.8
    >>> parse_verbal_confidence("It is probably Lyon.").value
    0.7
    >>> parse_verbal_confidence("Lyon.\\nConfidence: high").value
    0.8
    >>> parse_verbal_confidence("Lyon, but I'm not very confident.").value
    0.3
    >>> parse_verbal_confidence("Paris.") is None
    True
    """
    if not text:
        return None
    lines = list(_LINE.finditer(text))
    for m in reversed(lines):
        line = m.group(0)
        value = _number_to_probability(line)
        if value is None:
            value = _phrase_to_probability(line, levels=True)
        if value is not None:
            answer = (text[: m.start()] + text[m.end() :]).strip()
            return VerbalConfidence(value, line.strip(), answer)
    # the last sentence, read within the reply's last _TAIL_CHARS (CPU bounded on long replies)
    tail = re.split(r"(?<=[.!?])\s+", text.strip()[-_TAIL_CHARS:])[-1]
    value = _phrase_to_probability(tail)
    if value is not None:
        return VerbalConfidence(value, tail, text.strip())
    return None


def strip_confidence(text: str) -> str:
    """``text`` without its confidence line(s) (unchanged when there is none)."""
    return _LINE.sub("", text).strip()


#: Words about how sure a reply is.
_SURE = r"(?:confiden\w*|certain\w*|certitude|probabilit\w*|likelihood|sure|sureness)"
#: A value for it, or an order to state it.
_DICTATE = re.compile(
    rf"{_SURE}[^.!?\n]{{0,60}}?(?:\d|\bhigh\b|\bmax\w*\b|\bfull\b|\babsolute\w*\b)"
    rf"|(?:\d+\s*%|\b100\b)[^.!?\n]{{0,60}}?{_SURE}"
    rf"|\b(?:always|never|state|say|write|add|end|include|report|give|respond|reply|put|"
    rf"append|finish|close|sign)\b[^.!?\n]{{0,60}}?{_SURE}",
    re.IGNORECASE)


def dictates_confidence(texts: Iterable[str]) -> bool:
    """A client's text says what confidence to state, or orders a confidence line of its own
    ("End every answer with 'Confidence: 100%'", "always say you are certain"): then the
    confidence the reply states is the client's, not the model's, and the guard does not read
    it. Also true of a question about confidence with a number ("a 95% confidence interval"):
    the guard errs on the side of not believing a stated confidence.

    >>> dictates_confidence(["End every answer with 'Confidence: 100%'."])
    True
    >>> dictates_confidence(["Always tell me you are absolutely certain."])
    True
    >>> dictates_confidence(["What is the capital of France?", "Be brief."])
    False
    """
    return any(_DICTATE.search(t) for t in texts)
