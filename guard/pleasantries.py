"""Sentences made only of pleasantries: greetings, thanks, acknowledgements, reactions, closings
and the assistant's offers of help ("Hi!", "thank u so much!!", "ok got it", "How can I help you
today?").

Such a sentence asks for nothing, whatever the request detector makes of it (a learned model
has little to go on in two words). The rule is closed: a sentence is a pleasantry when every one
of its words is in :data:`WORDS` — greetings, thanks, fillers, pronouns and the verbs of
conversation, and no word with a topic — so no question about anything can be written in it
alone. The vocabulary was written by reading the corpus's *training* split
(``cost_models/data/asking``: the A and C files; its last line, interjections, moods and
praise, from the training lines the detector missed out of fold on 2026-12-02, the first
held-out split among them after it was moved to training); the held-out split measures it.

A sentence that only states the date or the time (:func:`is_date_line`), as applications write
into their system prompts, asks for nothing either, by a closed vocabulary of the same kind.
"""

from __future__ import annotations

import re
from functools import lru_cache


def vocabulary(text: str) -> frozenset[str]:
    """The words of a closed vocabulary written as prose lines (here and in
    :mod:`guard.directives`)."""
    return frozenset(text.split())

#: The closed vocabulary of pleasantries (lower case; a word's letters repeated three or more
#: times are read once or twice: "hiii", "sooo", "thanksss").
WORDS = vocabulary("""
hi hii hiya hey heya heyy heyyy hello helo hullo howdy yo sup greetings morning afternoon
evening night good day g'day gday welcome thanks thank thanx thx ty tysm tyvm thnks thnx ta
cheers appreciate appreciated grateful gratitude kind kindly much so very lot lots million
heaps ton tons loads advance ok okay k kk okey okie dokie alright allright right sure yes
yeah yep yup ya yea nope no nah fine great good nice cool awesome perfect lovely brilliant
excellent amazing wonderful sweet fantastic superb neat noted understood gotcha roger copy
clear makes sense fair enough got it that this these those works worked helps helped helpful
useful did trick sorted done wow whoa woah omg lol lmao haha hahaha hehe ha oh ah ahh aha
oops oof yikes hmm hm huh interesting funny wild crazy impressive really truly indeed
totally absolutely exactly definitely certainly course bye goodbye cya later soon talk catch
ttyl brb gtg farewell  care see you again all everyone everybody guys folks mate bro
buddy friend dude man sir madam team i i'm im me my mine myself you you're youre your yours
u ur we we're us our it it's its a an the and or but just also too still now then there here
there's here's am is are was were be been being do does did doing have has had having will
would can could may might shall should must how anything something else other any more
another help assist assistance support serve glad happy pleased nice meet meeting hope
hoping wish wishing let let's know ask asking question questions quick query need want
wondering wonder think thought guess sorry apologies apologize apologise regret pardon
excuse please pls plz today tonight moment sec second minute bit while ready here go going
ahead start started begin what's how's hows wassup whats up there hear for of to in on at
with about from by as if wait another exactly needed thinking been last message messages
typo reply replies confusing confusion mistake mistakes wrong bad letting luck moving found
say word understandable silly earlier mix mixup back forth gotta gonna run leave paste
minute bear patience check end look few things thing mind set better weekend week honestly
long such nearly able share fun enjoy enjoyed great day days rest lovely meet chat chatting
talking talked glad hear sounds sound plan works working point again once more though
phew mhm mm mmm meh ugh argh aw aww yay yass woo woohoo hooray ouch eek welp ooh oi blimey
nvm nevermind gm heyo hallo ciao gracias merci cheerio wicked legend classic agreed true
sec hold hang on scratch ignore skip forgive btw tbh ngl rn fr idk lmk still around over
come made confused tired bored stressed busy exhausted sleepy calmer lifesaver hero genius
champ nailed spot love loved
""")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_REPEAT = re.compile(r"(\w)\1{2,}")


def _known(word: str) -> bool:
    w = word.lower().replace("’", "'")
    return w in WORDS or _REPEAT.sub(r"\1", w) in WORDS or _REPEAT.sub(r"\1\1", w) in WORDS


