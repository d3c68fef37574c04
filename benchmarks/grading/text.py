"""Grading a free-text reply against reference aliases.

A normalized alias must appear in the normalized reply as whole words (a plural ``s``/``es``
is allowed). A "yes"/"no" alias must open the reply, or, for "no", the reply's first sentence
states the question with a negation ("The body does not lose ..." to "Does the body lose
...?"). When the question itself contains the reference, finding it in the reply proves
nothing:

* an either/or question ("a fruit or a vegetable?") credits the reference only when the reply
  commits to it against the alternative: the first sentence of the reply that names either
  side (framing sentences such as "To determine which ..." skipped) names the reference and not,
  unnegated, the alternative;
* otherwise the reference counts only outside the spans the reply copies from the question
  (three words or more): "The person accused of a crime is a felon" does not say "the accused".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from benchmarks.grading.numbers import NUMBER_WORDS, committed, grade_number
from benchmarks.grading.premise import negates_question
from benchmarks.grading.sentences import SENTENCE_BREAK as _SENTENCE
from guard.answers import normalize_text

_NEGATORS = {"not", "no", "never", "t", "nor", "neither", "than", "instead"}
_STOP = {
    "a", "an", "the", "is", "are", "was", "were", "be", "it", "its", "it s", "you", "your",
    "should", "do", "does", "did", "on", "in", "at", "to", "of", "for", "from", "with", "by",
    "put", "one", "which", "what", "mainly", "actually", "just", "some", "being", "out",
    "into", "go", "goes", "side", "s", "this", "that", "whether", "can", "could", "would",
    "will", "about",
}
_FRAMING = re.compile(
    r"^(?:to (?:determine|answer|decide|find|figure|understand)|let s|let us|in order to|"
    r"when it comes to|this is a|that is a|answer to this question)\b"
)
_ASIDE = re.compile(r"\s*\([^()\n]{1,40}\)")
# a reply that names an answer and then revises it: "... is Neptune, but it's actually Uranus",
# "It's said that Michelangelo painted it, but it was actually done by Leonardo", "However,
# it's also believed that another author wrote the novel"
_REVISES = re.compile(
    r"\b(?:but|however),? (?:it'?s|it is|it was|they are|he was|she was)? ?(?:actually|also "
    r"believed|in fact)\b|\bit (?:was|is) actually\b|\bactually (?:done|written|painted|made|"
    r"invented|discovered) by\b", re.IGNORECASE)
# several candidates offered as the term: 'also known as "parental income" or "child support"',
# 'the term ... is the "plaintiff" and the term ... is the "defendant"', "electrostatic
# attraction, electron sharing, or covalent bonding"
_CANDIDATES = re.compile(
    r"[\"“][^\"”\n]{1,40}[\"”][^\"“”.!?\n]{0,80}\b(?:or|and)\b[^\"“”.!?\n]{0,80}[\"“][^\"”\n]{1,40}"
    r"[\"”]|"
    r"\b\w[\w' -]{0,30}, \w[\w' -]{0,30},? or \w[\w' -]{0,30}")
_ECHO_WORDS = 3
_LONG_ECHO = 6
# the second word of a compound's name: "chlorine dioxide" is not chlorine, "carbon monoxide"
# is not carbon
_COMPOUND = re.compile(
    r"^(?:\w*(?:oxide|chloride|fluoride|bromide|iodide|sulfide|sulphide|nitride|hydride|"
    r"carbide|cyanide)|sulfate|sulphate|sulfite|nitrate|nitrite|carbonate|phosphate|chlorate|"
    r"hypochlorite|peroxide|acid)s?$")


def _same(word: str, want: str) -> bool:
    """``word`` is ``want``, or another form of a verb ``want`` names by its -ing form
    ("wash their hands" says "washing their hands")."""
    if word == want:
        return True
    if want.endswith("ing") and len(want) > 5:
        stem = want[:-3]
        return word in (stem, stem + "e", stem + "s", stem + "es", stem + "ed", stem + "ed")
    return False


def _hits(words: list[str], alias: list[str]) -> list[int]:
    """Start positions of ``alias`` in ``words`` (the last word may carry a plural s/es, a
    word named by its -ing form may be another form of the verb), not where it only begins a
    compound's name (``chlorine dioxide``)."""
    n = len(alias)
    out = []
    for i in range(len(words) - n + 1):
        if not all(_same(w, a) for w, a in zip(words[i : i + n - 1], alias[:-1], strict=True)):
            continue
        if i + n < len(words) and _COMPOUND.match(words[i + n]):
            continue
        last, want = words[i + n - 1], alias[-1]
        if last in (want + "s", want + "es") or _same(last, want):
            out.append(i)
    return out


