"""Whether a reply gives what it contains as its answer (issue 35, the ninth and tenth gold
samples; the tenth and eleventh rounds of rules).

A reply can hold the reference without committing to it, and the readers of the ninth sample
(fresh SmolLM2 replies) found that to be most of the rules' wrong credits. The rules here
withhold the credit when the reply:

* **backs every option in turn**: "A) ... shock. B) The dryer will make the water boil
  because ... C) ... D) ..." (every option of a multiple-choice question, three or more, each
  opened with its letter);
* **picks a letter, then calls the thing another option**: "A) Confidentiality clause. The
  contract clause is a non-compete clause" (B's text asserted with "is a");
* **names the reference only to reject it**: 'the nickname "water bear" is not a proper one';
* **holds the reference only inside code**: a fenced block of two lines or more, to a question
  that asks for no code ("'atom': 'Na'" in a broken function is no symbol given);
* **copies the question's text back whole**: seven words in ten of what the question gives
  before its asking sentence, in spans of six words or more (two passages echoed back hold
  the answer they hold without giving it);
* **answers Yes/No the other way**: its first sentence states the question's own words with a
  negation ("The inside of a parked car ... cannot reach dangerous temperatures" to "Can the
  inside of a closed car ... reach dangerous temperatures?") when the reference is "Yes";
* **has letters that disagree with its choice** (:func:`letter_conflict`): it opens with a
  letter that is no option ("C) No" to options A and B), puts a bare other letter on a line of
  its own, or opens with a letter whose text is other options' words ("B) fully binding");
* **only lists options** (:func:`lists_options_only`): every line an option's letter and text,
  two or more letters.

It reads as an **answer** a reply that declines and then states "the correct (or right) answer
is ...", or that opens with an option's letter and text ("D) Plasma" then "Please provide the
answer with the correct letter."); and as the letter chosen one followed by its working in
parentheses ("D (45 ÷ 60 = 75%)", :func:`letter_before_working`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.grading.premise import negates_question
from benchmarks.grading.sentences import SENTENCE_BREAK as _SENTENCE
from benchmarks.grading.text import final_question
from guard.answers import normalize_text, option_named_by, options_in

# an option's letter opening the reply, a line or a sentence: "A) ...", "B. ...", "(C) ..."
_MARKER = re.compile(r"(?:^|\n|(?<=[.!?])\s+)\s*\(?([A-J])[).:]\s+\S", re.MULTILINE)
_OPENS_WITH_OPTION = re.compile(r"^\W*\(?([A-J])[).:]\s*([^\n]+)")
_ANSWER_STATED = re.compile(r"\bthe (?:correct|right) answer"
                            r"(?: to (?:this|the|your) question)? (?:is|would be)\b\s*:?\s*\S",
                            re.IGNORECASE)
_REJECTED_AFTER = re.compile(r"^\W*(?:is|are|was|were)(?: not|n t)\b|^\W*(?:isn|aren|wasn|"
                             r"weren) t\b")
_FENCED = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_ASKS_CODE = re.compile(r"\b(?:code|function|script|program|snippet|python|regex|sql|query|"
                        r"command)\b", re.IGNORECASE)
_ECHO_SPAN = 6
_ECHO_SHARE = 0.7


def backs_every_option(reply: str, question: str | None) -> bool:
    """Every option of the question (three or more) opens a line or a sentence of the reply
    with its letter, in the question's order: the reply goes through them all and commits to
    none."""
    options = options_in(question or "")
    if len(options) < 3:
        return False
    letters = [m.group(1) for m in _MARKER.finditer(reply.replace("*", ""))]
    want = sorted(options)
    it = iter(letters)
    return all(any(x == w for x in it) for w in want)


def asserts_other_option(reply: str, question: str | None, letter: str) -> bool:
    """After its first line, a sentence of the reply says the thing asked about "is a/an/the"
    another option's text, unnegated: "A) Confidentiality clause" then "The contract clause is
    a non-compete clause."."""
    options = options_in(question or "")
    others = {k: normalize_text(v) for k, v in options.items() if k != letter}
    body = reply.strip().split("\n", 1)
    rest = body[1] if len(body) > 1 else " ".join(_SENTENCE.split(body[0])[1:])
    for sentence in _SENTENCE.split(rest):
        low = f" {normalize_text(sentence)} "
        for text in others.values():
            if len(text.split()) < 2 or len(text) < 8:
                continue  # "Yes", "No", "4": too short to be asserted by accident
            if re.search(rf" (?:is|was) (?:(?:an?|the) )?{re.escape(text)} ", low):
                return True  # "is not a ..." and "isn't a ..." do not match
    return False


_LABEL_LINE = re.compile(r"^\W{0,3}\(?([A-J])[).:]?[ \t]*(.*?)\s*$", re.MULTILINE)
_BARE_LETTER = re.compile(r"^\s*\(?([A-J])[).:]?\s*$", re.MULTILINE)
_LETTER_THEN_WHY = re.compile(r"^\W*([A-J])\s+\(")


