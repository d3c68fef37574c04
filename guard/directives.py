"""Sentences that only tell the model how to answer: "Think step by step.", "Be concise.",
"Respond only in valid JSON.", "Use the tools when needed.", "Reply in Spanish.".

Applications send such a line as the whole system prompt, or in it. It asks for nothing: the
request detector doubts many of them ("Think step by step." ``P(asks)`` 0.34) and the cost
model, trained on questions, prices them as one ("Use the tools when needed." 7.5 raw), so a
trivia question under one was priced 2.7-6.4 instead of 0.63. A learned threshold cannot tell
them from a terse costly topic ("Nitroglycerin and viagra." 0.50, raw 4.3): a red-team round
showed it (docs/results.md). The rule is closed instead, as :mod:`guard.pleasantries` is: a
sentence is a directive when every one of its words is in :data:`WORDS` — the words of
answering (reasoning, length, tone, format, language, tools, sources, honesty) and function
words — with no word of a subject, the marks of prose alone, and at most
:data:`MAX_NUMBERS` counts of a part of the answer ("under 100 words"). No question about
anything can be written in one; what several such lines could spell together is checked where
they are set aside (:func:`guard.asking.directive_lines`). The vocabulary was written from
general knowledge and by reading the first writer's lines of ``tests/guard/data/short_prompts``
(so figures on them are in-sample). A second pass added words by reading the third writer's
misses (in-sample since); the fourth writer's lines, written before that pass and never read
for it, measure it.
"""

from __future__ import annotations

import re

from guard.pleasantries import vocabulary

#: The closed vocabulary of directives (lower case): how to answer, never what about — no word
#: of a subject, and no word that could order an amount ("give", "double": "Give the patient
#: double." set aside a dose order in the vocabulary's first version, a third red-team round).
#: The words from "inline" on are the second pass: words of answering the third writer used
#: ("formally", "uncertainty", "pros", "cons", ...) and others of the same kinds.
WORDS = vocabulary("""
a an the and or but nor so if then than unless when whenever while before after until as at by
for from in into of on to with without within over under per via only also too very more most
less least just even still always never ever often usually not no don't dont do does doesn't
be is are am was were been being it its it's this that these those there here all any every
everything nothing something anything own same other such each one ones instead rather
you your yours you're youre yourself i me my we us our they them their user user's users
answer answers answering answered respond responds responding response responses reply replies
replying write writes writing written use using uses think thinking thought thoughts reason
reasoning reasoned explain explaining explanation explanations keep stay avoid avoiding prefer
include including format formatted formatting output outputs return   show state say
speak talk sound act behave follow following ignore cite citing quote quoting mention
mentioning refer repeat reveal disclose assume consider check verify double-check ask asking
clarify clarifying admit guess guessing make making made up invent inventing apologize
apologise apologizing summarize summarise translate list limit limited end ending start begin
put wrap structure organize call run try break add adding skip omit drop remove let lets need
needed needs want possible necessary relevant appropriate unsure uncertain sure confident
certain unknown know don't doesn't show work working
concise concisely brief briefly short shorter shortest long longer detailed detail details
clear clearly simple simply simpler plain precise precisely accurate accurately direct directly
formal informal casual friendly polite politely professional neutral warm kind
helpful honest honestly careful carefully calm gently gentle terse succinct
succinctly thorough thoroughly complete completely fully overall objective factual neat
step steps final first last single exactly strictly valid proper properly correct correctly
well good best better clean readable structured consistent consistently
json yaml xml csv html markdown latex tex code codes snippet snippets block blocks fenced
bullet bullets bulleted point points list lists numbered table tables heading headings header
headers paragraph paragraphs sentence sentences word words line lines character characters
token tokens text plain emoji emojis style tone voice register language languages spelling
grammar punctuation summary summaries example examples reasoning preamble pleasantries filler
fluff caveats caveat disclaimers disclaimer hedging tools tool function functions search web
browsing browser python calculator assistant ai model instructions instruction prompt system
message messages question questions request requests conversation context document documents
source sources citation citations reference references link links url urls information fact
facts mistake mistakes error errors opinion opinions chain-of-thought cot markdown-free
headings reply-to yes
english french spanish german italian portuguese brazilian british american japanese chinese
mandarin korean russian arabic hindi dutch swedish polish turkish greek hebrew vietnamese
thai indonesian
enabled disabled enable disable on off true false high low medium effort mode verbose
verbosity level minimal default image images input vision capabilities capability available
    can must should may might could will would please else like row rows column
columns number numbers bracketed brackets parentheses reading reader readers audience through
privately silently internally provided given schema definition attached result results claim
claims ground grounded contractions ambiguous unclear vague numerical numeric edge case
cases calculation calculations data recent latest stable version quick quickly beginner
beginners expert jargon technical non-technical conversational playful humorous serious
empathetic encouraging supportive respectful respectfully persona role identity bot chatbot
whole entire part parts section sections title titles bold italic italics lowercase uppercase
caps indentation length fewer around approximately roughly once   again restate rephrase
paraphrase elaborate expand brevity clarity accuracy hallucinate fabricate speculate
speculation personal feelings refuse decline follow-up recap conclusion introduction greeting
greetings sign-off two three four five six seven eight nine ten prose quotes
inline formally uncertainty aloud speaking spoken symbols symbol feel free sprinkle witty
assumptions assumption comparing compare comparison options option object objects keys key
confidence yapping yap render formula formulas back losing commas comma flowing digits digit
spell multiple perspectives perspective viewpoints skeptical critical flaws flaw comments
comment found out loud korean speech guiding pros cons separate separately diff file files
full basics keeping one-line one-liner one-sentence tl dr tldr problem problems
explicit explicitly verbatim literal literally plaintext monospace emphasis emphasize
highlight takeaway takeaways outline outlines redundant unnecessary repetition repetitive
boilerplate wordy rambling ramble tangents focused focus topic irrelevant clarification
clarifications footnote footnotes quotation quotations fact-check cheerful upbeat
enthusiastic courteous courteously kindly rude sarcastic sarcasm humor humour jokes joke
lighthearted approachable logic logical logically reflect rethink reconsider justify
justification evidence acknowledge limitations limitation knowledge step-by-step
bullet-point match matching ukrainian czech danish norwegian finnish romanian hungarian
bengali urdu persian farsi swahili tagalog malay invoke retrieval retrieve look lookup
about ascii unicode openly corrected correction hedge hedges commit present presenting
contain contains read text-to-speech math maths mathematical expression expressions
""")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
#: A number a directive may hold: a count of a part of the answer ("under 100 words", "in 3
#: sentences") or a citation mark ("[1]") — at most :data:`MAX_NUMBERS` of them, of at most
#: four digits: not enough to spell anything with ("Use 8 15." is no directive).
_COUNT = re.compile(r"\b\d{1,4}\s+(?:words?|sentences?|paragraphs?|lines?|characters?|chars|"
                    r"tokens?|bullets?|points?|items?|steps?|examples?|options?|sections?|"
                    r"emojis?|questions?|lists?)\b|\[\d{1,4}\]", re.IGNORECASE)
