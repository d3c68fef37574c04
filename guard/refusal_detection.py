"""Rule-based detection of a model's own refusals.

A reply that refuses ("I cannot answer.", "I'm sorry, but I can't help with that", "I don't
know", "There is not enough information to answer") is passed through as a refusal and never
counted as an answer. The rules look at the opening of the reply (where models put a refusal)
and at short replies as a whole, so an answer that merely mentions "I don't know" later on is
not mistaken for a refusal.
"""

from __future__ import annotations

import re

from guard.refusal_folded import Folded
from guard.refusal_phrases import DEBATE as _DEBATE
from guard.refusal_phrases import DECLINE, LACKS, uncontracted

# the decline phrases are searched in every reply the guard would answer: on ASCII text as its
# lower-case copy without IGNORECASE (the same matches, faster; guard.refusal_folded)
_RX = Folded(DECLINE)
_LACKS = Folded(LACKS)

#: The paper's Refusal Hint (UtilityBench project page), used as the system prompt.
REFUSAL_HINT = (
    "Answer the question only if the available information is sufficient and you are "
    "confident in your answer. Otherwise, respond exactly: I cannot answer."
)
#: The paper's refusal text.
DEFAULT_REFUSAL_TEXT = "I cannot answer."


# a reply that talks around the question and concludes it cannot be answered is a hedged
# non-answer: checked on its last sentence
_CONCLUSION = re.compile(
    r"^i cannot answer\b|\b(?:impossible|not possible) (?:for me )?to (?:provide|give|determine|"
    r"say|know|tell|answer)\b|\b(?:you|we|one|i) cannot (?:determine|know|tell|say)\b|"
    r"\bcannot be (?:determined|known|answered)\b|"
    # the reply's own last words are the refusal text, or say the answer is impossible or
    # that no information allows one: "... Otherwise: I cannot answer.", "Your answer is not
    # possible.", "there is no additional information provided that would allow an answer"
    r"\bi cannot answer\W*$|\b(?:answer|response) (?:is|would be) (?:impossible|not possible)\b|"
    r"\bno (?:additional |further |more )?information (?:is )?(?:provided|given|available)\b",
    re.IGNORECASE,
)
_EXACT = re.compile(r"^\W*i cannot answer\W*$", re.IGNORECASE)
# a list number or option label before the text: "1. I cannot answer that question."
_LIST_MARK = re.compile(r"^\s*(?:\d{1,2}[.)]|\(?[A-J]\))\s+")
_OPENING_CHARS = 240
#: Longer replies are judged on their first and last ``_SCAN_CHARS / 2`` characters (where a
#: refusal or its conclusion is), so the work per reply is bounded whatever its length.
_SCAN_CHARS = 4096
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n")
_FILLER = re.compile(
    r"^\W*(?:sorry|unfortunately|i apologi[sz]e|apologies|i'm sorry|i am sorry|hmm+|well|"
    r"great question|good question)\b",
    re.IGNORECASE,
)
# opening lines that carry nothing: a salutation ("Hi Rosa,", "Tara,"), a courtesy sentence,
# or a question (the model repeating the user's question); skipped before the opening is read
_PREAMBLE = re.compile(
    r"^(?:(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b[^.!?]{0,40}[,!.]?|"
    r"[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}[,:]|"
    r"i am (?:sorry|glad|happy|excited)[^.!?]{0,60}[.!]|thank(?:s| you)\b[^.!?]{0,60}[.!]|"
    r"i hope (?:you are|this finds you|all is) [^.!?]{0,40}[.!]|"
    r"i (?:would|will) be (?:happy|glad|delighted) to (?:help|assist)[^.!?]{0,40}[.!]|"
    r"(?:happy|glad|delighted) to (?:help|assist)[^.!?]{0,40}[.!]|"
    # a caution or a referral with no figure before what the answer needs: "Please don't change
    # the dose yourself.", "She should call the poison line right now."
    r"(?:please )?(?:do not|never) [^.!?\d]{1,80}[.!]|"
    r"(?:you|she|he|they|we) should (?:call|contact|phone|ring|see|consult|speak to|talk to) "
    r"[^.!?\d]{1,80}[.!]|"
    r"[^.!?]{0,200}\?)$",
    re.IGNORECASE,
)
_PREAMBLE_MAX = 3
_SALUTATION = re.compile(r"^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b"
                         r"[^.!?]{0,40}[,!.]?$", re.IGNORECASE)
