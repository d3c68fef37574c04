"""Text as a person reads it: escapes undone, Unicode normalized, invisible characters removed,
look-alike letters folded.

A hostile client can write a costly question so that it looks the same to a reader (and to the
model) but not to the cost model: in fullwidth letters (``Ｗｈａｔ``), with zero-width or bidi
characters inside the words, with Cyrillic or Greek letters that look Latin (``асеtаminophen``),
or as JSON ``\\u`` / HTML ``&#..;`` escapes. :func:`normalized` undoes all of these before the
guard prices a text; on plain text it changes nothing.
"""

from __future__ import annotations

import html
import re
import unicodedata

#: Letters of other scripts that look like a Latin letter, folded to it (Cyrillic, Greek,
#: Armenian and a few others of Unicode's confusables list; NFKC already folds fullwidth and
#: mathematical letters).
CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i",
    "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O",
    "Р": "P", "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ї": "I",
    "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Һ": "H", "Ӏ": "I",
    # Greek
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Armenian, Latin extensions and others
    "օ": "o", "ս": "u", "ց": "g", "ո": "n", "ɑ": "a", "ı": "i", "ȷ": "j", "ʏ": "y",
    "ℓ": "l", "ǀ": "l", "ꓲ": "I", "Ꭺ": "A", "Ꭼ": "E", "Ꮃ": "W",
}
_CONFUSABLE_TABLE = str.maketrans(CONFUSABLES)
#: JSON-style escapes (``\\u0041``, a surrogate pair as two of them), ``\\xNN`` and
#: ``\\U0001F600``.
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})"
                          r"|\\U(000[0-9a-fA-F]{5}|0010[0-9a-fA-F]{4})")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: How many rounds of unescaping: a text escaped twice is read as well.
ROUNDS = 3


def _unescape_json(text: str) -> str:
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        return chr(int(m.group(1) or m.group(2) or m.group(3), 16))

    out = _JSON_ESCAPE.sub(one, text.replace("\\\\", "\\"))  # one level of escaping a round
    # a surrogate pair written as two escapes is one character
    return out.encode("utf-16", "surrogatepass").decode("utf-16", "replace") \
        if any("\ud800" <= c <= "\udfff" for c in out) else out


def _invisible(ch: str) -> bool:
    """Format characters (zero-width, bidi controls, soft hyphen, tags) and variation selectors:
    nothing a reader sees."""
    cat = unicodedata.category(ch)
    return cat == "Cf" or "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def normalized(text: str) -> str:
    """``text`` as a reader sees it: JSON and HTML escapes undone (up to :data:`ROUNDS`
    times), NFKC, invisible characters removed, look-alike letters of other scripts folded to
    Latin (:data:`CONFUSABLES`). Plain text is returned unchanged.

    Examples
    --------
    >>> normalized("Ｗｈａｔ is the dose?")
    'What is the dose?'
    >>> normalized("ace\\u200btaminophen"), normalized("\\\\u0064ose"), normalized("&#100;ose")
    ('acetaminophen', 'dose', 'dose')
    >>> normalized("асеtаminophen")  # Cyrillic а, с, е
    'acetaminophen'
    """
    if text.isascii() and "\\" not in text and "&" not in text:
        return text
    for _ in range(ROUNDS):
        before = text
        text = _unescape_json(text)
        if "&" in text:
            text = html.unescape(text)
        if text == before:
            break
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(c for c in text if not _invisible(c)).translate(_CONFUSABLE_TABLE)
    # a lone surrogate (valid JSON, not valid UTF-8) is read as U+FFFD
    return _SURROGATE.sub("\ufffd", text)
