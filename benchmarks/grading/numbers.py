"""Grading a numeric reply: which number the reply commits to, within the reference's precision.

The committed number is, in this order:

1. the one after "answer is" when the reply says so;
2. the number the reply marks in bold (``**36 books.**``, ``**two**``): one value, however
   often it is bolded; when the bold marks several values, the one stated in the unit the
   question asks for ("How many mL ...?" and ``**11.25 mL**``);
3. the number the reply opens with (after a salutation): "$8. Four packs cost ...", "4,900 mL
   per minute (70 × 70), which is about 4.9 L/min", or states in its first sentence as what the
   code prints, returns or is ("It prints `10` (0 + 1 + 2 + 3 + 4)."); a chat assistant puts
   its answer first and the working after it;
4. for a "how many X" question, the number the reply states as "N X" (in digits, else in
   words: "three times a day", "twice") in a first sentence that restates the question ("The
   human skeleton consists of approximately 206 bones"; a later
   "the skull contains around 86 bones" talks about something else; a worked solution, which
   opens with "To find ...", is left to the last number);
5. else the last number.

What is not a number the reply states: a unit conversion in parentheses after a number
("165°F (74°C)" is one quantity), a hex literal ("0x8007016F" holds no 0), a line the reply
copies from the question ("print(10 // 3)" echoed holds no answer 3). A number that ends or
begins a range ("the numbers 5 to 10") commits to no single value. When the question asks for
a number of decimals ("to two decimal places", "to the nearest cent"), a reply that writes
more non-zero decimals did not round as asked and is not credited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.grading.sentences import SENTENCE_BREAK as _SENTENCE
from guard.answers import normalize_text, parse_number

# "165°F (74°C)", "5 miles (8 km)", "$10 (about €9)": the parenthesized conversion is dropped
_CONVERSION = re.compile(
    r"(\d(?:[\d,.]*\d)?\s*(?:°\s*[A-Za-z]?|%|[A-Za-zµ$€£]{1,12}\.?)?)\s*"
    r"\(\s*(?:about |approximately |approx\.? |roughly |around |~|≈)?[-−$€£]?\d[^()\n]{0,25}\)"
)
_HOW_MANY = re.compile(r"\bhow many ([a-z]+)\b(?!-)", re.IGNORECASE)
_FRAMING = re.compile(r"^\W*(?:to (?:solve|find|determine|calculate|answer|figure|convert|"
                      r"compute|work out|get)|let)\b", re.IGNORECASE)
_QUESTION_STOP = {"how", "many", "what", "which", "does", "there", "with", "have", "that",
                  "this", "from", "into", "were", "they", "their", "about", "typical", "usually"}
# a number token: sign, currency, thousands commas, decimals, exponent (as guard.answers reads
# it); "£137.55" and "€9" too
_NUMBER = re.compile(
    r"(?<![\w.])(?<!\d:)[-−+]?[$€£]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-−]?\.\d+")
# the same written with a decimal comma ("16,7", "10.609,00"), read when the question writes
# numbers that way or asks for decimals "after the comma"
_COMMA_NUMBER = re.compile(
    r"(?<![\w.,])(?<!\d:)[-−+]?[$€£]?(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d+)?(?![\d.,]\d)")
_COMMA_WRITTEN = re.compile(r"\d,\d{1,2}(?!\d)|\d\.\d{3},\d|\bafter the comma\b|"
                            r"\bdecimal comma\b")
# "1.0 × 10⁻³", "3 x 10^8", "2.5*10**-4": scientific notation written out
_TIMES_TEN = re.compile(r"(\d(?:\.\d+)?)\s*[×x*·]\s*10(?:\s*(?:\^|\*\*)\s*\(?\s*([-−]?)\s*(\d+)\)?|"
                        r"([⁻]?)([⁰¹²³⁴⁵⁶⁷⁸⁹]+))")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_ANSWER_IS = re.compile(r"\banswer\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE)
_HEX = re.compile(r"(?<![\w])0[xX][0-9A-Fa-f]+\b")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__", re.DOTALL)
# inline code holding asterisks ("`2 ** 3 ** 2`") is no bold marker
_CODE_WITH_STARS = re.compile(r"`[^`\n]*\*[^`\n]*`")
# the unit a question asks its number in: "How many mL ...?", "how much ml", "in percent"
_UNIT_ASKED = re.compile(r"\bhow (?:many|much) ([a-zµ]+)\b|\bin ([a-zµ%°]+)\s*[?.]",
                         re.IGNORECASE)
# words before a leading number that do not change it: "About 39.0 °C", "A 30% gain"
_APPROX = re.compile(r"^(?:about|approximately|around|roughly|nearly|almost|just|exactly|"
                     r"only|an?|~|≈)\s+(?=[-−+$€£]?\d)", re.IGNORECASE)
_WORDS = {"once": 1, "twice": 2, "thrice": 3, "zero": 0, "one": 1, "two": 2, "three": 3,
          "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12,
          "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
          "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
          "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}
_WORD_ALTERNATIVES = "|".join(w for w in _WORDS if w not in ("once", "twice", "thrice"))
_NUMBER_WORD = re.compile(r"^\W*(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)
# a salutation line before the answer ("Hi Sandeep,")
_SALUTATION = re.compile(r"^\s*(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b"
                         r"[^\n.!?]{0,40}[,!]?\s*\n", re.IGNORECASE)
# the first sentence states the answer: "It prints 7", "It's 512", "The remainder is 1"
_STATES = re.compile(
    r"^\W*(?:(?:it|this|that|the (?:code|snippet|expression|output|result|remainder|total|"
    r"answer|value|sum|product|difference|quotient))\s+(?:would |will |should )?"
    r"(?:prints?|outputs?|returns?|gives?|is|equals|evaluates to|comes? to|'s)|it's)"
    r"\s*:?\s*[*`\s]*(?=[-−+$€£]?\d|\.\d)", re.IGNORECASE)
# a number that is one end of a range: "5 to 10", "5–10", "between 5 and 10"
_RANGE_BEFORE = re.compile(r"(?:\d\s*(?:to|–|—)|\bbetween\s*[$€£]?\d[\d,.]*\s*and)\s*$",
                           re.IGNORECASE)
_RANGE_AFTER = re.compile(r"^\s*(?:to|–|—)\s*[-−]?[$€£]?\d", re.IGNORECASE)
# "to two decimal places", "to 1 decimal place", "to the nearest cent / tenth / whole number"
_DECIMALS = re.compile(
    r"\b(?:to|with)\s+(\w+)\s+decimal(?:\s+places?|s)?\b|\bnearest\s+(cent|tenth|hundredth|"
    r"whole\s+number|integer|whole)\b|\bwhole[- ]number\b", re.IGNORECASE)
_PLACES = {"one": 1, "1": 1, "two": 2, "2": 2, "three": 3, "3": 3, "four": 4, "4": 4,
           "cent": 2, "tenth": 1, "hundredth": 2}


@dataclass(frozen=True)
class Committed:
    """The number a reply commits to: its ``value``, the ``token`` as written, and how it was
    found (``how``: ``answer_is``, ``bold``, ``opening``, ``restated`` or ``last``)."""

    value: float
    token: str
    how: str


#: The number words a reply may state a count in ("**eleven**", "Twice a day").
NUMBER_WORDS = frozenset(_WORDS)


def without_conversions(reply: str) -> str:
    """``reply`` with parenthesized unit conversions after a number removed.

    >>> without_conversions("Cook it to 165°F (74°C) or higher.")
    'Cook it to 165°F or higher.'
    """
    return _CONVERSION.sub(lambda m: m.group(1), reply)


def _parse(token: str) -> float | None:
    return parse_number(token.replace("€", "").replace("£", "").replace("+", ""))


def _scientific(m: re.Match[str]) -> str:
    sign = "-" if (m.group(2) or m.group(4)) else ""
    power = (m.group(3) or m.group(5) or "").translate(_SUPERSCRIPT)
    return f"{m.group(1)}e{sign}{power}"


def _decimal_comma(m: re.Match[str]) -> str:
    """"16,7" is 16.7 and "10.609,00" is 10609.00; "1,170" (three digits after the comma) is
    read as thousands, as an English reply writes them."""
    token = m.group(0)
    if "," not in token or ("." not in token and len(token.split(",")[1]) == 3):
        return token
    return token.replace(".", "").replace(",", ".")


def _text(reply: str, question: str | None) -> str:
    """The reply as its numbers are read: hex literals and lines copied from the question
    removed, scientific notation and (when the question writes numbers so) decimal commas
    read, unit conversions dropped."""
    text = _TIMES_TEN.sub(_scientific, _HEX.sub(" ", reply))
    if question:
        asked = {" ".join(x.split()) for x in question.splitlines() if len(x.strip()) >= 6}
        text = "\n".join(line for line in text.splitlines()
                         if " ".join(line.strip().strip("`").split()) not in asked)
        if _COMMA_WRITTEN.search(question):
            text = _COMMA_NUMBER.sub(_decimal_comma, text)
    return without_conversions(text)


def _in_range(text: str, m: re.Match[str]) -> bool:
    return bool(_RANGE_BEFORE.search(text[: m.start()]) or _RANGE_AFTER.match(text[m.end():]))


def _numbers(text: str) -> list[re.Match[str]]:
    return [m for m in _NUMBER.finditer(text) if _parse(m.group(0)) is not None]


def _bold(text: str, question: str | None) -> Committed | None:
    """The value the reply marks in bold (see the module docstring), if one stands out: the
    only value bolded; else the one in the unit the question asks for; else the first value of
    the first bold span. In a bold equation ("**Net pay = £3,200 − £821 = £2,379**") only the
    result after the last "=" is marked."""
    spans = [m.group(1) or m.group(2) or ""
             for m in _BOLD.finditer(_CODE_WITH_STARS.sub(" ", text))]
    found: list[tuple[float, str, str]] = []  # value, token, span
    for span in spans:
        plain = span.replace("`", "").split("=")[-1]
        nums = [n for n in _numbers(plain) if not _in_range(plain, n)]
        found += [(_parse(n.group(0)) or 0.0, n.group(0), plain) for n in nums]
        if not _numbers(plain) and len(plain.split()) <= 3 and (w := _NUMBER_WORD.match(plain)):
            found.append((float(_WORDS[w.group(1).lower()]), w.group(1), plain))
    if not found:
        return None
    if len({v for v, _, _ in found}) > 1 and question and (m := _UNIT_ASKED.search(question)):
        unit = (m.group(1) or m.group(2)).lower()
        hits = [(v, t) for v, t, span in found
                if re.search(rf"{re.escape(t)}\s*{re.escape(unit)}", span, re.IGNORECASE)]
        if len({v for v, _ in hits}) == 1:
            return Committed(hits[0][0], hits[0][1], "bold")
    return Committed(found[0][0], found[0][1], "bold")


def _opening(text: str, question: str | None) -> Committed | None:
    """The number the reply opens with ("$8. Four packs ...", "About 39.0 °C: ..."), that its
    first sentence states as what the code prints or the result is, or the one number of its
    first sentence that the question does not give ("You need at least 17 large pizzas."); a
    reply that is one number word ("Seven.") states it too. A first sentence that frames a
    worked solution ("To find ...") states nothing yet."""
    body = _SALUTATION.sub("", text, count=1).lstrip()
    first = _SENTENCE.split(body, maxsplit=1)[0] if body else ""
    plain = _APPROX.sub("", first.replace("*", "").replace("`", "").strip())
    m = _NUMBER.match(plain)
    if m is not None and len(_numbers(re.split(r"[;:(]|,(?!\d)|\s[-–—]\s", plain)[0])) > 1:
        m = None  # "3 apples and 4 pears make 7 fruit": the opening number is a term
    if m is None and (s := _STATES.match(plain)):
        m = _NUMBER.match(plain, s.end())
    if m is None and not _FRAMING.match(plain):
        given = {_parse(n.group(0)) for n in _numbers(_TIMES_TEN.sub(_scientific, question or ""))}
        head = re.split(r"[:;]|\s[-–—]\s", plain, maxsplit=1)[0]  # "9 boxes: 100 ÷ 12 = 8.33"
        for part in (head, plain):
            new = [n for n in _numbers(part) if _parse(n.group(0)) not in given]
            if new:
                if len({_parse(n.group(0)) for n in new}) == 1:
                    m = new[0]
                break
    if m is None:
        w = _NUMBER_WORD.match(plain)
        if w and len(body.split()) <= 2:
            return Committed(float(_WORDS[w.group(1).lower()]), w.group(1), "opening")
        return None
    value = _parse(m.group(0))
    if value is None or _in_range(plain, m):
        return None
    return Committed(value, m.group(0), "opening")


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
        if found is None:  # in words: "one tablet three times a day", "twice a day"
            for w in re.finditer(rf"\b({_WORD_ALTERNATIVES})\s+(?:[a-z]+\s+)?{re.escape(thing)}\b"
                                 + (r"|\b(once|twice|thrice)\b" if thing == "times" else ""),
                                 sentence, re.IGNORECASE):
                found = float(_WORDS[(w.group(1) or w.group(2)).lower()])
    return found


# a result stated as such later in the reply: "The result is approximately 1.8 units."
_RESULT_IS = re.compile(
    r"\b(?:the|my) (?:final )?(?:result|total|answer) (?:is|would be|comes to|equals)\s*:?\s*"
    r"(?:approximately |about |around |roughly |exactly )?(?=[-−+$€£]?\d)", re.IGNORECASE)


def _stated_result(text: str, question: str | None) -> Committed | None:
    """A reply without a marked answer: the last result it states as such ("The result is
    about 1.8"), else, for a "how many X" question, the last number of X its last sentence with
    a number gives ("so you need 3 bottles and 5 filters": 3, not the 5 after it)."""
    found = None
    for m in _RESULT_IS.finditer(text):
        n = _NUMBER.match(text, m.end())
        if n is not None and not _in_range(text, n):
            found = n
    if found is None and question and (h := _HOW_MANY.search(question)):
        thing = re.escape(h.group(1).lower())
        last = next((x for x in reversed(_SENTENCE.split(text)) if _numbers(x)), "")
        for n in re.finditer(rf"(?<![\w.])([-−]?\d[\d,]*(?:\.\d+)?)\s+(?:[a-z]+\s+)?{thing}\b",
                             last, re.IGNORECASE):
            found = n
        if found is not None:
            value = parse_number(found.group(1))
            return None if value is None else Committed(value, found.group(1), "restated")
    if found is None:
        return None
    value = _parse(found.group(0))
    return None if value is None else Committed(value, found.group(0), "restated")


def committed(reply: str, question: str | None = None) -> Committed | None:
    """The number ``reply`` commits to and how it was found (see the module docstring);
    ``None`` when it states none, or only a range."""
    text = _text(reply, question)
    if m := _ANSWER_IS.search(text):
        after = _numbers(text[m.end():])
        if after:
            return Committed(_parse(after[0].group(0)) or 0.0, after[0].group(0), "answer_is")
    if found := _bold(text, question):
        return found
    if found := _opening(text, question):
        return found
    plain = text.replace("*", "")
    if question and (n := _restated(plain, question)) is not None:
        return Committed(n, str(n), "restated")
    if found := _stated_result(plain, question):
        return found
    nums = _numbers(plain)
    if not nums or _in_range(plain, nums[-1]):
        return None
    return Committed(_parse(nums[-1].group(0)) or 0.0, nums[-1].group(0), "last")


def committed_number(reply: str, question: str | None = None) -> float | None:
    """The number ``reply`` commits to (see the module docstring)."""
    found = committed(reply, question)
    return None if found is None else found.value


def guessed_number(reply: str, question: str | None = None) -> bool:
    """Whether the committed number is a guess among several: the reply states two or more
    different numbers and marks none as its answer (no "answer is", no bold, no number it
    opens with)."""
    found = committed(reply, question)
    if found is not None and found.how not in ("last", "restated"):
        return False
    text = _text(reply, question)
    return len({_parse(m.group(0)) for m in _numbers(text)}) >= 2


def _tolerance(ref: str) -> float:
    t = ref.strip().replace(",", "")
    if "." in t and "e" not in t.lower():
        return 0.5 * 10.0 ** -len(t.split(".", 1)[1]) + 1e-9
    return 0.0


def asked_decimals(question: str | None) -> int | None:
    """How many decimals the question asks the answer to be rounded to, if it says.

    >>> asked_decimals("Round 3.14159 to two decimal places.")
    2
    >>> asked_decimals("Give the answer as a whole-number percent.")
    0
    >>> asked_decimals("How many apples?") is None
    True
    """
    m = _DECIMALS.search(question or "")
    if m is None:
        return None
    word = (m.group(1) or m.group(2) or "whole").lower()
    return _PLACES.get(word, 0 if word.startswith(("whole", "integer")) else None)


def _rounded(token: str, places: int | None) -> bool:
    """Whether the written number has at most ``places`` decimals (trailing zeros aside)."""
    if places is None or "." not in token:
        return True
    return len(token.split(".", 1)[1].rstrip("0")) <= places


def grade_number(reply: str, references: Sequence[str], question: str | None = None) -> bool:
    """Whether the committed number equals a reference within the reference's own precision
    (``"12.3"`` accepts 12.25-12.35; integers need an exact match up to 1e-6 relative), rounded
    as the question asks."""
    got = committed(reply, question)
    if got is None or not _rounded(got.token, asked_decimals(question)):
        return False
    for ref in references:
        want = parse_number(ref)
        if want is None:
            continue
        tol = max(_tolerance(ref), 1e-6 * abs(want), 1e-9)
        if abs(got.value - want) <= tol:
            return True
    return False


__all__ = ["NUMBER_WORDS", "Committed", "asked_decimals", "committed", "committed_number",
           "grade_number", "guessed_number", "without_conversions"]
