"""Rule-based detection of a model's own refusals.

A reply that refuses ("I cannot answer.", "I'm sorry, but I can't help with that", "I don't
know", "There is not enough information to answer") is passed through as a refusal and never
counted as an answer. The rules look at the opening of the reply (where models put a refusal)
and at short replies as a whole, so an answer that merely mentions "I don't know" later on is
not mistaken for a refusal.
"""

from __future__ import annotations

import re

#: The paper's Refusal Hint (UtilityBench project page), used as the system prompt.
REFUSAL_HINT = (
    "Answer the question only if the available information is sufficient and you are "
    "confident in your answer. Otherwise, respond exactly: I cannot answer."
)
#: The paper's refusal text.
DEFAULT_REFUSAL_TEXT = "I cannot answer."

_CONTRACTIONS = {
    "i'm": "i am", "can't": "cannot", "can not": "cannot", "don't": "do not",
    "won't": "will not", "it's": "it is", "there's": "there is", "isn't": "is not",
    "i'd": "i would", "doesn't": "does not", "i've": "i have", "that's": "that is",
    "what's": "what is", "i'll": "i will",
}
_CONTRACTION_RX = re.compile("|".join(re.escape(k) for k in _CONTRACTIONS), re.IGNORECASE)
_NEG = r"(?:cannot|am unable to|am not able to|will not be able to|unable to|not able to)"
_PATTERNS = [
    rf"\bi {_NEG} (?:answer|help|provide|determine|say|tell|know|give|predict|assist|comply|"
    r"offer|be certain|be sure|confirm|verify|access|browse|recommend|advise|make|calculate)",
    r"\bi do not know\b",
    r"\bi do not have (?:enough|sufficient|access|the (?:necessary|required|relevant)|"
    r"real-time|current|information|any (?:information|data|way)|"
    r"the (?:ability|capability|capabilities|knowledge|means)\b)",
    r"\bthere (?:is|are) (?:not |no )?(?:enough|sufficient|insufficient) "
    r"(?:information|data|context|details)",
    r"\b(?:not enough|insufficient) (?:information|data|context|details)\b",
    r"\b(?:it )?is (?:impossible|not possible) (?:to|for me to) (?:know|say|determine|answer|"
    r"predict|tell)",
    r"\bcannot be (?:determined|known|answered|predicted)\b",
    r"^i am (?:not (?:entirely |completely |really )?(?:sure|certain)|unsure)"
    r"(?: yet| about (?:this|that|it))?\W*$",
    r"\b(?:is|are|remains?) (?:currently |still )?(?:unknown|not (?:yet |fully |well )?"
    r"(?:known|understood))\b",
    r"\b(?:answer|information) is not (?:provided|given|available)\b",
    r"\b(?:passage|text|provision|question|context|excerpt)\b.{0,120}\b(?:does|do) not "
    r"(?:provide|contain|give|include|mention|say|specify|state) "
    r"(?:any |enough |the )?(?:information|details|data|answer)\b",
    r"\b(?:is|are) (?:a |an )?(?:highly |very |entirely |purely |largely |deeply )?"
    r"(?:subjective|matter of (?:personal )?(?:opinion|taste|preference))\b",
    r"^i (?:have|had) no idea\b",
    r"^i am (?:sorry|afraid),? (?:but )?(?:i|that)",
    r"^i am sorry for (?:the|any|your) [\w ]{1,30}, but (?:as|i)\b",
    r"\bas an? (?:text-based |large |helpful |virtual )?(?:ai|language model)\b",
    r"\bas an? (?:[\w-]+ ){0,3}ai (?:assistant|model|chatbot)\b",
    r"\bi am not (?:sure|certain) (?:if|whether|that) i (?:can|could|am able to) "
    r"(?:answer|help|provide)",
    r"\bthere is no way (?:to|for me to|of) (?:know|knowing|tell|telling|predict|determine|say)",
    r"\b(?:no one|nobody) can (?:know|predict|say|tell)\b",
    r"^(?:could|can) you (?:please )?(?:provide|give|share|clarify|specify)\b",
    r"\bi (?:must|have to) (?:decline|refuse)\b",
    r"\bi cannot (?:be )?(?:sure|certain)\b",
    r"\bno (?:definite|definitive|single|correct) answer\b",
    r"\bi (?:would |will )?(?:need|require) (?:some |a bit )?more (?:information|context|"
    r"details)\b",
    # a document the question quotes that lacks the answer: "the contract does not specify"
    r"\b(?:passage|text|contract|lease|will|letter|leaflet|policy|document|email|flyer|label|"
    r"statement|clause|note|message|recipe|handbook|sheet|report|quote|card|form|invoice|"
    r"manual|guide|instructions|article)\b.{0,60}\b(?:does|do) not "
    r"(?:specify|state|say|mention)\b",
    r"^(?:the )?[\w' -]{1,40} (?:is|are|was|were) not (?:specified|stated|given|mentioned)\W*$",
    # a fact the model says it lacks: "I don't have the PIN for your debit card"
    r"\bi do not have (?:the|your|that|this) (?:pin|password|passcode|code|login|account|"
    r"records?|file|details|data|results?|number)\b",
    r"^what is your question\b",
]
_RX = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)
# a reply that talks around the question and concludes it cannot be answered is a hedged
# non-answer: checked on its last sentence
_CONCLUSION = re.compile(
    r"^i cannot answer\b|\b(?:impossible|not possible) (?:for me )?to (?:provide|give|determine|"
    r"say|know|tell|answer)\b|\b(?:you|we|one|i) cannot (?:determine|know|tell|say)\b|"
    r"\bcannot be (?:determined|known|answered)\b",
    re.IGNORECASE,
)
_EXACT = re.compile(r"^\W*i cannot answer\W*$", re.IGNORECASE)
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
    r"i am (?:sorry|glad|happy|excited)[^.!?]{0,60}[.!]|thank(?:s| you)[^.!?]{0,60}[.!]|"
    r"[^.!?]{0,200}\?)$",
    re.IGNORECASE,
)
_PREAMBLE_MAX = 3
# a request for what the model would need, anywhere in the reply's opening: "please provide
# the details", "if you have more details ... let me know", "I'd need to know more"
_ASKS = re.compile(
    r"\bplease (?:provide|share|specify|send|tell me)\b|"
    r"\bif you have (?:a |any )?(?:more |further |"
    r"additional |specific )?(?:details|information)\b|\bneed more details\b|"
    r"\bi would need to know more\b|\b(?:could|can) you (?:please )?(?:provide|give|share|"
    r"clarify|specify)\b|\bi would like to know (?:the|which|what)\b",
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
    r"^i am not (?:entirely |really )?(?:sure|certain)\W*$",
    re.IGNORECASE,
)
_DEFERS = re.compile(
    r"^i (?:will|would|have to|need|can|suggest|recommend)\b|\byou (?:can|could|may|should|"
    r"might)\b|\bplease\b|\bconsult\b|\bcheck\b|\bask\b",
    re.IGNORECASE,
)