def _negated(words: list[str], at: int, clause: int = 0) -> bool:
    """A negator in the three words before ``at``, or earlier in its clause (from word
    ``clause`` on): "Lean forward, don't tilt your head back" does not choose "back"."""
    return any(w in _NEGATORS for w in words[min(clause, max(0, at - 3)) : at])


def final_question(question: str) -> str:
    """The asking part of an item: its last sentence that ends in "?" (after a "Question:"
    label if there is one), else all of it."""
    text = re.split(r"\bQuestion:\s*", question)[-1]
    asks = [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.rstrip().endswith("?")]
    return asks[-1] if asks else text


def alternatives(question: str, aliases: Sequence[str]) -> set[str]:
    """Words naming the other side(s) of an either/or question that offers the reference.

    For "X or Y" (and "X, Y, or Z") the last content word of each side before "or" and the
    first after it, less the reference's words and words the question uses elsewhere.
    """
    ask = normalize_text(final_question(question))
    raw = final_question(question)
    alias_words = {w for a in aliases for w in a.split()}
    found: set[str] = set()
    for m in re.finditer(r"\bor\b", raw):
        before = re.split(r"[:;]", raw[: m.start()])[-1]
        after = normalize_text(re.split(r"[?,.;:]", raw[m.end():], maxsplit=1)[0]).split()
        right = next((w for w in after if w not in _STOP), after[-1] if after else None)
        sides = [right] if right else []
        parts = before.split(",")
        if len(parts) > 1 and not parts[-1].strip():  # "X, or Y": the side is the part before
            parts = parts[:-1]
        for k in range(len(parts) - 1, -1, -1):
            # a list item is short: a long clause before the last one ("what is it called in
            # English, systolic or diastolic?") is the question, not an alternative
            if k < len(parts) - 1 and len(parts[k].split()) > 4:
                # ... unless its last word is the reference, listed in parallel with the
                # others: "sleep on its back, on its stomach, or on its side?"
                tail = [w for w in normalize_text(parts[k]).split() if w not in _STOP]
                if tail and tail[-1] in alias_words:
                    sides.append(tail[-1])
                break
            words = [w for w in normalize_text(parts[k]).split() if w not in _STOP]
            if words:
                sides.append(words[-1])
            if len(parts[k].split()) > 4 or k == 0:
                break
        side_words = {w for w in sides if w}
        if not side_words & alias_words and not any(
            _hits(s.split(), a.split()) for s in side_words for a in aliases
        ):
            continue  # this "or" does not offer the reference
        found |= side_words
    found -= alias_words
    # a word the question also uses outside the choice ("common cold" vs "cold weather")
    # would be read as naming the alternative
    words = ask.split()
    return {w for w in found if words.count(w) <= 1}


def _clause_starts(sentence: str) -> list[int]:
    """For each word of the normalized ``sentence``, the index of the first word of its
    clause (clauses end at a comma, semicolon, colon, dash or "but": "not left but right")."""
    starts: list[int] = []
    for part in re.split(r"[,;:]|\s[-–—]\s|(?=\bbut\b)", sentence):
        n = len(normalize_text(part).split())
        starts += [len(starts)] * n
    return starts


