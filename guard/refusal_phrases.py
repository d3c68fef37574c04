"""The phrases a decline is written in, for :mod:`guard.refusal_detection`.

``DECLINE`` matches an opening sentence that declines: the model cannot or will not answer,
does not know or have the information, asks for details it would need, says the document given
does not say, calls the question a matter of taste, or says it is not the right tool. The
reading rules (where in a reply to look, and what overrides a hedge) are in
:mod:`guard.refusal_detection`; replies are normalized with ``CONTRACTION_RX`` first
("can't" is "cannot").
"""

from __future__ import annotations

import re

CONTRACTIONS = {
    "i'm": "i am", "can't": "cannot", "can not": "cannot", "don't": "do not",
    "won't": "will not", "it's": "it is", "there's": "there is", "isn't": "is not",
    "i'd": "i would", "doesn't": "does not", "i've": "i have", "that's": "that is",
    "what's": "what is", "i'll": "i will", "haven't": "have not", "didn't": "did not",
    "aren't": "are not", "couldn't": "could not",
    # typed without the apostrophe ("I cant answer", "i dont know", "im not sure")
    "i cant": "i cannot", "i dont": "i do not", "im": "i am",
}
CONTRACTION_RX = re.compile(
    "|".join(rf"\b{re.escape(k)}\b" if k[-1].isalpha() and "'" not in k else re.escape(k)
             for k in sorted(CONTRACTIONS, key=len, reverse=True)), re.IGNORECASE)


def uncontracted(text: str) -> str:
    """``text`` with curly apostrophes straightened and contractions written out, as the
    decline phrases are matched ("I can’t" is "I cannot").

    >>> uncontracted("I can’t say; it's late")
    'I cannot say; it is late'
    """
    return CONTRACTION_RX.sub(lambda m: CONTRACTIONS[m.group(0).lower()],
                              text.replace("’", "'"))
_NEG = r"(?:cannot|am unable to|am not able to|will not be able to|unable to|not able to)"
# a document the question quotes that lacks the answer: "the contract does not specify"
DOCUMENTS = (
    r"(?:passage|text|contract|lease|will|letter|leaflet|policy|document|email|flyer|label|"
    r"statement|clause|note|message|recipe|handbook|sheet|report|quote|card|form|invoice|"
    r"manual|guide|instructions|article|memo|notice|agreement|receipt|prescription|spreadsheet|"
    r"table|excerpt|question|context|description|post|chart|page)"
)
LACKS_PATTERN = (
    rf"\b{DOCUMENTS}\b.{{0,60}}\b(?:does|do) not "
    r"(?:specify|state|say|mention|tell us|tell you|indicate)\b"
)
LACKS = re.compile(LACKS_PATTERN, re.IGNORECASE)
# "... is often debated", "... is a topic of ongoing debate" with no answer in the sentence:
# a soft hedge (a next sentence may still choose: "However, if I had to choose, ...")
DEBATE = (r"^[\w' -]{1,80} (?:is|are|remains?) (?:often |much |hotly )?(?:debated|(?:a |the )?"
           r"(?:(?:subject|matter|topic) of )?(?:much |ongoing |endless )?debate)\b[^,;]*$")
_TASTE = (r"(?:most (?:beautiful|interesting|fascinating|amazing|awesome|fun|attractive|"
          r"elegant)|best|prettiest|nicest|greatest|coolest|tastiest|ugliest|worst|loveliest)")