def letter_conflict(reply: str, question: str | None, letter: str | None) -> bool:
    """The reply's letters do not agree with the option it is read as choosing (eleventh
    round): it opens with a letter that is no option of the question ("C) No" to a Yes/No
    question with options A and B), a later line is a bare other letter ("The Court of Justice
    of the European Union" then "A)"), or the opening letter's text is another option's and
    none of its own ("B) fully binding" where C is "Fully binding like adult contract")."""
    options = options_in(question or "")
    if not options:
        return False
    body = reply.replace("*", "").strip()
    opens = _OPENS_WITH_OPTION.match(body)
    if opens and opens.group(1) not in options:
        return True
    if any(x.group(1) in options and x.group(1) != letter for x in _BARE_LETTER.finditer(body)):
        return True
    if letter is not None and opens and opens.group(1) == letter:
        label = set(normalize_text(opens.group(2)).split())
        own = set(normalize_text(options[letter]).split())
        others = [set(normalize_text(v).split()) for k, v in options.items() if k != letter]
        return not label & own and any(len(label & o) >= 2 for o in others)
    return False


def lists_options_only(reply: str, question: str | None) -> bool:
    """Every non-empty line of the reply is an option's letter (a bullet allowed before it)
    with that option's text, and there are two or more different letters: "A) Central
    Processing Unit" then "- D) Central Power Unit" chooses neither."""
    options = options_in(question or "")
    lines = [x for x in reply.replace("*", "").splitlines() if x.strip()]
    if len(lines) < 2 or not options:
        return False
    letters = set()
    for line in lines:
        m = _LABEL_LINE.match(line)
        if m is None or m.group(1) not in options or option_named_by(
                m.group(2), options) != m.group(1):
            return False
        letters.add(m.group(1))
    return len(letters) >= 2


def letter_before_working(reply: str, question: str | None) -> str | None:
    """The option letter a reply opens with when its working follows in parentheses: "D (45 ÷
    60 = 75%)"."""
    options = options_in(question or "")
    m = _LETTER_THEN_WHY.match(reply.replace("*", ""))
    return m.group(1) if m and m.group(1) in options else None


def rejected_only(reply: str, aliases: Sequence[str]) -> bool:
    """Every mention of a reference alias is followed by "is not" / "isn't" (within a quoted
    name: 'the nickname "water bear" is not a proper one')."""
    found = False
    for alias in (a for a in aliases if a.strip()):
        pattern = re.compile(rf"\b{re.escape(alias)}(?:e?s)?\b[\"'”’]?", re.IGNORECASE)
        for m in pattern.finditer(reply):
            found = True
            if not _REJECTED_AFTER.match(normalize_text(reply[m.end(): m.end() + 30])):
                return False
    return found


def only_in_code(reply: str, aliases: Sequence[str], question: str | None) -> bool:
    """Every mention of a reference alias lies inside a fenced code block of two lines or
    more, and the question asks for no code."""
    if _ASKS_CODE.search(question or ""):
        return False
    blocks = [m.span(1) for m in _FENCED.finditer(reply) if m.group(1).strip().count("\n") >= 1]
    if not blocks:
        return False
    found = False
    for alias in (a for a in aliases if a.strip()):
        for m in re.finditer(rf"(?<!\w){re.escape(alias)}(?!\w)", reply, re.IGNORECASE):
            found = True
            if not any(s <= m.start() < e for s, e in blocks):
                return False
    return found


def restates_question(reply: str, question: str | None) -> bool:
    """The reply copies back most of the text the question gives (seven words in ten of it,
    before the asking sentence, in spans of six words or more): a passage echoed back whole
    holds the answer the passage holds without giving it. A reply that copies one sentence of
    the passage, the one that answers, selects it and is not caught."""
    text = question or ""
    asking = final_question(text)
    given = normalize_text(text[: text.rfind(asking)] if asking in text else text).split()
    words = normalize_text(reply).split()
    if len(words) < _ECHO_SPAN or len(given) < 2 * _ECHO_SPAN:
        return False
    grams = {tuple(words[i: i + _ECHO_SPAN]) for i in range(len(words) - _ECHO_SPAN + 1)}
    mask = [False] * len(given)
    for i in range(len(given) - _ECHO_SPAN + 1):
        if tuple(given[i: i + _ECHO_SPAN]) in grams:
            mask[i: i + _ECHO_SPAN] = [True] * _ECHO_SPAN
    return sum(mask) >= _ECHO_SHARE * len(given)


def answers_no(reply: str, question: str | None) -> bool:
    """The reply's first sentence states the question's own words negated ("cannot" read as
    "can not")."""
    first = _SENTENCE.split(reply.strip())[0] if reply.strip() else ""
    first = re.sub(r"\bcannot\b", "can not", first, flags=re.IGNORECASE)
    return bool(question) and negates_question(first, question or "")


def answers_despite_decline(reply: str, item: Mapping[str, Any]) -> bool:
    """A reply the refusal rules read as a decline that answers anyway: after its first
    sentence it states "the correct (or right) answer is ...", or, to a multiple-choice question, it
    opens with an option's letter and that option's text."""
    sentences = [x for x in _SENTENCE.split(reply.strip()) if x.strip()]
    if any(_ANSWER_STATED.search(x) for x in sentences[1:]):
        return True
    question = item.get("question") or ""
    if item.get("answer_type") == "choice" and (m := _OPENS_WITH_OPTION.match(reply.strip())):
        options = options_in(question)
        return m.group(1) in options and option_named_by(m.group(2), options) == m.group(1)
    return False


__all__ = ["answers_despite_decline", "answers_no", "asserts_other_option",
           "backs_every_option", "letter_before_working", "letter_conflict",
           "lists_options_only", "only_in_code", "rejected_only", "restates_question"]