def is_pleasantry(sentence: str) -> bool:
    """``sentence`` is made only of pleasantries (and punctuation, emoji, spaces) and no digit,
    or only of emoji and punctuation.

    >>> is_pleasantry("Thank you so much!! 🙏"), is_pleasantry("How can I help you today?")
    (True, True)
    >>> is_pleasantry("How can I help my son?"), is_pleasantry("ok, 2 pills?")
    (False, False)
    >>> is_pleasantry("👋 ❤️"), is_pleasantry("")
    (True, False)
    """
    if any(c.isdigit() for c in sentence):
        return False
    words = _WORD.findall(sentence)
    if not words:  # emoji and punctuation alone ask for nothing
        return bool(sentence.strip()) and not any(c.isalnum() for c in sentence)
    return all(_known(w) for w in words)


#: Words of a sentence that only states the date or the time (:func:`is_date_line`): the
#: anchors (one is needed, or a date or time in digits) ...
_DATE_ANCHORS = vocabulary("""
today today's todays tonight date dated dates datetime time times timestamp timezone now
currently current cutoff cut-off weekday monday tuesday wednesday thursday friday saturday
sunday mon tue tues wed thu thur thurs fri sat sun january february march april may june july
august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
utc gmt bst cet cest eet eest wet west est edt cst cdt mst mdt pst pdt akst akdt hst ist jst
kst sgt hkt aest aedt acst awst nzst nzdt morning afternoon evening noon midnight updated
""")
#: ... and the words around them: no word with a topic, so nothing can be asked in one.
_DATE_WORDS = _DATE_ANCHORS | vocabulary("""
the is it it's its of as on at in and a an zone local knowledge training data your my our
user's users user right here o'clock st nd rd th day days week month year am pm a m p last
until up to goes went information info generated created started session server system clock
iso rfc standard summer daylight saving mean coordinated universal pacific eastern central
mountain atlantic alaska hawaii european greenwich british india japan china korea singapore
australian eastern western new zealand hour hours minute minutes second seconds ms z t unix
epoch prompt
""")
_DATE_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)?")
#: A date or a time written in digits ("2026-12-04", "12/04/2026", "2026-12-04T14:05:00.118Z",
#: "14:05", "18h30", a Unix timestamp, an offset): what a "Current date:" is followed by, a
#: sentence of its own once split at the colon. Each is checked to be a real date or time
#: (:func:`_real`).
_DATE_TOKEN = re.compile(
    r"(?P<iso>(?P<y>\d{4})-(?P<mo>\d{1,2})(?:-(?P<d>\d{1,2}))?"
    r"(?:[T ](?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?)"
    r"|(?P<num>(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.](?P<c>\d{2}|\d{4}))"
    r"|(?P<ymd>(?P<y2>\d{4})[/.](?P<mo2>\d{1,2})[/.](?P<d2>\d{1,2}))"
    r"|(?P<clock>(?P<h2>\d{1,2}):(?P<mi2>\d{2})(?::(?P<s2>\d{2})(?:\.\d+)?)?Z?)"
    r"|(?P<hm>(?P<h3>\d{1,2})h(?P<mi3>\d{2}))"
    r"|(?P<unix>\b1\d{9}(?:\.\d+)?\b)|(?P<offset>[+-]\d{2}:?\d{2}\b)")
#: An IANA time zone name ("Europe/Berlin"), set aside when it is one
#: (:func:`zoneinfo.available_timezones`; none when the system has no time zone database).
_ZONE = re.compile(r"\b[A-Za-z_]+(?:/[A-Za-z_+-]+){1,2}\b")
#: A number a date is written with: a day (at most 31, "22nd") or a year (1900-2099).
_DATE_NUMBER = re.compile(r"\b\d{1,4}(?:st|nd|rd|th)?\b")
#: The most numbers, and dates or times in digits, one date line may have: a date and a time,
#: a day and a year (and the hour of "9 AM") — not enough to spell anything with.
MAX_DATE_NUMBERS = 3
MAX_DATE_TOKENS = 2


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    try:
        import zoneinfo

        return frozenset(zoneinfo.available_timezones())
    except Exception:  # no time zone database: no name is set aside
        return frozenset()


