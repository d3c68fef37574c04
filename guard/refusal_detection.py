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
    # typed without the apostrophe ("I cant answer", "i dont know", "im not sure")
    "i cant": "i cannot", "i dont": "i do not", "im": "i am",
}
_CONTRACTION_RX = re.compile(
    "|".join(rf"\b{re.escape(k)}\b" if k[-1].isalpha() and "'" not in k else re.escape(k)
             for k in sorted(_CONTRACTIONS, key=len, reverse=True)), re.IGNORECASE)
_NEG = r"(?:cannot|am unable to|am not able to|will not be able to|unable to|not able to)"
# a document the question quotes that lacks the answer: "the contract does not specify"
_LACKS_PATTERN = (
    r"\b(?:passage|text|contract|lease|will|letter|leaflet|policy|document|email|flyer|label|"
    r"statement|clause|note|message|recipe|handbook|sheet|report|quote|card|form|invoice|"
    r"manual|guide|instructions|article|memo|notice|agreement|receipt|prescription|spreadsheet|"
    r"table)\b.{0,60}\b(?:does|do) not "
    r"(?:specify|state|say|mention)\b"
)
_LACKS = re.compile(_LACKS_PATTERN, re.IGNORECASE)
# "... is often debated", "... is a topic of ongoing debate" with no answer in the sentence:
# a soft hedge (a next sentence may still choose: "However, if I had to choose, ...")
_DEBATE = (r"^[\w' -]{1,80} (?:is|are|remains?) (?:often |much |hotly )?(?:debated|(?:a |the )?"
           r"(?:(?:subject|matter|topic) of )?(?:much |ongoing |endless )?debate)\b[^,;]*$")
_TASTE = (r"(?:most (?:beautiful|interesting|fascinating|amazing|awesome|fun|attractive|"
          r"elegant)|best|prettiest|nicest|greatest|coolest|tastiest|ugliest|worst|loveliest)")
_PATTERNS = [
    rf"\bi {_NEG} (?:answer|help|provide|determine|say|tell|know|give|predict|assist|comply|"
    r"offer|be certain|be sure|confirm|verify|access|browse|recommend|advise|make|calculate|"
    # what a tool-using agent is asked to do: "I cannot return the exact number"
    r"return|fill|look up|fetch|retrieve|check|find|estimate|guarantee|read|see|share)\b",
    r"\bi do not know\b",
    r"\b(?:i|but) do not have (?:any |personal |specific )?(?:experience or )?knowledge "
    r"(?:about|of|on)\b",
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
    # a role that says it is not made for the task: "I'm not equipped to", "is not designed to"
    r"\bi am not (?:equipped|designed|programmed|capable|qualified) (?:to|of|for)\b|"
    r"\bnot (?:equipped|programmed|qualified) to (?:provide|answer|assist|help|give|handle)\b",
    r"\bas an? (?:text-based |large |helpful |virtual )?(?:ai|language model)\b",
    r"\bas an? (?:[\w-]+ ){0,3}ai (?:assistant|model|chatbot)\b",
    r"\bi am not (?:sure|certain) (?:if|whether|that) i (?:can|could|am able to) "
    r"(?:answer|help|provide)",
    r"\bthere is no way (?:to|for me to|of) (?:know|knowing|tell|telling|predict|determine|say)",
    r"\b(?:no one|nobody) can (?:know|predict|say|tell)\b",
    r"^(?:could|can) you (?:please )?(?:provide|give|share|clarify|specify)\b",
    r"\bi (?:must|have to) (?:decline|refuse)\b",
    r"\bi cannot (?:be )?(?:sure|certain)\b",
    r"\bno (?:definite|definitive|single|correct|one-size-fits-all|universal|right) answer\b",
    r"\bi (?:would |will )?(?:need|require) (?:some |a bit )?more (?:information|context|"
    r"details)\b",
    _LACKS_PATTERN,
    r"^(?:the )?[\w' -]{1,40} (?:is|are|was|were) not (?:specified|stated|given|mentioned)\W*$",
    # a fact the model says it lacks: "I don't have the PIN for your debit card"
    r"\bi do not have (?:the|your|that|this) (?:pin|password|passcode|code|login|account|"
    r"records?|file|details|data|results?|number)\b",
    r"^what is your question\b",
    # a role the model says it is not, as a whole sentence: "I'm not a weather-tracking app."
    r"^i am not an? [\w-]+(?: [\w-]+){0,3}\W*$",
    # unsure what to say or whether something holds, said as a whole sentence (no "but ...")
    r"^i am not (?:entirely |really )?(?:sure|certain) (?:if|whether|what|how|about|which|who|"
    r"when|where)\b[^,;]*$",
    # a question of taste called no definite thing or a debate: "The most beautiful city is
    # not a specific location, but rather ...", "The prettiest theme is a debate ..."
    rf"\b{_TASTE}\b[\w' -]{{0,60}} (?:is|are) not an? (?:specific|single|particular|"
    r"definitive|definite|fixed|objective) [\w -]{1,40}, but\b",
    _DEBATE,
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
    r"i am (?:sorry|glad|happy|excited)[^.!?]{0,60}[.!]|thank(?:s| you)\b[^.!?]{0,60}[.!]|"
    r"i hope (?:you are|this finds you|all is) [^.!?]{0,40}[.!]|"
    r"i (?:would|will) be (?:happy|glad|delighted) to (?:help|assist)[^.!?]{0,40}[.!]|"
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
    """A soft hedge in ``first`` followed by a sentence that asserts something."""
    if not rest or not _SOFT.search(first) or _RX.search(_SOFT.sub("", first)):
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
    if _ROLE_OPENING.match(first) and any(_RX.search(s[:_OPENING_CHARS]) for s in sentences[1:3]):
        return True
    if any(_OFFER.match(s) for s in sentences) and all(
            _OFFER.match(s) or (_PREAMBLE.match(s) and not s.endswith("?")) for s in sentences):
        return True
    if len(sentences) > 1 and _LACKS.search(sentences[1][:_OPENING_CHARS]):
        return True
    if sentences and _ASKS_LAST.match(sentences[-1]):
        return True
    return _ASKS.search(" ".join(sentences)[:_ASKS_CHARS]) is not None