def _opening(sentences: list[str]) -> list[str]:
    """The sentences from the first one that is not a salutation, courtesy or echo."""
    k = 0
    while k < min(_PREAMBLE_MAX, len(sentences) - 1) and _PREAMBLE.match(sentences[k]) \
            and not _RX.search(sentences[k]):
        k += 1
    return sentences[k:]


def _overridden(first: str, rest: list[str]) -> bool:
    """A soft hedge in ``first`` followed by a sentence that asserts something."""
    if not rest or not _SOFT.search(first) or _RX.search(first.replace("unknown", "")
                                                        .replace("not known", "")
                                                        .replace("not sure", "")
                                                        .replace("not certain", "")):
        return False
    nxt = " ".join(rest[0].split())
    return not _RX.search(nxt) and not _DEFERS.search(nxt) and len(nxt.split()) >= 3


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
    if _EXACT.match(t) or t.lower().startswith("i cannot answer"):
        return True
    norm = _CONTRACTION_RX.sub(
        lambda m: _CONTRACTIONS[m.group(0).lower()], text.replace("’", "'").replace("*", "")
    )
    sentences = _opening([" ".join(s.split()) for s in _SENTENCE.split(norm.strip())
                          if s.strip()])
    first = sentences[0][:_OPENING_CHARS] if sentences else t
    if _RX.search(first):
        return not _overridden(first, sentences[1:])
    if len(sentences) > 1 and _CONCLUSION.search(sentences[-1]):
        return True
    if _FILLER.match(first) and len(sentences) > 1 and _RX.search(sentences[1][:_OPENING_CHARS]):
        return True
    if sentences and _ASKS_LAST.match(sentences[-1]):
        return True
    return _ASKS.search(" ".join(sentences)[:_ASKS_CHARS]) is not None