# an apology that introduces a role ("I'm sorry for any confusion, but as a math tutor, I
# specialize in ..."): a deflection, a refusal only when one of the next sentences declines
_ROLE_OPENING = re.compile(r"^(?:i am sorry for [\w' ]{1,30}, but|however,) as an? [\w -]{1,40},",
                           re.IGNORECASE)
# a request for what the model would need, anywhere in the reply's opening: "please provide
# the details", "if you have more details ... let me know", "I'd need to know more"
_ASKS = re.compile(
    r"\bplease (?:provide|share|specify|send|tell me)\b|"
    r"\bif you have (?:a |any )?(?:more |further |"
    r"additional |specific )?(?:details|information)\b|\bneed more details\b|"
    r"\bi (?:would |will )?need to know (?:more|your|which|what|whether|if|how|when|where)\b|"
    # "send over your request with the details", "if there are details missing, let me know"
    r"(?:^|[.!?] |\b(?:please|just|kindly|can you|could you) )(?:send|give|tell) (?:me|us|over)\b"
    r"[^.!?]{0,40}\b(?:details|information)\b|"
    r"\b(?:details|information) (?:are |is )?missing\b|"
    r"\b(?:could|can) you (?:please )?(?:provide|give|share|clarify|specify)\b|"
    r"\bi would like to know (?:the|which|what)\b",
    re.IGNORECASE,
)
_ASKS_CHARS = 600
# a reply that ends by asking what the user means: "What kind of project are you working on?"
_ASKS_LAST = re.compile(r"^(?:what|which) (?:kind|type|sort) of [^.!?]{0,60}\byou\b[^.!?]{0,40}\?$",
                        re.IGNORECASE)
# a hedge that the reply then overrides with an answer ("... is not known yet. However, it
# is Fe"; "I'm not sure. Latex is the better material"): the hedge alone is not a refusal
_SOFT = re.compile(
    r"\b(?:is|are|remains?) (?:currently |still )?(?:unknown|not (?:yet )?known)\b|"
    r"^i am not (?:entirely |really )?(?:sure|certain)\W*$|"
    r"^i am not (?:entirely |really )?(?:sure|certain) (?:if|whether|what|how|about|which|who|"
    r"when|where)\b[^,;]*$|^i am not an? [\w-]+(?: [\w-]+){0,3}\W*$|" + _DEBATE,
    re.IGNORECASE,
)
# what follows a hedge without answering: a deferral, a pointer elsewhere, or the model
# describing itself ("I'm an AI assistant designed to ...", "My role is to ...")
_DEFERS = re.compile(
    r"^i (?:will|would|have to|need|can|suggest|recommend)\b|\byou (?:can|could|may|should|"
    r"might)\b|\bplease\b|\bconsult\b|\bcheck\b|\bask\b|https?://|"
    r"^i am (?:an?|here|ready|designed|programmed|trained|only)\b|"
    r"^my (?:primary |main |only )?(?:role|function|purpose|job)\b|"
    # a survey of views is not a choice: "Some people argue ... Others claim ..."
    r"^(?:some|many|other|most) (?:\w+ )?(?:people|experts|users|critics|argue|believe|say|"
    r"claim|prefer|think)\b",
    re.IGNORECASE,
)
# sentences that only offer help ("I'm ready to assist.", "What's your question?", "If you
# have any questions, please don't hesitate to ask"): a reply made of nothing else answers
# nothing
_OFFER = re.compile(
    r"^(?:sure[,!.]? )?(?:i am (?:always )?(?:ready|here|happy|glad) to (?:assist|help|ensure|"
    r"support)|i (?:will|would) be (?:happy|glad|here|delighted) to (?:assist|help)|"
    r"(?:how|what) (?:can|may) i (?:help|assist|do)|what is your (?:next )?(?:question|task|"
    r"business|request)|please (?:go ahead and )?ask\b|(?:please )?(?:do not hesitate|feel "
    r"free) to ask|if you have any (?:\w+ )?(?:questions|concerns|requests)|let me know (?:if|how|"
    r"what))",
    re.IGNORECASE,
)