PATTERNS = [
    rf"\bi {_NEG} (?:(?:safely|honestly|really|reliably|accurately) )?(?:answer|help|provide|"
    r"determine|say|tell|know|give|predict|assist|comply|compute|grade|"
    r"offer|be certain|be sure|confirm|verify|access|browse|recommend|advise|make|calculate|"
    # what a tool-using agent is asked to do: "I cannot return the exact number"
    r"return|fill|look up|fetch|retrieve|check|find|estimate|guarantee|read|see|share|"
    r"look (?:\w+ ){0,2}up|work out|track|locate|view|open|pull up)\b",
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
    r"^(?:could|can) you (?:please )?(?:provide|give|share|clarify|specify|tell me (?:more|"
    r"which|what|how|when|where|whether|if|your|the))\b",
    r"\bi (?:must|have to) (?:decline|refuse)\b",
    r"\bi cannot (?:be )?(?:sure|certain)\b",
    r"\bno (?:definite|definitive|single|correct|one-size-fits-all|universal|right) answer\b",
    r"\bi (?:would |will )?(?:need|require) (?:some |a bit )?more (?:information|context|"
    r"details)\b",
    LACKS_PATTERN,
    r"^(?:the )?[\w' -]{1,40} (?:is|are|was|were) not (?:specified|stated|given|mentioned)\W*$",
    # the same with a longer subject, the sentence a whole: "The exact date on which the record
    # will be broken is not specified."
    r"^(?:the |an? )?[\w' ,-]{1,160} (?:is|are|was|were) not (?:specified|stated|given|"
    r"mentioned|provided)\W*$",
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
    DEBATE,
    # what the model says it has no means of or no information about: "I have no way of
    # accessing your records", "I don't have that information", "I have no details about it",
    # "That is not something I can know"
    r"\bi have no way (?:of|to)\b",
    r"\bi do not have (?:(?:that|this|such|the|your|any|specific|exact|those|these) )?"
    r"(?:information|details|data)\b",
    r"\bi have no (?:specific |such |further |real-time |current )?(?:information|details|data|"
    r"knowledge|record|records)\b",
    r"\bnot something i (?:can|could|am able to|have|know)\b",
    # the user left out what the answer needs: "You haven't told me the price"
    r"\byou (?:have not|did not) (?:told|tell|given|give|provided|provide|mentioned|mention|"
    r"said|say|shared|share|specified|specify|included|include) (?:me|us|the|your|how|what|which|"
    r"when|where|whether)\b",
    # what was given lacks it: "The information provided does not include the dose",
    # "Nothing in the passage says ...", "The contract is silent on the notice period"
    r"\b(?:information|details|data) (?:you )?(?:provided|given|supplied)\b[^.!?]{0,30}\b"
    r"(?:does|do) not (?:include|say|mention|specify|state|contain|give|tell)\b",
    rf"\bnothing in the {DOCUMENTS} (?:says|mentions|states|tells|indicates|specifies|gives)\b",
    rf"\b{DOCUMENTS}\b[^.!?]{{0,60}}\b(?:is|are) silent (?:on|about|as to|regarding)\b",
    # a scope the model says it is limited to: "I can only assist with scheduling and not with
    # answering questions", "I can only answer this if the information is sufficient"
    r"\bi can only (?:answer|assist|help|respond)\b[^.!?]{0,60}\b(?:if|unless|and not|not with)\b",
    # the model says it gives no answer: "I'm afraid of not providing a response", "Your
    # answer is not possible"
    r"\bnot (?:providing|giving) (?:you )?(?:a |an |any )?(?:response|answer)\b",
    r"\b(?:answer|response) (?:is|would be) (?:impossible|not possible)\b",
    # an opening that sends the user to a professional instead of answering: "To check your
    # level, you should consult a healthcare professional."
    r"^(?:to [^,]{1,80}, )?you (?:should|need to|will need to|must) (?:consult|contact|see|"
    r"ask|speak (?:to|with)) (?:an?|your) (?:[\w-]+ ){0,2}(?:professional|doctor|physician|"
    r"pharmacist|lawyer|attorney|solicitor|advis[oe]r|expert|specialist|provider|accountant)\b"
    r"[^;:]{0,60}$",
    # a chat assistant's declines (issue 35): nobody can know the answer ("Nobody knows.",
    # "No one can reliably predict that", "That's unknowable"); there is no single answer
    # ("There's no single best language", "There isn't one fund that's best", "Neither is
    # objectively better"); the answer depends on what the question leaves out ("It depends on
    # where you are:", "Depends."); what it would need ("I'd need the distance", "I can't work
    # that out without ...", "That can't be worked out from the information given")
    r"^(?:honestly,? )?(?:nobody|no one) (?:really )?(?:knows|can (?:honestly |reliably |really |"
    r"truly )?(?:know|say|tell|predict|give|answer|be sure|pick))\b",
    r"\b(?:nobody|no one)(?: \w+){0,3} knows\b",
    r"^unknown\W*$",
    r"\bno way for (?:me|anyone|us)\b",
    r"\bunknowable\b",
    r"\bthere is no (?:(?:single|one|objective|objectively|universal|universally|settled|right|"
    r"correct|definitive|simple|clear|exact|fixed|official|factual)\s+)+\W?\w+",
    r"^no single \w+ (?:can|is)\b",
    r"\bthere is not (?:one|a single|an? (?:objective|universal|single))\b",
    r"^neither (?:one |option |choice |style |of them )?(?:is|are) (?:\w+ly )?\W?(?:the\W+ )?"
    r"(?:better|worse|correct|right|wrong|best|more \w+|\w+er)\b",
    r"^(?:(?:it|that|this|the answer) )?(?:all |really |largely |heavily |entirely |mostly |"
    r"mainly |partly )?depends(?:\W*$| (?:\w+ly )?(?:on|upon|whether|how|what|which|where|when|"
    r"who|if)\b)",
    r"^(?:the |your |his |her |their )?(?:right |correct |exact |safe |usual )?(?:answer|dose|"
    r"amount|price|cost|time|result|number|figure|deposit|adjustment|change|rate|fee|length|"
    r"duration|timing|schedule|requirements?|rules?)(?: to (?:this|the|your) question)? "
    r"(?:all |really |largely |entirely |mostly )?depends? (?:\w+ly )?(?:on|upon)\b",
    # "Whether it is dangerous depends entirely on which medicines ..."
    r"^whether [^.!?]{1,80} depends (?:\w+ly )?(?:on|upon)\b",
    # unsure what to say, ending the opening sentence: "..., and I'm not sure what to say." (not
    # "..., but I'll tell you")
    r"\bi am not (?:really |entirely )?(?:sure|certain) what to (?:say|tell you|suggest)\W*$",
    r"\b(?:is|are) not (?:available|recorded|documented)\W*$",
    r"\bcan be (?:highly |very |quite )?subjective\b",
    r"^(?:it|that|this|the answer) varies\b",
    r"\bonce i know\b",
    r"\byou cannot (?:work out|tell|know|calculate|determine|find)\b[^.!?]{0,40}\b(?:alone|"
    r"without)\b",
    r"^i (?:would |will )?(?:need|require)\b",
    r"\bi cannot (?:honestly |really )?(?:pick|choose|name|work (?:that|this|it) out|"
    r"figure (?:that|this|it) out|pin (?:it|that|this) down|make (?:that|this|the) (?:call|"
    r"decision)|do that)\b",
    r"\bcannot be (?:worked out|calculated|computed|said|pinned down|decided|settled|given as)\b",
    r"\b(?:does|do) not (?:give|provide|contain|have) enough (?:information|detail|data)\b",
    r"\bcomes down to (?:personal )?(?:taste|preference|opinion)\b",
    r"\b(?:is|are) not enough to (?:find|work out|determine|calculate|answer|tell|say|know|get)\b",
]
DECLINE = re.compile("|".join(f"(?:{p})" for p in PATTERNS), re.IGNORECASE)