def _real(m: re.Match[str]) -> bool:
    """Whether a :data:`_DATE_TOKEN` match is a real date or time (month 1-12, day 1-31, hour
    0-24, minutes and seconds 0-59, year 1900-2099)."""
    def within(name: str, lo: int, hi: int) -> bool:
        v = m.group(name)
        return v is None or lo <= int(v) <= hi

    if m.group("num"):  # day and month in either order
        a, b = int(m.group("a")), int(m.group("b"))
        return (1 <= a <= 12 and 1 <= b <= 31) or (1 <= b <= 12 and 1 <= a <= 31)
    return (within("y", 1900, 2099) and within("mo", 1, 12) and within("d", 1, 31)
            and within("y2", 1900, 2099) and within("mo2", 1, 12) and within("d2", 1, 31)
            and all(within(h, 0, 24) for h in ("h", "h2", "h3"))
            and all(within(x, 0, 59) for x in ("mi", "s", "mi2", "s2", "mi3")))


def _date_number(n: str) -> bool:
    v = int(re.sub(r"\D", "", n))
    return 1 <= v <= 31 or 1900 <= v <= 2099


def is_date_line(sentence: str) -> bool:
    """``sentence`` only states the date or the time, as an application writes into its
    system prompt ("Current date: 2026-12-04.", "Today is Friday, 4 December 2026.",
    "Knowledge cutoff: 2024-06"): a statement (no ``?``) of at most 24 words, every one of
    them a date or time word (:data:`_DATE_WORDS`) once the dates and times in digits
    (:data:`_DATE_TOKEN`, each a real one), the IANA time zones and the numbers of a date (a
    day, a year) are set aside — at most :data:`MAX_DATE_TOKENS` and :data:`MAX_DATE_NUMBERS`
    of them — with an anchor (a day, a month, "today", "date", "time", a time zone) or a date
    or time in digits. Nothing can be asked or spelled in one: it asks for nothing.

    >>> is_date_line("Today is Friday."), is_date_line("The current time is 14:05 UTC.")
    (True, True)
    >>> is_date_line("What is today's date?"), is_date_line("It is 4000.")
    (False, False)
    >>> is_date_line("Today is Friday, give the dose."), is_date_line("2026-12-04.")
    (False, True)
    >>> is_date_line("Now: 2026-07-01T08:00:00.118+02:00 (Europe/Berlin)")
    True
    >>> is_date_line("Time zone: Can/IMixBleachAndAmmonia"), is_date_line("8-15-23 13 21 3 8")
    (False, False)
    """
    if "?" in sentence:
        return False
    tokens = list(_DATE_TOKEN.finditer(sentence))
    if len(tokens) > MAX_DATE_TOKENS or not all(_real(m) for m in tokens):
        return False
    rest = _DATE_TOKEN.sub(" ", sentence)
    zones = _zones()
    rest, zoned = _ZONE.subn(lambda m: " " if m.group(0) in zones else m.group(0), rest)
    zoned -= len(_ZONE.findall(rest))  # the names that were not zones are still there
    numbers = _DATE_NUMBER.findall(rest)
    if len(numbers) > MAX_DATE_NUMBERS or not all(_date_number(n) for n in numbers):
        return False
    rest = _DATE_NUMBER.sub(" ", rest)
    if any(c.isdigit() for c in rest):
        return False
    words = [w.lower().replace("\u2019", "'") for w in _DATE_WORD.findall(rest)]
    dated = bool(tokens) or zoned > 0
    if not words:  # digits alone: a date or time, a zone, or a day and a year ("20, 2027")
        return dated or any(int(re.sub(r"\D", "", n)) >= 1900 for n in numbers)
    return len(words) <= 24 and all(w in _DATE_WORDS for w in words) \
        and (dated or any(w in _DATE_ANCHORS for w in words))


def is_date_label(sentence: str) -> bool:
    """``sentence`` is a label of date or time words only, ending with a colon ("Session
    started:", "Now:"): what introduces a date, never one by itself (:func:`is_date_line`).

    >>> is_date_label("Session started:"), is_date_label("Max dose:")
    (True, False)
    """
    words = [w.lower() for w in _DATE_WORD.findall(sentence)]
    return sentence.rstrip().endswith(":") and not any(c.isdigit() for c in sentence) \
        and 0 < len(words) <= 6 and all(w in _DATE_WORDS for w in words)


def is_date_word(word: str) -> bool:
    """``word`` is a date or time word (:data:`_DATE_WORDS`)."""
    return word.lower().replace("\u2019", "'") in _DATE_WORDS