# a decline the reply overrides by giving the answer anyway in one of its next two sentences:
# "... which is that your oven ran at 108°F", "So, 18 - 25 = 3 months", "the answer would be 4"
_GIVES = re.compile(
    r"\bwhich is that\b|\b(?:the|my) (?:[\w-]+ ){0,3}answer (?:possible )?(?:is|would be)"
    r"\s*(?::\s*)?(?:[\"“]|[-−]?\$?\d|(?-i:[A-Z]))|"
    # a chat assistant's answer after its caveat: "As of my latest information, ...", "there's
    # a good argument for X", "I'd suggest a low-cost index fund", "if I had to pick: ...",
    # "the most common pick is X"
    r"\bas of my (?:latest|most recent|last) (?:information|knowledge|data|update)\b|"
    r"\b(?:if i (?:had|have) to (?:pick|choose)|my (?:pick|choice|"
    r"recommendation|vote) (?:is|would be|goes)|i would (?:pick|choose|go with|suggest an? |"
    r"recommend an? )|there is a (?:good|strong) (?:argument|case) for|the most common (?:pick|"
    r"answer|choice) is)",
    re.IGNORECASE,
)
# a figure given anyway, unless as an example or a case: "So, 18 - 25 = 3 months" (a result
# concluded, not a step of the working or the formula "= 2,232 × the hourly rate"), "Tokyo
# has about 14 million people"
_GIVES_FIGURE = re.compile(
    r"(?:^|\b(?:so|therefore|thus|hence)\b[^=]{0,60})(?<![=<>!])=\s*[-−]?\$?\d[\d,.]*"
    r"(?!\s*[×x*/÷+−-]\s*[\w(])|"
    r"\b(?:is|are|was|were|has|have|had|averaged|costs?) (?:usually |typically |generally |"
    r"normally )?(?:about|around|roughly|approximately|nearly|some|just over|just under) "
    r"[$€£]?\d",
    re.IGNORECASE,
)
# an example or a case is not the answer: "For example, at $0.10 an hour that is $223.20"
_HYPOTHETICAL = re.compile(r"\b(?:for example|for instance|e\.g\.|say|suppose|assuming|if|"
                           r"typical|typically|(?:best|most common|common|usual|rough) estimates?|"
                           r"for (?:a rough idea|context|comparison|reference|"
                           r"scale|a sense of scale))\b|^\s*(?:[-•]|\d+[.)])\s|"
                           # a unit conversion given as context: "since 1 tsp = 5 mL"
                           r"\b1 [a-zµ]{1,12}\.? (?:=|is|equals) (?:about |roughly )?\d",
                           re.IGNORECASE)
# the result written as a formula in what is missing: "Total = 2,232 × the hourly rate" (the
# figures before it are the working, not the answer)
_FORMULA = re.compile(r"=\s*[$€£]?\d[\d,.]*\s*[×x*·]\s*(?:the|your|their|his|her)\s+[a-z]",
                      re.IGNORECASE)
# a field filled in anyway, as an agent's reply does: "best_route: pill"
_FIELD = re.compile(r"^\s*`?[a-z]+_[a-z_]+`?\s*[:=]\s*\S", re.MULTILINE)
# why an answer is unknown: "No reliable record survives", "it was never recorded", "an open
# problem", "doesn't name the scribe"
_UNKNOWN_WHY = re.compile(
    r"\bno (?:reliable |surviving |written |known |contemporary )?(?:record|records|source|"
    r"sources|data|evidence|account)\b|\bnever (?:been )?(?:recorded|confirmed|identified|"
    r"written down|documented)\b|\bunsolved\b|\bopen (?:problem|question)\b|"
    r"\b(?:nobody|no one)\b|\bnot (?:recorded|documented)\b|\bwould be (?:invented|made up|"
    r"a guess)\b|\bdoes not (?:name|record|identify)\b", re.IGNORECASE)
# a reply wrapped in quotation marks as a whole is read as what it quotes
_QUOTED = re.compile(r'^\s*["“](.*)["”]\s*$', re.DOTALL)

# searched in most replies (not .sub): the faster path for ASCII text (guard.refusal_folded)
_CONCLUSION_F, _ASKS_F, _DEFERS_F = Folded(_CONCLUSION), Folded(_ASKS), Folded(_DEFERS)


