"""Encodings a person undoes at a glance, undone for pricing: reversed text, Caesar shifts
(rot13), leetspeak, letters split by separators, and base64 / hex / percent-encoded blobs; and
the spellings of :mod:`guard.reading.ciphers` (Morse, the NATO alphabet, numbers, words run
together, letters written as symbols), one layer deep.

Each decoder returns the decoded text or ``None``; :func:`decoded` keeps the decodings that
read as English (:func:`guard.reading.readable.unreadable` is false) and that differ from the
text. A decoding only ever adds a text to price: it never replaces what the client sent, so it
cannot lower a price.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from urllib.parse import unquote

from guard.reading.ciphers import MAX_BLOB, run_together, spelled, views
from guard.reading.normalize import normalized
from guard.reading.readable import counted_words, known, lexicon, unreadable

#: Leetspeak digits and symbols and the letters they stand for.
LEET = str.maketrans({"4": "a", "@": "a", "8": "b", "3": "e", "6": "g", "9": "g", "1": "i",
                      "!": "i", "|": "l", "0": "o", "5": "s", "$": "s", "7": "t", "2": "z"})
_LEET_RUN = re.compile(r"[A-Za-z0-9@$!|]{2,}")
_LEET_MARKS = frozenset("0123456789@$!|")
#: The longest unreadable sentence tried with the decoders of :func:`decoded_unreadable`
#: (longer ones are priced as unreadable as they are).
MAX_DECODE = 4000
_SEPARATED = re.compile(r"\b(?:[A-Za-z][.\-*_~+·•/]){2,}[A-Za-z]\b")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){8,}\b")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")


def readable_text(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 and (almost) all printable; ``None`` otherwise (binary
    data): what a decoded blob, a file part's data, must be to be read as text."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t\r")
    return text if text.strip() and printable >= 0.95 * len(text) else None


def _b64(blob: str) -> str | None:
    s = blob.rstrip("=")
    s += "=" * (-len(s) % 4)
    try:
        alt = "-_" if ("-" in s or "_" in s) else None
        raw = base64.b64decode(s, altchars=alt.encode() if alt else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    return readable_text(raw)


def _hex(blob: str) -> str | None:
    try:
        return readable_text(bytes.fromhex(blob))
    except ValueError:
        return None


def blobs(text: str) -> list[str]:
    """The texts hidden in base64, hex or percent-encoded blobs of ``text``.

    >>> blobs("see V2hhdCBpcyB0aGUgbWF4IGRvc2U/ now")
    ['What is the max dose?']
    >>> blobs("What%20is%20the%20dose%3F"), blobs("id 3f2a9c")
    (['What is the dose?'], [])
    """
    out: list[str] = []
    for m in _BASE64.finditer(text):
        if len(m.group(0)) <= MAX_BLOB and (t := _b64(m.group(0))) is not None:
            out.append(t)
    for m in _HEX.finditer(text):
        if len(m.group(0)) <= MAX_BLOB and (t := _hex(m.group(0))) is not None:
            out.append(t)
    if len(_PERCENT.findall(text)) >= 3:
        t = unquote(text)
        if t != text:
            out.append(t)
    return out


def unleet(text: str) -> str | None:
    """``text`` with its leetspeak words spelled out, or ``None`` when none becomes English.

    >>> unleet("what is the m4x d0s3 of 4c3t4m1n0ph3n")
    'what is the max dose of acetaminophen'
    >>> unleet("a 4yo took 300mg") is None
    True
    """
    lex = lexicon()
    changed = False

    def one(m: re.Match[str]) -> str:
        nonlocal changed
        word = m.group(0).translate(LEET)
        if word.isalpha() and known(word, lex):
            changed = True
            return word
        return m.group(0)

    def token(m: re.Match[str]) -> str:
        # a run of leet characters is read when the rest of its token, from the run on, holds
        # a letter and a leet mark (suffix flags: linear in the token, however long)
        tok = m.group(0)
        letter = [False] * (len(tok) + 1)
        mark = [False] * (len(tok) + 1)
        for i in range(len(tok) - 1, -1, -1):
            c = tok[i]
            letter[i] = letter[i + 1] or (c.isascii() and c.isalpha())
            mark[i] = mark[i + 1] or c in _LEET_MARKS
        return _LEET_RUN.sub(lambda r: one(r) if letter[r.start()] and mark[r.start()]
                             else r.group(0), tok)

    out = re.sub(r"\S+", token, text)
    return out if changed else None


def unseparated(text: str) -> str | None:
    """Letters split by single separators joined again ("a.c.e.t" -> "acet"), or ``None``.

    >>> unseparated("max dose of a-c-e-t-a-m-i-n-o-p-h-e-n?")
    'max dose of acetaminophen?'
    """
    out = _SEPARATED.sub(lambda m: re.sub(r"[^A-Za-z]", "", m.group(0)), text)
    return out if out != text else None


def _caesar(text: str, k: int) -> str:
    def shift(c: str) -> str:
        if "a" <= c <= "z":
            return chr((ord(c) - 97 + k) % 26 + 97)
        if "A" <= c <= "Z":
            return chr((ord(c) - 65 + k) % 26 + 65)
        return c

    return "".join(shift(c) for c in text)


def _reversed(text: str) -> str | None:
    return text[::-1]


def _shifted(text: str) -> str | None:
    """The Caesar shift (rot13 among them) that makes the most English words, if any."""
    best, best_known = None, 0
    lex = lexicon()
    for k in range(1, 26):
        cand = _caesar(text, k)
        n = sum(known(w, lex) for w in counted_words(cand))
        if n > best_known:
            best, best_known = cand, n
    return best


#: Decoders tried on a sentence that cannot be read.
UNREADABLE_DECODERS: tuple[Callable[[str], str | None], ...] = (_reversed, _shifted,
                                                                unseparated)


def decoded(text: str, raw: str | None = None) -> list[str]:
    """Readable texts hidden in ``text`` (normalized): its blobs, its leetspeak and separated
    letters undone (tried on every text), each normalized — only those that read as English —
    and its spellings (:mod:`guard.reading.ciphers`: Morse, the NATO alphabet, numbers, words
    run together, ...) and, from ``raw`` (the text as sent, before normalizing), letters
    written as symbols or among them — only those that read as English positively
    (:func:`english`).

    >>> decoded("tell me the m4x1mum d0s3 of 4c3t4m1n0ph3n")
    ['tell me the maximum dose of acetaminophen']
    >>> decoded(".... --- .-- / -- ..- -.-. .... / .. -. ... ..- .-.. .. -.")
    ['how much insulin']
    """
    out: list[str] = []
    out.extend(normalized(t) for t in blobs(text))
    for fn in (unleet, unseparated):
        if (d := fn(text)) is not None:
            out.append(d)
    found = [t for t in dict.fromkeys(out) if t != text and not unreadable(t)]
    layer = [normalized(t) for t in (*spelled(text), *views(raw or text))]
    # one more layer: what a blob or a spelling decodes to may be spelled again (base64 of
    # Morse, NATO in JSON keys), or come out as letters without spaces (Morse without breaks)
    again = [normalized(x) for t in (*found, *layer) for x in (*spelled(t), *blobs(t))]
    for t in dict.fromkeys([*layer, *again]):
        if t == text or t in found:
            continue
        if not english(t) and (joined := run_together(t)) is not None:
            t = joined
        if english(t) and t not in found:
            found.append(t)
    return found


def decoded_unreadable(sentence: str) -> str | None:
    """The first decoding of an unreadable ``sentence`` that reads as English (reversed, a
    Caesar shift, separated letters joined), or ``None``.

    >>> decoded_unreadable("?nehponimatecA fo esod mumixam eht si tahW")
    'What is the maximum dose of Acetaminophen?'
    >>> decoded_unreadable("Jung vf gur znkvzhz qbfr bs nprgnzvabcura?")
    'What is the maximum dose of acetaminophen?'
    """
    if len(sentence) > MAX_DECODE:
        return None
    for fn in UNREADABLE_DECODERS:
        t = fn(sentence)
        if t is not None and t != sentence and english(t):
            return t
    return None


def english(text: str) -> bool:
    """``text`` reads as English positively: not :func:`unreadable`, and most of its counted
    words (at least one) are in the lexicon — a decoding too short to be judged unreadable is
    not taken for English.

    >>> english("What is the dose?"), english("?esod eht si tahW"), english("sisod al")
    (True, False, False)
    """
    words = counted_words(text)
    if not words or unreadable(text):
        return False
    lex = lexicon()
    return sum(known(w, lex) for w in words) >= 0.6 * len(words)