def _commits(reply: str, aliases: list[list[str]], alts: set[str]) -> bool:
    """Whether the first sentence that names a side names the reference and not, unnegated,
    the alternative, and no later sentence puts both sides back on the table ("tomatoes can
    be considered a fruit or a vegetable") or takes the other side against the reference
    ("which is indeed a vegetable but not a fruit")."""
    chosen = None
    for sentence in _SENTENCE.split(reply):
        words = normalize_text(sentence).split()
        if not words or _FRAMING.match(" ".join(words)):
            continue
        starts = _clause_starts(sentence)
        if len(starts) != len(words):  # punctuation read differently: word windows only
            starts = list(range(len(words)))
        ref = any(not _negated(words, i, starts[i]) for a in aliases for i in _hits(words, a))
        alt = any(not _negated(words, i, starts[i]) for w in alts for i in _hits(words, [w]))
        if chosen is None and (ref or alt):
            chosen = ref and not alt
            if not chosen:
                return False
        elif chosen and ref and alt and _offered_together(words, aliases, alts):
            return False
        elif chosen and alt and not ref and any(_hits(words, a) for a in aliases):
            return False  # later, the alternative said and the reference negated: "is
            # indeed a vegetable but not a fruit"
    return bool(chosen)


def _offered_together(words: list[str], aliases: list[list[str]], alts: set[str]) -> bool:
    """The reference and an alternative joined by "or" within a few words ("a fruit or a
    vegetable")."""
    refs = [i for a in aliases for i in _hits(words, a)]
    others = [j for w in alts for j in _hits(words, [w])]
    ors = [k for k, w in enumerate(words) if w == "or"]
    return any(min(i, j) < k < max(i, j) and abs(i - j) <= 8
               for i in refs for j in others for k in ors)


def _echo_mask(words: list[str], question_words: list[str], n: int = _ECHO_WORDS
               ) -> list[bool]:
    """Which reply words lie inside a span of ``n`` (three) or more words copied from the
    question."""
    grams = {tuple(question_words[i : i + n]) for i in range(len(question_words) - n + 1)}
    mask = [False] * len(words)
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) in grams:
            for j in range(i, i + n):
                mask[j] = True
    return mask


def _given_outside_echo(reply: str, aliases: list[str], question: str, ask: str) -> bool:
    """Whether the reply gives an alias the question's own text (a passage, a quoted
    document) contains. A mention inside a long span (six words or more) copied from that text
    counts only when copied from a sentence of it that answers what is asked (of the sentences
    holding an alias, those sharing the most content words with the asking sentence): "The
    starter, a mixture of flour and water that contains wild yeast and lactic acid bacteria,
    serves ..." copies the passage's first sentence, not "the bacteria give the bread its
    characteristic sour taste"."""
    alias_words = {w for a in aliases for w in a.split()}
    asked = {w for w in ask.split() if len(w) > 3 and w not in _STOP and w not in alias_words}
    told = [normalize_text(x).split() for x in _SENTENCE.split(question)]
    def overlap(t: list[str]) -> int:
        return len(asked & ({w.rstrip("s") for w in t} | set(t)))

    holding = [t for t in told if any(_hits(t, a.split()) for a in aliases)]
    best = max((overlap(t) for t in holding), default=0)
    answering = [t for t in holding if overlap(t) == best]
    every = [w for t in told for w in t]
    for sentence in _SENTENCE.split(reply):
        words = normalize_text(sentence).split()
        copied = _echo_mask(words, every, _LONG_ECHO)
        from_answer = [False] * len(words)
        for t in answering:
            from_answer = [x or y for x, y in zip(from_answer, _echo_mask(words, t, _LONG_ECHO),
                                                  strict=True)]
        for a in aliases:
            for i in _hits(words, a.split()):
                span = range(i, i + len(a.split()))
                if not any(copied[j] for j in span) or all(from_answer[j] for j in span):
                    return True
    return False


def grade_text(reply: str, references: Sequence[str], question: str | None = None) -> bool:
    """Whether ``reply`` gives one of ``references`` (see the module docstring)."""
    return grade_text_detail(reply, references, question)[0]