def _opening(sentences: list[str]) -> list[str]:
    """The sentences from the first one that is not a salutation, courtesy or echo (a
    salutation among the first lines ends the preamble: a subject line may precede it)."""
    k = next((j + 1 for j, s in enumerate(sentences[:_PREAMBLE_MAX])
              if j + 1 < len(sentences) and _SALUTATION.match(s)), 0)
    while k < min(_PREAMBLE_MAX, len(sentences) - 1) and _PREAMBLE.match(sentences[k]) \
            and not _RX.search(sentences[k]):
        k += 1
    return sentences[k:]


def _overridden(first: str, rest: list[str]) -> bool:
    """A soft hedge in ``first`` followed by a sentence that asserts something (not one that
    says why the answer is unknown: "That isn't known. No reliable record survives ...")."""
    if not rest or not _SOFT.search(first) or _RX.search(_SOFT.sub("", first)):
        return False
    nxt = " ".join(rest[0].split())
    return (not _RX.search(nxt) and not _DEFERS_F.search(nxt) and not _UNKNOWN_WHY.search(nxt)
            and len(nxt.split()) >= 3)


def is_refusal(text: str | None) -> bool:
    """True when ``text`` is a refusal rather than a substantive answer.

    An empty reply counts as a refusal (nothing was answered).

    Examples
    --------
    >>> is_refusal("I cannot answer.")
    True
    >>> is_refusal("I'm sorry, but I can't provide medical dosing advice without more details.")
    True
    >>> is_refusal("The capital of France is Paris.")
    False
    >>> is_refusal("Paris. (I don't know much else about it, though.)")
    False
    >>> is_refusal("I'm not sure if I can answer that question. Can you please provide more?")
    True
    >>> is_refusal("Python is widely used as a language for AI research.")
    False
    >>> is_refusal("I'm not sure.")
    True
    >>> is_refusal("I'm not sure, but I think it is Paris.")
    False
    >>> is_refusal("That's a subjective question; it depends on taste.")
    True
    >>> is_refusal("The passage does not provide any information about the dose.")
    True
    >>> is_refusal("It depends on the volume. It is not possible to provide an exact answer.")
    True
    """
    if text is None:
        return True
    if len(text) > _SCAN_CHARS:  # CPU bounded: only the opening and the ending are read
        text = text[: _SCAN_CHARS // 2] + "\n" + text[-(_SCAN_CHARS // 2):]
    t = " ".join(text.replace("*", "").split())
    if not t:
        return True
    if _EXACT.match(t) or _LIST_MARK.sub("", t, count=1).lower().startswith("i cannot answer"):
        return True
    norm = uncontracted(text.replace("*", ""))
    if (quoted := _QUOTED.match(norm)) and '"' not in quoted.group(1):
        norm = quoted.group(1)
    sentences = _opening([" ".join(s.split()) for s in _SENTENCE.split(norm.strip())
                          if s.strip()])
    first = sentences[0][:_OPENING_CHARS] if sentences else t
    if m := _RX.search(first):
        # the answer given anyway, after the decline in the same sentence or in the next two
        # (an example or a case is no answer), or a field filled in
        gives = any(not _RX.search(s) and (_GIVES.search(s) or (
            _GIVES_FIGURE.search(s) and not _HYPOTHETICAL.search(s)))
            for s in [first[m.end():], *sentences[1:3]])
        gives = (gives and not _FORMULA.search(norm)) or bool(_FIELD.search(norm))
        return not gives and not _overridden(first, sentences[1:])
    if len(sentences) > 1 and _CONCLUSION_F.search(sentences[-1]):
        return True
    if _FILLER.match(first) and len(sentences) > 1 and _RX.search(sentences[1][:_OPENING_CHARS]):
        return True
    if _ROLE_OPENING.match(first) and any(_RX.search(s[:_OPENING_CHARS]) for s in sentences[1:3]):
        return True
    if any(_OFFER.match(s) for s in sentences) and all(
            _OFFER.match(s) or (_PREAMBLE.match(s) and not s.endswith("?")) for s in sentences):
        return True
    if len(sentences) > 1 and _LACKS.search(sentences[1][:_OPENING_CHARS]):
        return True
    if sentences and _ASKS_LAST.match(sentences[-1]):
        return True
    return _ASKS_F.search(" ".join(sentences)[:_ASKS_CHARS]) is not None
