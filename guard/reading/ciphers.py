"""Spellings a capable model reads back without effort and the cost model cannot: Morse code,
the NATO alphabet, letters as numbers (A1Z26), bytes written as hex pairs, decimal, binary or
octal numbers, quoted-printable, base32 and base85, words run together (no spaces, snake_case,
camelCase) — and, in :func:`views`, letters written as symbols (Braille, regional indicators,
Unicode tag characters) or interleaved with them (emoji, combining marks, invisible separators).

Each decoder returns the decoded text or ``None``; callers keep only decodings that read as
English (:func:`guard.reading.decode.english`). Like every decoding, they only add a text to
price (:mod:`guard.reading.decode`): a wrong decoding can raise a price, never lower one.
"""

from __future__ import annotations

import base64
import binascii
import quopri
import re
import unicodedata
from collections.abc import Callable

from guard.reading.readable import counted_words, known, lexicon

#: International Morse code: letters, digits and common punctuation.
MORSE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", "..--..": "?", ".-.-.-": ".", "--..--": ",",
    "-.-.--": "!", "-..-.": "/", ".----.": "'", "-....-": "-",
}
#: Dots and dashes as other characters write them.
MORSE_MARKS = str.maketrans({"·": ".", "•": ".", "−": "-", "–": "-", "—": "-", "_": "-"})
#: The NATO (ICAO) spelling alphabet, with common variants.
NATO = {
    "alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
    "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliett": "j", "juliet": "j",
    "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
    "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u", "victor": "v",
    "whiskey": "w", "whisky": "w", "xray": "x", "x-ray": "x", "yankee": "y", "zulu": "z",
}
#: Words a spelled message uses between its words.
SPELLED_BREAKS = frozenset({"/", "|", "//", "stop", "space", "break"})
#: Grade 1 Braille letters.
BRAILLE = str.maketrans(dict(zip("⠁⠃⠉⠙⠑⠋⠛⠓⠊⠚⠅⠇⠍⠝⠕⠏⠟⠗⠎⠞⠥⠧⠺⠭⠽⠵⠀",
                                 "abcdefghijklmnopqrstuvwxyz ", strict=True)))
#: Regional indicator symbols (🇦 ... 🇿) and Unicode tag characters, as the letters they carry.
REGIONAL = str.maketrans({0x1F1E6 + k: chr(ord("a") + k) for k in range(26)})
TAGS = str.maketrans({0xE0000 + k: chr(k) for k in range(0x20, 0x7F)})
#: The fewest symbols a spelled text must have before it is decoded.
MIN_SYMBOLS = 6
#: Glued punctuation is broken up when it makes at least this share of the visible characters
#: (JSON wrapped around prose; code with its brackets stays as it is).
GLUE_SHARE = 0.25
#: Longest run of letters segmented into words (longer runs are left as they are).
MAX_RUN = 200
#: The largest blob decoded (characters); longer ones are left as they are.
MAX_BLOB = 65536
_MORSE_TOKEN = re.compile(r"^[.\-·•−–—_]+$")
_NUMBER_TOKEN = r"\\?(?:0[xX])?[0-9A-Fa-f]+(?:-[0-9]+)*"
#: Letters as numbers, each word's joined by hyphens ("8-15-23 13-21-3-8").
_A1Z26_RUN = re.compile(r"(?<![\w-])\d{1,2}(?:-\d{1,2})+(?:[\s,;/|]+\d{1,2}(?:-\d{1,2})*)+"
                        r"(?![\w-])")
