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

from benchmarks.grading.premise import negates_question
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
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ECHO_WORDS = 3
# the second word of a compound's name: "chlorine dioxide" is not chlorine, "carbon monoxide"
# is not carbon
_COMPOUND = re.compile(
    r"^(?:\w*(?:oxide|chloride|fluoride|bromide|iodide|sulfide|sulphide|nitride|hydride|"
    r"carbide|cyanide)|sulfate|sulphate|sulfite|nitrate|nitrite|carbonate|phosphate|chlorate|"
    r"hypochlorite|peroxide|acid)s?$")


def _hits(words: list[str], alias: list[str]) -> list[int]:
    """Start positions of ``alias`` in ``words`` (the last word may carry a plural s/es), not
    where it only begins a compound's name (``chlorine dioxide``)."""
    n = len(alias)
    out = []
    for i in range(len(words) - n + 1):
        if words[i : i + n - 1] != alias[:-1]:
            continue
        if i + n < len(words) and _COMPOUND.match(words[i + n]):
            continue
        last, want = words[i + n - 1], alias[-1]
        if last in (want, want + "s", want + "es"):
            out.append(i)
    return out


def _negated(words: list[str], at: int) -> bool:
    return any(w in _NEGATORS for w in words[max(0, at - 3) : at])


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


def _commits(reply: str, aliases: list[list[str]], alts: set[str]) -> bool:
    for sentence in _SENTENCE.split(reply):
        words = normalize_text(sentence).split()
        if not words or _FRAMING.match(" ".join(words)):
            continue
        ref = any(not _negated(words, i) for a in aliases for i in _hits(words, a))
        alt = any(not _negated(words, i) for w in alts for i in _hits(words, [w]))
        if ref or alt:
            return ref and not alt
    return False


def _echo_mask(words: list[str], question_words: list[str]) -> list[bool]:
    """Which reply words lie inside a span of three or more words copied from the question."""
    grams = {tuple(question_words[i : i + _ECHO_WORDS])
             for i in range(len(question_words) - _ECHO_WORDS + 1)}
    mask = [False] * len(words)
    for i in range(len(words) - _ECHO_WORDS + 1):
        if tuple(words[i : i + _ECHO_WORDS]) in grams:
            for j in range(i, i + _ECHO_WORDS):
                mask[j] = True
    return mask


def grade_text(reply: str, references: Sequence[str], question: str | None = None) -> bool:
    """Whether ``reply`` gives one of ``references`` (see the module docstring)."""
    return grade_text_detail(reply, references, question)[0]


def grade_text_detail(reply: str, references: Sequence[str], question: str | None = None
                      ) -> tuple[bool, str | None]:
    """:func:`grade_text` and why the rules are unsure, if they are: ``reference_in_question``
    when the question itself contains the reference (the commitment and echo rules decided)."""
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
    if any(_hits(words, a.split()) for a in aliases if a not in in_question):
        return True, unsure
    mask = _echo_mask(words, ask.split())
    return any(not any(mask[i : i + len(a.split())])
               for a in in_question for i in _hits(words, a.split())), unsure