def grade_text_detail(reply: str, references: Sequence[str], question: str | None = None
                      ) -> tuple[bool, str | None]:
    """:func:`grade_text` and why the rules are unsure, if they are: ``reference_in_question``
    when the question itself contains the reference (the commitment and echo rules decided).

    A reference interrupted by an aside in parentheses is still given ("the total number of
    payment (compounding) periods"), and a reference that is a number ("3", "-4 °F") is graded
    as a number (:mod:`.numbers`: "**3.0 m.**", "−4 °F") when every alias is one ("10 May" and
    "May 10" name a date).
    """
    ok, unsure = _text_detail(reply, references, question)
    if not ok and (bare := _ASIDE.sub("", reply)) != reply:
        ok = _text_detail(bare, references, question)[0]
    if ok and _REVISES.search(reply):  # named, then revised to something else
        return False, unsure
    if ok and _renamed(reply, references):  # "photosynthesis is called cellular respiration"
        return False, unsure
    if ok and _only_in_another_sense(reply, references):  # "the person who will inherit"
        return False, unsure
    if ok and question and _only_contained(reply, references, question):
        return False, unsure  # "blood that contains red pigment": no colour said of the blood
    if ok and question and _only_paired(reply, references, question):
        return False, unsure  # "a mixture of nitrogen and oxygen": named, not asserted
    if ok and _number_word_alias(references) and (got := committed(reply, question)) is not None \
            and got.how in ("answer_is", "bold", "opening") and not grade_number(
                reply, [n for n in (_numeric(r) for r in references) if n], question):
        return False, unsure  # "10 justices, with nine appointed": the number committed is 10
    if ok and (listed := _CANDIDATES.sub(" ", reply)) != reply and \
            not _text_detail(listed, references, question)[0]:
        return False, unsure  # named only as one of several candidates
    numeric = [n for n in (_numeric(r) for r in references) if n is not None]
    if not ok and numeric and len(numeric) == len(references):
        ok = grade_number(reply, numeric, question)
    return ok, unsure


_RENAMED = re.compile(r"^\s*(?:is|are) (?:called|known as|referred to as|named) (\w+)")


def _renamed(reply: str, references: Sequence[str]) -> bool:
    """Every mention of the reference says it is called something else: "The process of
    photosynthesis is called cellular respiration"."""
    low = normalize_text(reply)
    aliases = [normalize_text(r) for r in references if normalize_text(r)]
    words = {w for a in aliases for w in a.split()}
    seen = False
    for a in aliases:
        for m in re.finditer(rf"\b{re.escape(a)}\b", low):
            seen = True
            after = _RENAMED.match(low[m.end():])
            if after is None or after.group(1) in words:
                return False
    return seen


_MODALS = {"will", "can", "may", "might", "must", "shall"}
_SUBJECTS = {"who", "which", "that", "it", "they", "you", "we", "i", "he", "she", "this",
             "there", "what", "one", "people", "person"}
_BE_HAVE = {"is", "was", "are", "were", "be", "been", "being", "has", "have", "had", "s"}


def _only_in_another_sense(reply: str, references: Sequence[str]) -> bool:
    """Every mention of a one-word reference that is also a grammar word is that grammar word:
    the modal verb ("the person who will inherit" is no "will" document), the verb "leave"
    ("left to eat", "has left")."""
    words = normalize_text(reply).split()
    aliases = [normalize_text(r) for r in references if normalize_text(r)]
    if any(_hits(words, a.split()) for a in aliases if " " in a):
        return False
    found = False
    for a in (a for a in aliases if " " not in a):
        for i in _hits(words, [a]):
            found = True
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if not ((a in _MODALS and before in _SUBJECTS)
                    or (a == "left" and (after == "to" or before in _BE_HAVE))):
                return False
    return found


_CONTAINS = {"contains", "contain", "containing", "contained"}
_ENDS_PHRASE = {"and", "or", "which", "that", "who", "but", "so", "as", "because"}