#: Six numbers or more in a row, each a token of its own (separated by spaces or punctuation).
_NUMBER_RUN = re.compile(rf"(?<![\w\\]){_NUMBER_TOKEN}(?:[\s,;/|]+{_NUMBER_TOKEN}){{5,}}(?!\w)")
_QP = re.compile(r"=[0-9A-Fa-f]{2}")
_HEX_SEPARATED = re.compile(r"\b(?:[0-9A-Fa-f]{2}[:\-]){5,}[0-9A-Fa-f]{2}\b")
_OCTAL = re.compile(r"\\([0-3][0-7]{2})")
_BASE32 = re.compile(r"\b[A-Z2-7]{16,}={0,6}")
_BASE85 = re.compile(r"<~[!-u\s]{10,}~>|[!-~]{20,}")
_RUN = re.compile(r"[A-Za-z]{12,}")
_IDENT = re.compile(r"\b[A-Za-z0-9]+(?:_[A-Za-z0-9]+){2,}\b"
                    r"|\b[A-Za-z]*[a-z0-9](?:[A-Z][a-z0-9]*){2,}\b"
                    r"|\b(?=[A-Z]*[a-z])(?:[A-Z][a-z0-9]*){3,}\b")
_HUMP = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: A run of punctuation glued to words (``{"a":{"q":"What``): broken into a space.
_GLUE = re.compile(r"[^\w\s]{2,}|[{}\[\]\"<>|\\]+")


def _breaks(text: str) -> str:
    """``text`` with word breaks marked ``/``: two or more spaces, ``/``, ``|``."""
    return re.sub(r"[ \t]{2,}|\s*[/|]+\s*", " / ", text)


def morse(text: str) -> str | None:
    """Morse code spelled out (letters split by spaces, commas or semicolons; words by ``/``,
    ``|`` or two spaces or more), or ``None``.

    >>> morse(".... --- .-- / -- ..- -.-. .... ..--..")
    'how much?'
    >>> morse(".... --- .--   -- ..- -.-. ....")
    'how much'
    """
    tokens = re.split(r"[\s,;]+", _breaks(text).strip())
    marks = [t for t in tokens if _MORSE_TOKEN.match(t)]
    words = [t for t in tokens if t not in SPELLED_BREAKS]
    if len(marks) < MIN_SYMBOLS or len(marks) < 0.7 * len(words):
        return None
    out = []
    for t in tokens:
        if t in SPELLED_BREAKS:
            out.append(" ")
        else:
            out.append(MORSE.get(t.translate(MORSE_MARKS), ""))
    return re.sub(r" +", " ", "".join(out)).strip() or None


def _nato_group(token: str) -> str | None:
    """A token of NATO words joined by hyphens ("Hotel-Oscar-Whiskey") as its letters."""
    parts = token.strip(".,;:!?()[]{}\"'").lower().split("-")
    if len(parts) >= 2 and all(p in NATO for p in parts):
        return "".join(NATO[p] for p in parts)
    return None


def nato(text: str) -> str | None:
    """The NATO alphabet spelled out (words split by ``/``, ``|``, two spaces or more, or each
    word's letters joined by hyphens; numbers between the words ignored), or ``None``; in
    prose, hyphen-joined groups alone.

    >>> nato("Hotel Oscar Whiskey / Mike Uniform Charlie Hotel ?")
    'how much ?'
    >>> nato("the dose of (Alfa-Charlie-Echo-Tango) for adults")
    'the dose of acet for adults'
    """
    tokens = _breaks(text).split()
    groups = [_nato_group(t) for t in tokens]
    words = [t.strip(".,;:!?()[]{}\"'<>-").lower() for t in tokens]
    alpha = [w for w in words if any(c.isalpha() for c in w)]
    spelled = sum(1 for w in alpha if w in NATO)
    if spelled < MIN_SYMBOLS or spelled < 0.7 * len(alpha):
        if not any(groups):
            return None
        many = sum(1 for g in groups if g) >= 3  # a spelled sentence: single letters too
        return " ".join(g or (NATO[w] if many and w in NATO else t)
                        for g, w, t in zip(groups, words, tokens, strict=True))
    out = []
    for t, w, g in zip(tokens, words, groups, strict=True):
        if g:
            out.append(" " + g + " ")
        elif w in NATO:
            out.append(NATO[w])
        elif w in SPELLED_BREAKS or (w == "" and "/" in t):
            out.append(" ")
        elif any(c.isalpha() for c in w) or not any(c.isdigit() for c in t):
            out.append(" " + t + " ")
    return re.sub(r" +", " ", "".join(out)).strip() or None


def _bytes_text(values: list[int]) -> str | None:
    if not values or any(not 0 <= v < 256 for v in values):
        return None
    try:
        text = bytes(values).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() or all(c.isprintable() or c in "\n\t" for c in text) \
        else None


def _as_bytes(tokens: list[str], base: int) -> str | None:
    try:
        return _bytes_text([int(t, base) for t in tokens])
    except ValueError:
        return None


def _a1z26(run: str) -> str | None:
    words = []
    for group in re.split(r"[\s,;/|]+", run.strip()):
        if not group:
            continue
        letters = group.split("-")
        try:
            nums = [int(x) for x in letters]
        except ValueError:
            return None
        if any(not 1 <= n <= 26 for n in nums):
            return None
        words.append("".join(chr(96 + n) for n in nums))
    return " ".join(words) or None


def hex_pairs(text: str) -> list[str]:
    """Bytes written as hex pairs joined by ``:`` or ``-`` (``57:68:61``), decoded.

    >>> hex_pairs("Decode 48:6f:77:20:6d:75:63:68:3f")
    ['How much?']
    """
    out = []
    for m in _HEX_SEPARATED.finditer(text):
        if (t := _as_bytes(re.split(r"[:\-]", m.group(0)), 16)) is not None:
            out.append(t)
    return out


def numbers(text: str) -> list[str]:
    """Runs of numbers read as bytes (hex pairs, ``0x`` hex, decimal, binary, octal or octal
    escapes) or as letters (A1Z26), each reading that is text.

    >>> numbers("57 68 61 74 20 69 73 20 69 74 3f")
    ['What is it?']
    >>> numbers("8-15-23 13-21-3-8 9-14-19-21-12-9-14")
    ['how much insulin']
    """
    out: list[str] = []
    for m in _A1Z26_RUN.finditer(text):
        if len(re.findall(r"\d+", m.group(0))) >= MIN_SYMBOLS and \
                (t := _a1z26(m.group(0))) is not None:
            out.append(t)
    for m in _NUMBER_RUN.finditer(text):
        run = m.group(0)
        if not any(c.isdigit() for c in run):
            continue
        raw = [t.lstrip("\\") for t in re.split(r"[\s,;/|]+", run.strip()) if t]
        tokens = [t[2:] if t.lower().startswith("0x") else t for t in raw]
        bases = [base for base, fits in (
            (2, all(re.fullmatch(r"[01]{8}", t) for t in tokens)),
            (8, all(re.fullmatch(r"[0-7]{3}", t) for t in tokens)),
            (16, all(re.fullmatch(r"[0-9A-Fa-f]{2}", t) for t in tokens)
             or all(r.lower().startswith("0x") for r in raw)),
            (10, all(t.isdigit() and 32 <= int(t) <= 126 for t in tokens))) if fits]
        out.extend(t for base in bases if (t := _as_bytes(tokens, base)) is not None)
    return out


def octal_escapes(text: str) -> str | None:
    """Octal escapes (``\\103\\141``) decoded, or ``None``.

    >>> octal_escapes(r"\\110\\157\\167 \\155\\165\\143\\150?")
    'How much?'
    """
    if len(_OCTAL.findall(text)) < MIN_SYMBOLS:
        return None
    out = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), text)
    return out if out != text else None


def quoted_printable(text: str) -> str | None:
    """Quoted-printable (``=48=6F=77``) decoded, or ``None``.

    >>> quoted_printable("=48=6F=77 much=3F")
    'How much?'
    """
    if len(_QP.findall(text)) < 3:
        return None
    try:
        raw = quopri.decodestring(text.encode("utf-8", "replace"))
    except (ValueError, binascii.Error):
        return None
    out = raw.decode("utf-8", "replace")
    return out if out != text else None


def base_nn(text: str) -> list[str]:
    """Base32 and base85 / ascii85 blobs decoded to text.

    >>> base_nn("JBXXOIDNOVRWQIDJNZZXK3DJNY7Q====")
    ['How much insulin?']
    """
    out: list[str] = []
    for m in _BASE32.finditer(text):
        blob = m.group(0)
        if len(blob) > MAX_BLOB:
            continue
        try:
            raw = base64.b32decode(blob + "=" * (-len(blob) % 8))
        except (binascii.Error, ValueError):
            continue
        if (t := _bytes_text(list(raw))) is not None:
            out.append(t)
    for m in _BASE85.finditer(text):
        blob = m.group(0)
        if len(blob) > MAX_BLOB:
            continue
        decoders: list[Callable[[bytes], bytes]] = (
            [lambda b: base64.a85decode(b, adobe=True)] if blob.startswith("<~")
            else [base64.a85decode, base64.b85decode])
        for fn in decoders:
            try:
                raw = fn(blob.encode("ascii"))
            except (ValueError, binascii.Error):
                continue
            if (t := _bytes_text(list(raw))) is not None:
                out.append(t)
    return out


#: Two-letter words a run of letters may be split into (the lexicon holds nearly every pair).
SHORT_WORDS = frozenset(["a", "i", "an", "am", "as", "at", "be", "by", "do", "go", "he", "if",
                         "in", "is", "it", "me", "my", "no", "of", "on", "or", "so", "to", "up",
                         "us", "we"])
#: At most this share of a segmented run may be letters of no known word (a drug's name).
MAX_UNKNOWN = 0.35


def segmented(run: str) -> str | None:
    """Letters run together split into words (``whatisthedose`` -> ``what is the dose``): the
    split into known words (and a few unknown ones: a name the lexicon lacks) that costs least
    (below); ``None`` when no split reads as words.

    >>> segmented("whatisthemaximumdose")
    'what is the maximum dose'
    >>> segmented("canitakenitroglycerinwithsildenafil")
    'can i take nitroglycerin with sildenafil'
    """
    if len(run) > MAX_RUN:
        return None
    lex = lexicon()
    low = run.lower()
    n = len(low)
    # best[end] = (cost, unknown letters, split) of low[:end]: a known word costs 1 (1.5 for
    # three letters, where the lexicon holds rare words), an unknown piece 2 + a third of its
    # length, so a name the lexicon lacks stays whole rather than cut into rare words
    best: list[tuple[float, int, list[str]] | None] = [None] * (n + 1)
    best[0] = (0.0, 0, [])
    for end in range(1, n + 1):
        for start in range(max(0, end - 24), end):
            prev = best[start]
            if prev is None:
                continue
            piece = low[start:end]
            size = len(piece)
            if size <= 2:
                if piece not in SHORT_WORDS:
                    continue
                cost, unknown = 1.0, 0
            elif piece in lex:
                cost, unknown = (1.5 if size == 3 else 1.0), 0
            elif size >= 4:
                cost, unknown = 2.0 + size / 3, size
            else:
                continue
            cand = (prev[0] + cost, prev[1] + unknown, [*prev[2], piece])
            cur = best[end]
            if cur is None or cand[0] < cur[0]:
                best[end] = cand
    done = best[n]
    if done is None or len(done[2]) < 2 or done[1] > MAX_UNKNOWN * n:
        return None
    return " ".join(done[2])


def run_together(text: str) -> str | None:
    """Words written without spaces, or as snake_case / camelCase, spaced out, or ``None``.

    >>> run_together("Whatisthemaximumdose? ok")
    'what is the maximum dose? ok'
    >>> run_together("Fix def max_of_three(a, b, c) so that it returns the largest") is None
    True
    >>> run_together("max_daily_dose_of_acetaminophen")
    'max daily dose of acetaminophen'
    >>> run_together("CanITakeNitroglycerinWithSildenafil")
    'can i take nitroglycerin with sildenafil'
    """
    lex = lexicon()
    letters = sum(c.isalpha() for c in text)
    plain = sum(len(w) for w in counted_words(text) if known(w, lex))
    if not letters or plain >= 0.5 * letters:  # prose with identifiers in it: read as it is
        return None

    def ident(m: re.Match[str]) -> str:
        return _HUMP.sub(" ", m.group(0)).strip().lower()

    out = _IDENT.sub(ident, text)

    def run(m: re.Match[str]) -> str:
        word = m.group(0)
        if known(word, lex):
            return word
        return segmented(word) or word

    out = _RUN.sub(run, out)
    return out if out != text else None


def unglued(text: str) -> str | None:
    """Runs of punctuation glued to words (JSON written into a sentence, ``{"a":{"q":"What
    is``) broken into spaces, or ``None`` when there are none.

    >>> unglued('See {"a":{"q":"What is the dose?"}}')
    'See a q What is the dose?'
    """
    runs = _GLUE.findall(text)
    visible = sum(not c.isspace() for c in text)
    if len(runs) < 3 or sum(len(r) for r in runs) < GLUE_SHARE * visible:
        return None
    out = _GLUE.sub(lambda m: "".join(c for c in m.group(0) if c in ".?!") + " ", text)
    out = re.sub(r" +", " ", out).strip()
    return out if out != text else None


#: Decoders of a normalized text (each may return one text, a list, or ``None``).
DECODERS: tuple[Callable[[str], str | list[str] | None], ...] = (
    morse, nato, numbers, hex_pairs, octal_escapes, quoted_printable, base_nn, run_together,
    unglued)


def spelled(text: str) -> list[str]:
    """Every decoding of ``text`` by :data:`DECODERS` (not yet judged English)."""
    out: list[str] = []
    for fn in DECODERS:
        got = fn(text)
        if isinstance(got, str):
            out.append(got)
        elif got:
            out.extend(got)
    return out


def _strip_marks(text: str) -> str:
    """Combining marks, symbols (emoji, dingbats) and format characters removed; invisible
    separators between words become spaces."""
    out = []
    for c in unicodedata.normalize("NFKD", text):
        cat = unicodedata.category(c)
        if cat in ("Mn", "Me", "So", "Sk", "Co", "Cn"):
            continue
        out.append(" " if cat == "Cf" else c)
    return unicodedata.normalize("NFC", "".join(out))


def views(raw: str) -> list[str]:
    """``raw`` (as the client sent it, before :func:`guard.reading.normalize.normalized`
    removes what a reader does not see) read as letters written as symbols: tag characters,
    Braille, regional indicators, parenthesized letters; with symbols, combining marks and
    invisible separators taken out (each word kept whole).

    >>> views("H🔥o🔥w🔥 m🔥u🔥c🔥h?")
    ['How much?']
    >>> views("W\\u0301h\\u0301a\\u0301t\\u0301 i\\u0301s\\u0301 i\\u0301t\\u0301")
    ['What is it']
    """
    if raw.isascii():
        return []
    out: list[str] = []
    if any("\U000e0020" <= c <= "\U000e007e" for c in raw):
        out.append(raw.translate(TAGS))
    if any("\u2800" <= c <= "\u28ff" for c in raw):
        out.append(raw.translate(BRAILLE))
    if any("\U0001f1e6" <= c <= "\U0001f1ff" for c in raw):
        out.append(raw.translate(REGIONAL))
    folded = unicodedata.normalize("NFKC", raw)
    if re.search(r"(?:\(\w\)){3}", folded):
        out.append(re.sub(r"\((\w)\)", r"\1", folded))
    stripped = _strip_marks(raw)
    gone = len(unicodedata.normalize("NFKD", raw)) - len(stripped)
    if stripped != raw and gone >= max(MIN_SYMBOLS, 0.2 * sum(c.isalpha() for c in stripped)):
        out.append(stripped)
    return [re.sub(r"[ \t]+", " ", t).strip() for t in out]
