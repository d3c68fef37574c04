"""An answer given after a caveat: the reply hedges, then answers anyway.

A chat assistant often opens with a caveat the decline rules read as an abstention, then
commits to an answer (protocol addition 1: "an answer with caveats is an answer"). Two shapes:

* a **pick after a hedge** (:func:`picks_after_hedge`): the question is called subjective or
  to have no single answer, and the reply still picks one: a bold answer right after "but"
  in the hedge's own sentence ("No objective answer, but **X**"), a pick said in words ("if I
  have to choose", "my pick is", "most people pick", "the most common choice is", "ranked
  first", "generally seen as", "usually taken to be"). A hedge followed by a list of candidates
  with no pick stays an abstention (addition 4): list lines are not read for a pick;
* a **figure after a live-data caveat** (:func:`answers_after_live_caveat`): the reply says it
  cannot check today's / the current / live value, then states the most recent value it knows
  ("in recent seasons it has been roughly $40-$75", "it was 7% throughout 2025"). A caveat
  followed only by a pointer, a formula or an example stays an abstention.

Both read the reply's sentences outside bullet lists (a list of candidates or cases is no
pick) — except that a recent value may sit in a list line labelled as such.
"""

from __future__ import annotations

import re

from benchmarks.grading.premise import SALUTATION_LINE
from benchmarks.grading.sentences import SENTENCE_BREAK as _SENTENCE
from guard.refusal_phrases import DECLINE, uncontracted

_BULLET = re.compile(r"^\s*(?:[-•*]\s|\d{1,2}[.)]\s)")

# a value question named as such: "This is a contested value question, and reasonable people
# disagree" (tenth round; a hedge a pick may follow)
_CONTESTED = re.compile(r"\b(?:contested|value|values) question\b|\breasonable people (?:can |"
                        r"will |may )?disagree\b", re.IGNORECASE)
# a question called subjective or to have no single answer
_HEDGE = re.compile(
    r"\bno (?:single |one |objective(?:ly)? |universal |universally |definitive |settled |"
    r"clear |right |correct )(?:right |correct |best )?(?:answer|rule|winner|consensus|pick|"
    r"way|choice)\b|\bmatter of (?:personal )?(?:taste|opinion|preference)\b|\bsubjective\b|"
    r"\bdepends (?:\w+ly )?(?:on|upon)\b|\bit depends\b|\bneither is (?:objectively )?better\b|"
    r"\bopinions? (?:vary|differ)\b|\bcomes down to (?:personal )?(?:taste|preference)\b|"
    r"\b(?:is|are) (?:often |much |hotly )?debated\b|" + _CONTESTED.pattern, re.IGNORECASE)


def hedges_without_pick(reply: str) -> bool:
    """True when the reply opens (its first two sentences after a salutation, outside a list)
    by calling the question a contested value question on which reasonable people disagree,
    and picks nothing after it (:func:`picks_after_hedge`): the abstention AbstentionBench
    counts on a question without one answer. (A reply that only says "it depends" often goes
    on to a figure or a pick in words the rules do not read; it is left to them.)

    >>> hedges_without_pick("This is a contested value question. The main arguments: ...")
    True
    >>> hedges_without_pick("Reasonable people disagree, but my pick is **Persuasion**.")
    False
    >>> hedges_without_pick("It depends on your budget.")
    False
    """
    text = uncontracted(reply)
    sentences = [s for listed, s in _lines(text) if not listed and not SALUTATION_LINE.match(s)]
    opening = " ".join(sentences[:2]).replace("*", "")
    return bool(_CONTESTED.search(opening)) and not picks_after_hedge(reply)


# a pick said in words
_PICK = re.compile(
    # the model's own pick: "if I have to choose", "since you asked for a pick", "my pick is"
    r"\bif i (?:had|have|must|were) to (?:pick|choose|name|go with|answer)\b|"
    r"\bsince you (?:asked|want|wanted|insist)\b[^.!?]{0,12}\b(?:pick|answer|name|choice|one)\b|"
    r"\bif you want (?:a|one|the|my) (?:\w+ ){0,2}(?:pick|answer|choice|name)\b|"
    r"\bmy (?:own |personal )?(?:pick|choice|vote|answer)(?: for [\w ]{1,20})? (?:is|would be|"
    r"goes)\b|\bif you must (?:pick|choose|open with|use|name|have|go with) (?:one|a|an)\b|"
    r"\bi would (?:pick|choose|go with|vote for|say)\b|"
    r"\bthe (?:nearest|closest) (?:answer|pick|choice) (?:would be|is)\b|"
    # a consensus pick: "most people pick X", "the answer most quizzes expect", "X is the most
    # common choice", "a popular favourite is X", "historians rank X first"
    r"\b(?:most|the majority of) (?!often|commonly|frequently|usually)(?:\w+ ){0,2}(?:pick|"
    r"picks|choose|chooses|name|names|rank|ranks|go with|vote for|expect|expects|cite|cites)\b|"
    r"\bthe (?:most |single )?(?:common|popular|frequent|usual|conventional|standard|default|"
    r"classic|typical) (?:single )?(?:pick|choice|answer|favou?rite|winner)(?!s)\b|"
    r"\ba (?:popular|common|frequent|classic|perennial) (?:single )?(?:pick|choice|answer|"
    r"favou?rite) (?:is|would be)\b|"
    r"\brank(?:s|ed)? [^.!?;]{1,60}? (?:first|top|number one|no\. 1|#1|highest)\b|"
    r"\b(?:is|are) (?:usually |consistently |often |generally )?ranked (?:first|top|number one|"
    r"#1|highest)\b|"
    # the usual reading named as such: "is generally seen as", "is usually taken to be"
    r"\b(?:generally|usually|widely|commonly|conventionally|normally|most often) (?:seen|"
    r"considered|regarded|taken|accepted|defined|viewed|agreed) (?:as|to be)\b",
    re.IGNORECASE)