def _only_contained(reply: str, references: Sequence[str], question: str) -> bool:
    """Every mention of the reference modifies a noun the reply says something contains
    ("a type of blood that contains red pigment" to "What colour is the blood?" says what the
    blood holds, not its colour), when the question asks nothing about what things contain."""
    if _CONTAINS & set(normalize_text(question).split()):
        return False
    words = normalize_text(reply).split()
    aliases = [normalize_text(r).split() for r in references if normalize_text(r)]
    found = False
    for a in aliases:
        for i in _hits(words, a):
            found = True
            j = i + len(a)
            if not (i >= 1 and words[i - 1] in _CONTAINS and j < len(words)
                    and words[j] not in _ENDS_PHRASE and words[j] not in _STOP):
                return False
    return found


def _only_paired(reply: str, references: Sequence[str], question: str) -> bool:
    """Every mention of the reference is the second of "X and <reference>" where X is a word
    the question itself names (the thing asked about, not the answer): "a mixture of nitrogen
    and oxygen" to "the nitrogen displaces which gas?" names oxygen without saying it is the
    one ("the larynx or voice box" names one thing twice; "Na and the atomic number" goes on
    to another field)."""
    words = normalize_text(reply).split()
    aliases = [normalize_text(r).split() for r in references if normalize_text(r)]
    alias_words = {w for a in aliases for w in a}
    told = {w for w in normalize_text(question).split()
            if len(w) > 3 and w not in _STOP and w not in alias_words}
    found = False
    for a in aliases:
        for i in _hits(words, a):
            found = True
            if not (i >= 2 and words[i - 1] == "and" and words[i - 2] in told):
                return False
    return found


def _number_word_alias(references: Sequence[str]) -> bool:
    """Whether the reference is a count written both ways ("nine" and "9")."""
    return any(normalize_text(r) in NUMBER_WORDS for r in references) and any(
        _numeric(r) is not None for r in references)


_NUMERIC_REF = re.compile(r"^\s*([-−+]?[$€£]?\d[\d,]*(?:\.\d+)?)\s*([^\d\s]{1,6})?\s*$")
_MONTHS = {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
           "dec"}


def _numeric(reference: str) -> str | None:
    """The number a reference is, with at most a unit after it ("-4 °F" and "-4°F" are -4),
    else ``None`` ("10 May" is a date)."""
    m = _NUMERIC_REF.match(reference)
    if m is None or (m.group(2) or "").lower().rstrip(".") in _MONTHS:
        return None
    return m.group(1).replace("−", "-")


def _text_detail(reply: str, references: Sequence[str], question: str | None
                 ) -> tuple[bool, str | None]:
    low = normalize_text(reply)
    words = low.split()
    aliases = [a for a in (normalize_text(r) for r in references) if a]
    yes_no = [a for a in aliases if a in {"yes", "no"}]
    if yes_no and words and words[0] in yes_no:
        return True, None
    # "The body does not lose most of its heat through the head" answers "Does the body lose
    # most of its heat through the head?" with No in words
    first = _SENTENCE.split(reply.strip())[0] if reply.strip() else ""
    if "no" in yes_no and question and negates_question(first, question):
        return True, None
    aliases = [a for a in aliases if a not in {"yes", "no"}]
    ask = normalize_text(final_question(question)) if question else ""
    in_question = [a for a in aliases if _hits(ask.split(), a.split())]
    alts = alternatives(question or "", in_question) if in_question else set()
    unsure = "reference_in_question" if in_question else None
    if alts:  # an either/or question offering the reference: the reply must choose it
        return _commits(reply, [a.split() for a in aliases], alts), unsure
    outside = [a for a in aliases if a not in in_question]
    if any(_hits(words, a.split()) for a in outside):
        told = normalize_text(question or "").split()
        in_text = [a for a in outside if _hits(told, a.split())]
        if len(in_text) < len(outside) and any(
                _hits(words, a.split()) for a in outside if a not in in_text):
            return True, unsure
        if _given_outside_echo(reply, in_text, question or "", ask):
            return True, unsure
    mask = _echo_mask(words, ask.split())
    return any(not any(mask[i : i + len(a.split())])
               for a in in_question for i in _hits(words, a.split())), unsure
