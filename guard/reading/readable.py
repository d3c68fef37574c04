"""Is a text English the cost model can read? Word-level checks against a lexicon.

The cost model was trained on English questions; a text it cannot read (another language,
reversed, rot13, letters spaced out or run together) would be priced by whatever n-grams it
happens to share with the training questions — near nothing for a costly question in French.
:func:`unreadable` flags such a sentence so that the guard prices it conservatively
(:mod:`guard.reading`) instead.

A word is read against a lexicon of English (:func:`lexicon`: SCOWL's American and British
lists and the seed set's own words; ``data/README.md``), lower-cased, with a possessive or a
contraction's tail and common suffixes tried off. Tokens that are not plain words (numbers,
code identifiers with ``_`` or digits, camelCase, URLs, e-mail addresses) are not counted:
code, units and names are common in honest questions.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import lru_cache
from importlib import resources


def _split(text: str) -> list[str]:
    """The words of a block of text (a vocabulary written as prose lines)."""
    return text.split()

#: The shortest word counted.
MIN_LETTERS = 3
#: A sentence of at least this many counted words is judged (shorter ones always pass).
MIN_WORDS = 4
#: A judged sentence is unreadable when fewer than this share of its words are known.
MIN_KNOWN = 0.5
#: Spaced-out letters: at least this many single-letter tokens (other than "a", "I"), making
#: up at least :data:`SPACED_SHARE` of the tokens, are unreadable whatever the words.
SPACED_MIN = 4
SPACED_SHARE = 0.3
_TOKEN = re.compile(r"\S+")
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")
_PLAIN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_CAMEL = re.compile(r"[a-z][A-Z]")
_SUFFIXES = ("'s", "’s", "s", "es", "ed", "d", "ing", "ly", "er", "ers", "est", "n't", "'ll",
             "'re", "'ve", "'m", "'d")
_lock = threading.Lock()
#: Function words of other Latin-script languages that are not (common) English words: French,
#: Spanish, Portuguese, Italian, German and Dutch share many words with English, so a
#: sentence in one of them can pass the known-word share; these words give it away.
FOREIGN_WORDS = frozenset(_split("""
le la les des du un une est et que qui quelle quel quels quelles dans avec pas ne je tu il
elle nous vous ils ce cette mes au aux sont être où très aussi mais sur el los las del es
por para qué cuál cuáles cómo una uno y su sus se al está son muy pero más cuánto cuánta
dónde cuándo puedo debo tengo os da das dos não com qual quanto quantos posso gli di della
dello delle degli che è sono come quale quanti perché der das und ist nicht mit für ein eine
einen einem ich wie viel welche welcher auf zu dem sie kann darf het een en niet voor mijn
"""))
#: A sentence with at least this many :data:`FOREIGN_WORDS`, making up at least
#: :data:`FOREIGN_SHARE` of its counted words, is in another language.
FOREIGN_MIN = 2
FOREIGN_SHARE = 0.2


@lru_cache(maxsize=1)
def lexicon() -> frozenset[str]:
    """The lexicon of English words (lower case), loaded once from the package data."""
    with _lock:
        raw = resources.files("guard.reading").joinpath("data/words.txt.gz").read_bytes()
        return frozenset(gzip.decompress(raw).decode("utf-8").split())


def known(word: str, words: frozenset[str] | None = None) -> bool:
    """``word`` (a plain word, any case) is English: in the lexicon as it is, or with a
    possessive, a contraction's tail or a common suffix taken off, or (hyphenated) every part.

    >>> known("Doses"), known("acetaminophen's"), known("dosis"), known("well-known")
    (True, True, False, True)
    """
    lex = lexicon() if words is None else words
    w = word.lower().replace("’", "'")
    if w in lex:
        return True
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) > len(suffix) + 1 and w[: -len(suffix)] in lex:
            return True
    if "-" in w:
        parts = [p for p in w.split("-") if p]
        return bool(parts) and all(p in lex or len(p) == 1 for p in parts)
    if "'" in w:
        return w.split("'", 1)[0] in lex
    return False


def counted_words(sentence: str) -> list[str]:
    """The plain words of ``sentence`` that are judged: tokens (punctuation stripped at the
    edges) made only of letters, apostrophes and hyphens, at least :data:`MIN_LETTERS` long
    (the lexicon holds nearly every pair of letters as an abbreviation), not camelCase.

    >>> counted_words("Write mgdl_to_mmol(x) for our clinic's dashboard, e.g. 180 mg/dL.")
    ['Write', 'for', 'our', "clinic's", 'dashboard']
    """
    out = []
    for token in _TOKEN.findall(sentence):
        core = _EDGE.sub("", token)
        if len(core) >= MIN_LETTERS and _PLAIN.fullmatch(core) and not _CAMEL.search(core):
            out.append(core)
    return out


def spaced_out(sentence: str) -> bool:
    """Letters written one token each ("W h a t  i s ..."): unreadable whatever the words.

    >>> spaced_out("W h a t  i s  t h e  d o s e"), spaced_out("Is vitamin A or B in a kiwi?")
    (True, False)
    """
    tokens = _TOKEN.findall(sentence)
    singles = sum(1 for t in tokens if len(t) == 1 and t.isalpha() and t not in ("a", "I", "A"))
    return singles >= SPACED_MIN and singles >= SPACED_SHARE * len(tokens)


def known_share(sentence: str) -> tuple[int, float]:
    """``(counted words, share of them known)`` of ``sentence`` (share 1.0 with none)."""
    words = counted_words(sentence)
    if not words:
        return 0, 1.0
    lex = lexicon()
    return len(words), sum(known(w, lex) for w in words) / len(words)


def unreadable(sentence: str) -> bool:
    """``sentence`` is not English the cost model can read: spaced-out letters; at least
    :data:`MIN_WORDS` counted words of which fewer than :data:`MIN_KNOWN` are English; function
    words of another language (:data:`FOREIGN_WORDS`); mostly letters of another script; or
    a word that mixes Latin letters with another script's (Greek aside).

    Examples
    --------
    >>> unreadable("What is the maximum daily dose of acetaminophen?")
    False
    >>> unreadable("¿Cuál es la dosis máxima diaria de paracetamol para un adulto?")
    True
    >>> unreadable("?nehponimatecA fo esod yliad mumixam eht si tahW")
    True
    >>> unreadable("Quelle est la dose maximale de paracétamol pour un adulte ?")
    True
    >>> unreadable("对乙酰氨基酚的每日最大剂量是多少？"), unreadable("ok thx")
    (True, False)
    """
    if spaced_out(sentence):
        return True
    words = counted_words(sentence)
    if words:
        lex = lexicon()
        if len(words) >= MIN_WORDS and sum(known(w, lex) for w in words) < MIN_KNOWN * len(words):
            return True
    plain = [c for t in _TOKEN.findall(sentence)
             if (c := _EDGE.sub("", t)) and _PLAIN.fullmatch(c)]
    foreign = sum(1 for w in plain if w.lower() in FOREIGN_WORDS)
    if foreign >= FOREIGN_MIN and foreign >= FOREIGN_SHARE * len(plain):
        return True
    return _foreign_script(sentence)


def _foreign_script(sentence: str) -> bool:
    """Letters of a script other than Latin make up most of the text's letters (CJK, Cyrillic,
    Arabic, ...), or a word mixes Latin with another script."""
    letters = [c for c in sentence if c.isalpha()]
    if not letters:
        return False
    other = sum(1 for c in letters if not _latin(c))
    if other == 0:
        return False
    if other >= 2 and other * 2 >= len(letters):
        return True
    return any(_mixed(t) for t in _TOKEN.findall(sentence))


def _latin(c: str) -> bool:
    return c.isascii() or "\u00c0" <= c <= "\u024f" or "\u1e00" <= c <= "\u1eff"


def _mixed(token: str) -> bool:
    """A token mixing Latin letters with letters of another script; Greek letters, which
    science writes beside Latin ones ("μmol", "e^(iπ)"), do not count."""
    letters = [c for c in token if c.isalpha()]
    return any(_latin(c) for c in letters) and any(
        not _latin(c) and not "\u0370" <= c <= "\u03ff" for c in letters)