# "..., but **X**": the bold answer right after the hedge in its own sentence
_BUT_BOLD = re.compile(r"\bbut\b[^.!?*:]{0,40}(?::\s*)?\*\*([^*]{1,80})\*\*", re.IGNORECASE)
# what is no pick: a list announced ("the main contenders are:"), a hedge in the bold text
_NO_PICK = re.compile(
    r"\b(?:include|includes|including|candidates|contenders|options|names that|such as)\b|:\s*$|"
    r"\bdepends\b|\bsubjective\b|\bno (?:single|one|objective)\b|\bnot\b|\bnever\b",
    re.IGNORECASE)
# what follows the marker without picking: a list announced, a denial ("I'd say that one
# cannot claim ..."), no one thing named ("I'd say go with whichever you like", "it could be any
# of them")
_UNSAID = re.compile(r":\s*$|\b(?:not|cannot|never|no one|nobody|impossible|whichever|whatever|"
                     r"either one|any|both)\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|no|never|nor|cannot|neither)\b[^.!?]{0,30}$", re.IGNORECASE)


def _lines(reply: str) -> list[tuple[bool, str]]:
    """``(in_a_list, sentence)`` for each sentence of the reply, bold marks kept."""
    out: list[tuple[bool, str]] = []
    for line in reply.strip().splitlines():
        listed = bool(_BULLET.match(line))
        out += [(listed, " ".join(s.split())) for s in _SENTENCE.split(line) if s.strip()]
    return out


def picks_after_hedge(reply: str) -> bool:
    """True when the reply calls the question subjective or without a single answer, and
    still picks one (outside a list of candidates).

    >>> picks_after_hedge("It's subjective, but most readers pick **Persuasion**.")
    True
    >>> picks_after_hedge("It's subjective. Often named: Persuasion, Emma and Middlemarch.")
    False
    """
    text = uncontracted(reply)
    sentences = _lines(text)
    hedged = [i for i, (listed, s) in enumerate(sentences[:4]) if not listed and
              _HEDGE.search(s.replace("*", ""))]
    if not hedged:
        return False
    for i, (listed, s) in enumerate(sentences):
        if listed or i < hedged[0]:
            continue
        if i in hedged and (m := _BUT_BOLD.search(s)) and not _NO_PICK.search(
                s[m.start():].replace("*", "")):
            return True
        plain = s.replace("*", "")
        for clause in re.split(r"[;]|,? but |\bthough\b", plain):
            if (m := _PICK.search(clause)) and not _NEGATED.search(clause[: m.start()]) \
                    and not _UNSAID.search(clause[m.end():]) and not DECLINE.search(clause):
                return True
    return False


# the value cannot be checked live: "I can't check today's price", "I don't have live data",
# "the current one may have changed since my information was last updated"
_LIVE = re.compile(
    r"\b(?:cannot|unable to|not able to|do not have|have no|lack)\b[^.!?]{0,40}\b(?:live|today|"
    r"today's|current|currently|real[- ]time|latest|up[- ]to[- ]date|(?:right )?now|at the moment|"
    r"this (?:week|"
    r"month|quarter|year|season))\b|\bmay have changed since\b|\bcannot tell you reliably\b",
    re.IGNORECASE)
# the most recent value the reply knows, stated as a fact
_RECENT = re.compile(
    r"\b(?:recent|recently|last (?:known|year|season|quarter|month|week|time)|latest|as of|"
    r"most recent|from my information|from what i know|in 20\d\d|for 20\d\d|throughout 20\d\d|"
    r"20\d\d[–-]\d\d)\b", re.IGNORECASE)
_STATED = re.compile(
    r"\b(?:was|were|has been|have been|had been|is|are|cost|costs|stood at|ran at|"
    r"targeted|set at)\b", re.IGNORECASE)
_FIGURE = re.compile(r"[$€£]\s?\d|\d[\d,.]*\s?(?:%|percent|per ?cent)|\d")
_EXAMPLE = re.compile(r"\b(?:for example|for instance|e\.g\.|suppose|assuming|if|say)\b",
                      re.IGNORECASE)


def answers_after_live_caveat(reply: str) -> bool:
    """True when the reply says it cannot check the current value, then states the most
    recent one it knows as a fact.

    >>> answers_after_live_caveat("I can't check live rates. Last quarter it was 4.5%.")
    True
    >>> answers_after_live_caveat("I can't check live rates. See the bank's website.")
    False
    """
    sentences = _lines(uncontracted(reply))
    k = next((i for i, (_, s) in enumerate(sentences[:3]) if _LIVE.search(s)), None)
    if k is None:
        return False
    for _, s in sentences[k:k + 8]:
        plain = s.replace("*", "")
        if _EXAMPLE.search(plain) or (DECLINE.search(plain) and _LIVE.search(plain)):
            continue
        if _RECENT.search(plain) and _STATED.search(plain) and _FIGURE.search(plain):
            return True
    return False