MAX_NUMBERS = 2
#: The most words a directive may hold.
MAX_WORDS = 24
#: A token of a directive: a word (letters, inner hyphens and apostrophes) between the marks
#: of prose — an opening bracket or quote before it, at most two closing marks after it
#: ("answer.", "(briefly),", "json\"") — or a bullet or separator alone. No token of marks
#: alone, no symbol: nothing a letter could be written in (Morse's dots and dashes, Braille).
_TOKEN = re.compile(
    r"[(\[\"'\u2018\u201c]?[A-Za-z]+(?:['\u2019\u2013\u2014-][A-Za-z]+)*[.,;:!)\]\"'\u2019\u201d]{0,2}"
    r"|[-\u2013\u2014\u2022*/&]|\.\.\.|\u2026")


def is_directive(sentence: str) -> bool:
    """``sentence`` only tells the model how to answer: no ``?``; at most :data:`MAX_WORDS`
    tokens, each a word of :data:`WORDS` between the marks of prose, or a bullet
    (:data:`_TOKEN`); no digit but :data:`MAX_NUMBERS` counts of a part of the answer
    (:data:`_COUNT`). It asks for nothing.

    >>> is_directive("Think step by step."), is_directive("Respond only in valid JSON.")
    (True, True)
    >>> is_directive("Nitroglycerin and viagra."), is_directive("Always state the dose.")
    (False, False)
    >>> is_directive("Keep answers under 100 words."), is_directive("Use 8 15.")
    (True, False)
    >>> is_directive("Be brief?"), is_directive("Be brief. .... --- .--")
    (False, False)
    >>> is_directive("- be brief - use bullet points - no preamble")
    True
    """
    if "?" in sentence:
        return False
    counts = _COUNT.findall(sentence)
    rest = _COUNT.sub(" words", sentence)
    if len(counts) > MAX_NUMBERS:
        return False
    tokens = rest.split()
    if not 0 < len(tokens) <= MAX_WORDS or not all(_TOKEN.fullmatch(t) for t in tokens):
        return False
    words = [w.lower().replace("\u2019", "'") for w in _WORD.findall(rest)]
    return bool(words) and all(w in WORDS for w in words)
