"""What a request asks: the one component that turns any request into the texts the guard prices.

Used by :meth:`guard.Guard.price` for every caller — the decorator, both proxy routes, the
integrations and the bench — so a request is priced the same way on every path:

1. **Every text the model reads** (:func:`guard.request_walk.walk`): any role, content and file
   parts, tool definitions and results, schemas, Responses instructions, items and reasoning.
   Text that lives upstream (``previous_response_id``, a stored prompt, ``file_id``) and files
   the guard cannot read are noted, and priced at a ceiling (:class:`AskingConfig`).
2. **As a person reads it** (:mod:`guard.reading`): escapes undone, Unicode normalized, invisible
   characters removed, look-alike letters folded; base64 / hex / percent blobs, leetspeak and
   separated letters decoded into extra texts; a sentence that is not readable English is
   decoded if it can be (reversed, rot13) and otherwise priced at the ceiling
   (``unreadable_price``), never by the cost model's guess.
3. **Only what asks** (:class:`cost_models.request_detector.RequestDetector`): a sentence made
   only of pleasantries (:mod:`guard.pleasantries`), and each readable sentence whose
   ``P(asks)`` is below the threshold — a persona, a rule, a greeting, thanks,
   assistant boilerplate, a tool description — is left out; the rest of each text is its
   *asked text*. The threshold is :attr:`Thresholds.sentence` in the user's last turn,
   :attr:`Thresholds.history` in earlier turns (the user's and the model's own) and in an
   assistant text after the user's last turn (a prefill) — where a doubted sentence priced at
   :data:`OFFER_PRICE` or more is kept too, as it is in the model's last turn when the user's
   last asks for nothing ("ok, go ahead" asks for what the model offered) — and the
   stricter :attr:`Thresholds.strict` in a system, developer or tool-definition text that as a
   whole asks for nothing (its own ``P(asks)`` below :attr:`Thresholds.text`), where only a
   sentence that clearly asks is kept — or one the detector doubts that the cost model prices
   at :attr:`Thresholds.strict_price` or more (a costly question diluted in a persona), unless
   it is a label in a tool definition (:func:`is_label`: a property name, an enum value). A
   system or developer text the operator trusts (its sha256 in :attr:`AskingConfig.trusted`)
   is left out whole, and the operator's trusted sentences (:func:`trusting`) are left out of
   any other, and not decoded: what an application adds to its trusted prompt is read alone,
   as it is without a line that only states the date or the time
   (:func:`guard.pleasantries.is_date_line`, "Current date: 2026-12-04."); so is a tool
   definition the operator declares as its application's own, exactly
   (:mod:`guard.trusted_tools`). A last turn that
   asks nothing by itself yet puts a question asks about what came before: it is also read
   whole with the earlier turns (:func:`_ask_back`).
4. **Segments** (:func:`guard.segments.request_segments` on the asked texts): each asked text,
   its sentences, windows of its long sentences, and sentences that run across texts.

:class:`Reading` is the result; the guard prices its segments with the cost model and takes the
maximum (never lower than the price of any question the request carries), raised to the ceiling
when something could not be read. A text whose sentences all ask (every bare question) is its
own asked text, unchanged.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guard.decision_records import PricedBy
from guard.directives import is_directive
from guard.exceptions import ConfigError, PayloadTooLargeError
from guard.pleasantries import is_date_label, is_date_line, is_date_word, is_pleasantry
from guard.reading import decoded, decoded_unreadable, normalized, unreadable
from guard.reading.readable import counted_words, known
from guard.request_walk import Asked, RequestText, walk
from guard.segments import owned_segments, sentences, windows
from guard.trusted_tools import tool_key

#: Default price (``L``, after any cost scale) of a sentence the cost model cannot read.
UNREADABLE_PRICE = 25.0
#: Default price of text kept upstream (``previous_response_id``, stored prompts, files).
UPSTREAM_PRICE = 25.0
#: The price of a request that asks for nothing at all (a greeting alone): below the seed
#: set's 5th-percentile cost, so that every reply to it is delivered.
NOTHING_ASKED_PRICE = 0.2


@dataclass(frozen=True)
class Thresholds:
    """The ``P(asks)`` thresholds of :func:`read` (a detector's own, chosen when it was trained
    on its training split alone: ``utilityguard asking train``)."""

    #: a sentence below this asks for nothing
    sentence: float = 0.2
    #: a text (of several sentences) below this asks for nothing as a whole
    text: float = 0.0
    #: in such a text, a sentence below this asks for nothing
    strict: float = 0.2
    #: a sentence of an earlier turn (the user's before the last, the model's own) below
    #: this asks for nothing
    history: float = 0.5
    #: in a text read strictly, a sentence below :attr:`strict` (and at or above
    #: :attr:`sentence`) still asks when the cost model prices it at this raw cost or more: a
    #: costly question diluted in a long persona is doubted by the detector, not by the cost
    #: model (``inf``: off, the strict threshold alone)
    strict_price: float = float("inf")
    #: a user's message of one sentence that does not ask by its form (:func:`asks_in_form`)
    #: and whose ``P(asks)`` is doubtful (at or above :attr:`sentence`, below this) asks only
    #: when the detector's doubt model (:func:`read`'s ``doubt``: a cost model that has seen
    #: chat lines at the floor) prices it at :attr:`lone_price` or more — "my wifi keeps
    #: cutting out" (:func:`_cheap_lone`; 0: off, the sentence threshold alone)
    lone: float = 0.0
    #: see :attr:`lone` (a raw cost of the doubt model)
    lone_price: float = float("inf")

    def __post_init__(self) -> None:
        for name in ("sentence", "text", "strict", "history", "lone"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
                raise ConfigError(f"the {name} threshold must be in [0, 1]; got {v!r}")
        for name in ("strict_price", "lone_price"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0):
                raise ConfigError(f"{name} must be a cost > 0; got {v!r}")


#: The thresholds for a detector that names none.
DEFAULT_THRESHOLDS = Thresholds()
#: Default cap on the sentences and segments of one request (a request over it is refused as
#: too complex): about 100,000 characters of prose, priced in well under a second.
MAX_SEGMENTS = 2000
#: Default cap on the characters of a request's texts together (a request over it is refused as
#: too complex before anything is read): as much as :data:`MAX_SEGMENTS` sentences of prose,
#: which the segment cap allows. Reading is linear in the characters but not cheap (about
#: 12 µs a character for a base64 token, decoded and read), so unbroken runs of text — a
#: token, a sentence, parts of one message — could otherwise hold a worker thread for seconds.
MAX_TEXT_CHARS = 100_000
#: Roles whose text an operator may trust (an application's own instructions).
TRUSTABLE_ROLES = frozenset({"system", "developer"})
#: Roles in an instruction position: a text there that as a whole asks for nothing (a system
#: prompt, a tool definition) keeps only the sentences that clearly ask
#: (:attr:`Thresholds.strict`). A user's or the model's own turn never reads this way.
INSTRUCTION_ROLES = frozenset({"system", "developer", "tools"})
#: Roles of earlier turns, whose every sentence is read with :attr:`Thresholds.history`: the
#: model's own turns and the user's turns before the last (``history``) ask for nothing unless
#: a sentence clearly asks — a client can write them, and a question there is a clear one.
#: The model's last turn before the user's last: history, but read as the last turn is when
#: that turn asks for nothing ("ok, go ahead" asks for what the model offered).
LAST_ANSWER = "last-answer"
#: The role of the user's turns before the last.
HISTORY = "history"
HISTORY_ROLES = frozenset({"assistant", HISTORY, LAST_ANSWER})
#: The role of an assistant text after the user's last turn (a prefill the model continues).
PREFILL = "prefill"
#: In a prefill, and in the model's last turn when the user's last asks for nothing ("ok, go
#: ahead"), a sentence the detector doubts (at or above :attr:`Thresholds.sentence`) is kept
#: when the cost model prices it at this raw cost or more: the model is about to say it. At
#: the default ``C_R = 2`` a price below it is answered whatever ``p`` (the threshold is at
#: most 0), so leaving such a sentence out changes no default decision, while an offer of a
#: costly answer ("Let me tell you the maximum dose of ...") is priced.
OFFER_PRICE = 2.0


class TooManySegments(PayloadTooLargeError):
    """A request has more sentences or segments to price than
    :attr:`AskingConfig.max_segments`, or more characters of text than
    :attr:`AskingConfig.max_text_chars` (the proxy answers 413)."""

    default_code = "request_too_complex"


def prompt_hash(text: str) -> str:
    """The sha256 (hex) of a trusted prompt, as :attr:`AskingConfig.trusted` holds it: of the
    normalized text, stripped.

    >>> prompt_hash("You are a helpful assistant.")[:12]
    '75357d685f23'
    """
    return hashlib.sha256(normalized(text).strip().encode("utf-8")).hexdigest()


#: How a trusted prompt is named by its hash rather than its text (``sha256:<64 hex>``).
SHA256_PREFIX = "sha256:"


def trusting(prompts: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The operator's trusted prompts (each its text or ``sha256:<hex>`` of it) as
    :attr:`AskingConfig.trusted` and :attr:`AskingConfig.trusted_sentences`: a prompt given as
    text is trusted whole and sentence by sentence (:func:`guard.segments.sentences` of its
    normalized text); one given by its hash only whole.

    >>> whole, each = trusting(["You are Acme's assistant. Be brief.", "sha256:" + "ab" * 32])
    >>> len(whole), len(each), prompt_hash("Be brief.") in each
    (2, 2, True)
    """
    whole: set[str] = set()
    each: set[str] = set()
    for p in prompts:
        if p.startswith(SHA256_PREFIX):
            digest = p[len(SHA256_PREFIX):].strip().lower()
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise ConfigError("a trusted prompt given as 'sha256:' needs 64 hex digits")
            whole.add(digest)
            continue
        if not p.strip():
            raise ConfigError("a trusted prompt must not be empty")
        whole.add(prompt_hash(p))
        each.update(prompt_hash(s) for s in sentences(normalized(p)))
    return frozenset(whole), frozenset(each)


@dataclass(frozen=True)
class AskingConfig:
    """The operator's pricing settings (``serve --config`` per route; ``Guard(asking=...)``)."""

    #: ``L`` of a sentence that is not readable English and cannot be decoded, and of a file
    #: the guard cannot read
    unreadable_price: float = UNREADABLE_PRICE
    #: ``L`` of text kept upstream
    upstream_price: float = UPSTREAM_PRICE
    #: sha256 (:func:`prompt_hash`) of system or developer texts the operator trusts: not priced
    trusted: frozenset[str] = frozenset()
    #: sha256 (:func:`prompt_hash`) of the sentences of those texts (the ones given as text,
    #: :func:`trusting`): a system or developer text is read without them, so that a trusted
    #: prompt with a line the application adds ("Today is ...") costs only that line
    trusted_sentences: frozenset[str] = frozenset()
    #: :func:`guard.trusted_tools.tool_key` of the tool definitions the operator declares as
    #: its application's own (``serve --trusted-tools``): not priced
    trusted_tools: frozenset[str] = frozenset()
    #: the ``P(asks)`` thresholds (``None``: the detector's own, chosen when it was trained)
    thresholds: Thresholds | None = None
    #: the most segments one request may have
    max_segments: int = MAX_SEGMENTS
    #: the most characters a request's texts may have together
    max_text_chars: int = MAX_TEXT_CHARS

    @classmethod
    def trusting(cls, prompts: Iterable[str], **settings: Any) -> AskingConfig:
        """The settings with the operator's trusted prompts (each its text or
        ``sha256:<hex>`` of it; :func:`trusting`) and any other field of ``settings``.

        >>> config = AskingConfig.trusting(["You are Acme's assistant. Be brief."])
        >>> len(config.trusted), len(config.trusted_sentences)
        (1, 2)
        """
        trusted, sentences_ = trusting(prompts)
        return cls(trusted=trusted, trusted_sentences=sentences_, **settings)

    def __post_init__(self) -> None:
        for name in ("unreadable_price", "upstream_price"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and v > 0 and v < float("inf")):
                raise ConfigError(f"{name} must be a number > 0; got {v!r}")
        for name in ("max_segments", "max_text_chars"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name} must be an integer >= 1; got {v!r}")


class Memo:
    """Scores (and readings) already computed for texts, bounded (least recently used out
    first; thread-safe).
    The proxy keeps one per client (:class:`Memos`), so that a repeated system prompt or
    history is not priced again and no client can learn by timing what another sent."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._d: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kind: str, text: str) -> Any:
        with self._lock:
            v = self._d.get((kind, text))
            if v is not None:
                self._d.move_to_end((kind, text))
            return v

    def put(self, kind: str, text: str, value: Any) -> None:
        with self._lock:
            self._d[(kind, text)] = value
            if len(self._d) > self.size:
                self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)


class Memos:
    """One :class:`Memo` per client (a digest of its credential), the least recently seen
    client's dropped first: bounded in clients and in entries per client."""

    def __init__(self, clients: int = 1024, size: int = 4096) -> None:
        self.clients = clients
        self.size = size
        self._m: OrderedDict[str | bytes, Memo] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, client: str | bytes) -> Memo:
        with self._lock:
            memo = self._m.get(client)
            if memo is None:
                memo = self._m[client] = Memo(self.size)
                if len(self._m) > self.clients:
                    self._m.popitem(last=False)
            else:
                self._m.move_to_end(client)
            return memo


def scored(kind: str, texts: Sequence[str], score: Callable[[list[str]], Any],
           memo: Memo | None) -> list[float]:
    """``score`` of every text (one batch call for those ``memo`` does not hold)."""
    out: list[float | None] = [memo.get(kind, t) if memo is not None else None for t in texts]
    todo = [t for t, v in zip(texts, out, strict=True) if v is None]
    if todo:
        fresh = [float(x) for x in score(list(dict.fromkeys(todo)))]
        got = dict(zip(dict.fromkeys(todo), fresh, strict=True))
        for k, t in enumerate(texts):
            if out[k] is None:
                out[k] = got[t]
                if memo is not None:
                    memo.put(kind, t, got[t])
    return [float(v) for v in out if v is not None]


@dataclass
class Reading:
    """What a request asks, ready to price."""

    #: the asked text of each text the guard read (non-request sentences left out; ``""``)
    asked: list[str] = field(default_factory=list)
    #: every segment to price, and the index in :attr:`asked` it belongs to (-1: across texts)
    segments: list[str] = field(default_factory=list)
    owners: list[int] = field(default_factory=list)
    #: sentences that are not readable English and could not be decoded
    unreadable: list[str] = field(default_factory=list)
    #: text kept upstream, and files that cannot be read
    upstream: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    #: how many sentences were left out as asking nothing, and texts left out as trusted
    left_out: int = 0
    trusted: int = 0

    #: how many of :attr:`asked` are the texts as read (the rest: a text joined with what came
    #: before, :func:`_ask_back`, then :func:`_with_before` from :attr:`paired`)
    read_texts: int = 0
    paired: int = 0
    #: the role of each text as read (:attr:`asked` up to :attr:`read_texts`): a message's
    #: own, or :data:`HISTORY`, :data:`LAST_ANSWER`, :data:`PREFILL`
    roles: list[str | None] = field(default_factory=list)

    def priced_by(self, k: int) -> PricedBy:
        """Where the text segment ``k`` belongs to sits
        (:data:`guard.decision_records.PricedBy`): ``joined`` for a text read with what came
        before it or a segment across texts; a role a client made up is ``other``.

        >>> r = Reading(asked=["Be brief.", "", "Max dose?"], segments=["Be brief.", "Max dose?"],
        ...             owners=[0, 2], read_texts=3, roles=["system", LAST_ANSWER, "user"])
        >>> r.priced_by(0), r.priced_by(1)
        ('system', 'user')
        """
        o = self.owners[k]
        if o < 0 or o >= self.read_texts or o >= len(self.roles):
            return "joined"
        return _PRICED_BY.get(self.roles[o], "other")

    def owner_text(self, k: int) -> str:
        """The asked text segment ``k`` belongs to (the join of the texts as read for a
        cross-text one)."""
        o = self.owners[k]
        return self.asked[o] if o >= 0 else " ".join(a for a in self.asked[:self.read_texts]
                                                     if a)


#: The role of a text as read, as a decision record names it (every other role: ``other``).
_PRICED_BY: dict[str | None, PricedBy] = {
    "user": "user", HISTORY: "history", "assistant": "assistant", LAST_ANSWER: "assistant",
    PREFILL: "prefill", "system": "system", "developer": "developer", "tools": "tools"}


def as_asked(query: Any) -> Asked:
    """A query as an :class:`Asked`: one text (a user's), texts, or an :class:`Asked` as is."""
    if isinstance(query, Asked):
        return query
    if isinstance(query, str):
        return Asked.of_texts(query)
    if isinstance(query, Sequence) and all(isinstance(t, str) for t in query):
        return Asked.of_texts(list(query))
    return walk(query)


def client_strings(asked: Asked, config: AskingConfig) -> list[str]:
    """The texts of ``asked`` that are not the operator's: without the system or developer
    texts it trusts whole, the tool definitions it declared (:attr:`AskingConfig.trusted_tools`)
    and, in a system or developer text, its trusted sentences (what a client wrote is the rest).

    >>> config = AskingConfig.trusting(["Be brief."])
    >>> client_strings(walk({"messages": [{"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": "Hi?"}]}), config)
    ['Hi?']
    """
    if not (config.trusted or config.trusted_sentences or config.trusted_tools):
        return asked.strings()
    out: list[str] = []
    for group in _groups(asked):
        if _operators(group, config):
            continue
        if group[0].role in TRUSTABLE_ROLES:
            out.extend(_untrusted(normalized(x.text), config) for x in group)
        else:
            out.extend(x.text for x in group)
    return [t for t in out if t.strip()]


def _groups(asked: Asked) -> list[list[RequestText]]:
    """The texts of ``asked`` by the unit each is read in (one tool definition, the parts of
    one message; every other text alone), in body order."""
    merged: dict[str, list[RequestText]] = {}
    for t in asked.texts:
        merged.setdefault(t.unit or f"#{len(merged)}", []).append(t)
    return list(merged.values())


def _operators(group: Sequence[RequestText], config: AskingConfig) -> bool:
    """The unit ``group`` is the operator's own, whole: a system or developer text it trusts
    (:attr:`AskingConfig.trusted`) or a tool definition it declared
    (:attr:`AskingConfig.trusted_tools`)."""
    role = group[0].role
    if role in TRUSTABLE_ROLES and config.trusted:
        return prompt_hash("\n".join(x.text for x in group)) in config.trusted
    return role == "tools" and bool(config.trusted_tools) \
        and tool_key(group) in config.trusted_tools


#: What ends a sentence (:func:`guard.segments.sentences`), counted at C speed.
_ENDS = (". ", "? ", "! ", "; ", ": ", "\n")


def too_many(config: AskingConfig, what: str) -> TooManySegments:
    """The error of a request with more ``what`` (sentences, segments) than the operator's
    cap (:attr:`AskingConfig.max_segments`)."""
    return TooManySegments(f"the request has more than {config.max_segments} {what} to price "
                           "(the operator's limit: --max-segments)")


def sentence_bound(asked: Asked) -> int:
    """A quick estimate of the request's sentences, counted before anything is read, so that a
    flood of short sentences is refused before it costs anything (the exact count follows)."""
    return sum(1 + sum(t.text.count(e) for e in _ENDS) for t in asked.texts)


def check_size(asked: Asked, config: AskingConfig) -> None:
    """:class:`TooManySegments` when the request's texts have more characters than
    :attr:`AskingConfig.max_text_chars` together, or the quick estimate
    (:func:`sentence_bound`) is far over the segment cap: the proxy checks it before anything
    is sent upstream or read."""
    chars = sum(len(t.text) for t in asked.texts)
    if chars > config.max_text_chars:
        raise TooManySegments(
            f"the request has {chars} characters of text to price, more than "
            f"{config.max_text_chars} (the operator's limit: --max-text-chars)")
    if sentence_bound(asked) > config.max_segments * 4:
        raise too_many(config, "sentences")


def _units(asked: Asked, config: AskingConfig, memo: Memo | None = None
           ) -> tuple[list[tuple[str, str | None]], int, frozenset[str]]:
    """The texts to read, normalized, each with the texts decoded from it, and whether the
    text is in an instruction position (:data:`INSTRUCTION_ROLES`); the texts of one tool
    definition joined as one; the operator's trusted system prompts left out (and counted);
    and which texts are as sent (normalized), not decoded from another."""
    merged = _groups(asked)
    # the turn each text belongs to (every text of one message: its parts, the JSON in it)
    turn = [_turn(g[0].where) for g in merged]
    roles = [g[0].role for g in merged]
    users = [k for k, r in zip(turn, roles, strict=True) if r == "user"]
    last = max((i for i, k in enumerate(turn) if users and k == users[-1]), default=-1)
    answers = [k for i, (k, r) in enumerate(zip(turn, roles, strict=True))
               if r == "assistant" and i < last]
    texts: dict[str, str | None] = {}
    sent: set[str] = set()  # the texts as sent (normalized), not decoded from another
    trusted = 0
    for i, group in enumerate(merged):
        t = group[0]
        role = HISTORY if t.role == "user" and turn[i] != users[-1] else \
            PREFILL if t.role == "assistant" and i > last else \
            LAST_ANSWER if answers and turn[i] == answers[-1] else t.role
        if _operators(group, config):  # a prompt it trusts, a tool it declared: not read
            trusted += 1
            continue
        whole = "\n".join(x.text for x in group)
        parts = [whole]
        if len(group) > 1 and t.role != "tools":  # parts a client split word by word
            parts.append(" ".join(x.text.strip() for x in group))
        read_as = [_read_as(p, memo) for p in parts]
        if t.role in TRUSTABLE_ROLES:  # a date line is not decoded (the leetspeak reader would
            # read "2026-03-09" as "2026-oe-09"; one whose decoding spells words is no date
            # line), nor is a directive or a sentence the operator trusts; what only the text
            # as sent holds (letters written as symbols, invisible tag characters) is read
            kept = [_untrusted(_without_aside(got[0], memo), config) for got in read_as]
            read_as = [got if u == got[0] else (got[0], *_decoded(u, p, memo))
                       for got, u, p in zip(read_as, kept, parts, strict=True)]
        for x in dict.fromkeys(x for got in read_as for x in got):
            if x.strip():  # a text sent twice is read in the least trusted of its roles
                texts[x] = role if texts.get(x, role) == role else "user"
        sent.update(got[0] for got in read_as)
    return list(texts.items()), trusted, frozenset(sent)


def _without_aside(text: str, memo: Memo | None = None) -> str:
    """``text`` (normalized) without its date lines and directives (:func:`_set_aside`;
    ``text`` itself when it has none; remembered in the client's ``memo``, as readings are)."""
    got = memo.get("without aside", text) if memo is not None else None
    if got is None:
        ss = sentences(text)
        aside = _set_aside(ss, memo)
        got = "\n".join(s for s in ss if s not in aside) if aside else text
        if memo is not None:
            memo.put("without aside", text, got)
    return str(got)


def _untrusted(text: str, config: AskingConfig) -> str:
    """``text`` (normalized) without the operator's trusted sentences
    (:attr:`AskingConfig.trusted_sentences`; ``text`` itself when it has none)."""
    if not config.trusted_sentences:
        return text
    ss = sentences(text)
    kept = [s for s in ss if prompt_hash(s) not in config.trusted_sentences]
    return "\n".join(kept) if len(kept) < len(ss) else text


def _decoded(text: str, raw: str, memo: Memo | None) -> tuple[str, ...]:
    """The texts decoded from ``text`` (normalized, without what is set aside) and from the
    views of ``raw`` (the whole text as sent: :func:`guard.reading.decoded`), remembered in
    the client's ``memo``."""
    key = f"{raw}\x00{text}"
    got = memo.get("decoded", key) if memo is not None else None
    if got is None:
        got = tuple(decoded(text, raw))
        if memo is not None:
            memo.put("decoded", key, got)
    return tuple(got)


def _set_aside(ss: list[str], memo: Memo | None) -> frozenset[str]:
    """:func:`date_lines` and :func:`directive_lines` of a text's sentences, remembered in
    the client's ``memo``."""
    key = "\n".join(ss)
    got = memo.get("aside", key) if memo is not None else None
    if got is None:
        got = date_lines(ss) | directive_lines(ss)
        if memo is not None:
            memo.put("aside", key, got)
    return frozenset(got)


def _turn(where: str) -> str:
    """The message a text sits in (``messages[3]`` of ``messages[3].content<json>.q``), or
    the text's own place when it is in none."""
    where = where.split("<json>", 1)[0]
    m = re.match(r"^[^\[]*\[\d+\]", where)
    return m.group(0) if m else where


def _read_as(text: str, memo: Memo | None = None) -> tuple[str, ...]:
    """``text`` as a person reads it (normalized) and the texts decoded from it (remembered in
    the client's ``memo``: a repeated system prompt is decoded once)."""
    got = memo.get("read", text) if memo is not None else None
    if got is None:
        norm = normalized(text)
        got = (norm, *decoded(norm, text))
        if memo is not None:
            memo.put("read", text, got)
    return tuple(got)


#: A sentence longer than this many words is also asked about in windows
#: (:data:`DETECT_WINDOWS`): a question padded without punctuation ("ok ok ... <question> ok
#: ok ...") asks in one of them, while the run-on sentence as a whole reads as filler.
DETECT_LONG = 48
#: ``(words, stride)`` of those windows: a question of up to 16 words lies whole in one.
DETECT_WINDOWS = ((24, 8),)


def detection_windows(sentence: str) -> list[str]:
    """The windows of a long sentence the request detector is also asked about (none for a
    sentence of :data:`DETECT_LONG` words or fewer); the sentence asks when one of them does.

    >>> len(detection_windows(" ".join(["ok"] * 60))), detection_windows("Max dose?")
    (6, [])
    """
    if len(sentence.split()) <= DETECT_LONG:
        return []
    return windows(sentence, DETECT_WINDOWS)


def read(asked: Asked, p_asks: Callable[[list[str]], Any] | None, config: AskingConfig,
         memo: Memo | None = None, thresholds: Thresholds = DEFAULT_THRESHOLDS,
         cost: Callable[[list[str]], Sequence[float]] | None = None,
         doubt: Callable[[list[str]], Sequence[float]] | None = None) -> Reading:
    """What ``asked`` asks (see the module docstring); ``p_asks`` scores texts (a batch);
    ``thresholds`` unless :attr:`AskingConfig.thresholds` is set. ``p_asks=None`` (no request
    detector): nothing is left out, pleasantries included — every sentence is priced.
    ``cost`` (the raw cost of texts, a batch) reads the sentences a strict text doubts
    (:attr:`Thresholds.strict_price`); without it, the strict threshold alone decides.
    ``doubt`` (the detector's doubt model, raw costs, a batch) reads a doubted text of one
    sentence (:attr:`Thresholds.lone`); without it, the sentence threshold alone decides."""
    tau = thresholds if config.thresholds is None else config.thresholds
    check_size(asked, config)
    r = Reading(upstream=list(asked.upstream), opaque=list(asked.opaque))
    units, r.trusted, sent = _units(asked, config, memo)
    r.roles = [role for _, role in units]
    texts = [t for t, _ in units]
    split = [sentences(t) for t in texts]
    if sum(len(s) for s in split) > config.max_segments:
        raise too_many(config, "sentences")
    readable: dict[str, bool] = {}
    pleasant: set[str] = set()
    for ss in split:
        for s in ss:
            if s not in readable:
                readable[s] = not unreadable(s)
                if readable[s] and p_asks is not None and is_pleasantry(s):
                    pleasant.add(s)
    # in a system or developer text, the operator's trusted sentences, the lines that only
    # state the date or time and those that only say how to answer ask for nothing (as sent:
    # a text decoded from another is read whole); the text reads as it would without them
    ours = [frozenset(s for s in ss if prompt_hash(s) in config.trusted_sentences)
            if role in TRUSTABLE_ROLES and config.trusted_sentences else frozenset()
            for (_, role), ss in zip(units, split, strict=True)]
    skip = [o | _set_aside(ss, memo) if role in TRUSTABLE_ROLES and text in sent else o
            for o, (text, role), ss in zip(ours, units, split, strict=True)]
    bare = ["\n".join(s for s in ss if s not in sk) if sk else text
            for (text, _), ss, sk in zip(units, split, skip, strict=True)]
    r.trusted += sum(1 for o, ss in zip(ours, split, strict=True) if ss and o >= set(ss))
    # every readable sentence, the windows of a very long one (detection_windows), and every
    # text of several sentences, scored in one batch
    wholes = [b for b, (_, role), ss, sk in zip(bare, units, split, skip, strict=True)
              if role in INSTRUCTION_ROLES and sum(s not in sk for s in ss) > 1
              ] if tau.text > 0 else []
    probs: dict[str, float] = {}
    if p_asks is not None:
        read_ = [s for s, ok in readable.items() if ok and s not in pleasant]
        parts = {s: detection_windows(s) for s in read_}
        if len(read_) + sum(len(w) for w in parts.values()) > config.max_segments * 4:
            raise too_many(config, "segments")
        ask = list(dict.fromkeys([*read_, *(w for ws in parts.values() for w in ws), *wholes]))
        scores = dict(zip(ask, scored("asks", ask, p_asks, memo), strict=True))
        probs = {t: max([scores[t], *(scores[w] for w in parts.get(t, ()))]) for t in scores}
    strictly = [role in INSTRUCTION_ROLES and sum(s not in sk for s in ss) > 1 and tau.text > 0
                and probs.get(b, 1.0) < tau.text
                for b, (_, role), ss, sk in zip(bare, units, split, skip, strict=True)]

    def asked_at(cuts: list[float], floors: list[float]) -> list[str]:
        r.unreadable, r.left_out = [], 0
        costly = _costly_doubts(split, cuts, floors, labelled, readable, pleasant, probs, tau,
                                cost)
        return [_asked(text, ss, cut, readable, pleasant, probs, costly, r, sk)
                for (text, _), ss, cut, sk in zip(units, split, cuts, skip, strict=True)]

    labelled = [strict and role == "tools" for strict, (_, role) in zip(strictly, units,
                                                                        strict=True)]
    history = [role in HISTORY_ROLES for _, role in units]
    cheap = _cheap_lone(units, split, readable, pleasant, probs, tau, doubt, memo)
    cuts = [tau.strict if strict else tau.history if past or role == PREFILL
            else tau.lone if k in cheap else tau.sentence
            for k, (past, strict, (_, role)) in enumerate(zip(history, strictly, units,
                                                              strict=True))]
    floors = [OFFER_PRICE if role == PREFILL else tau.strict_price if strict else float("inf")
              for strict, (_, role) in zip(strictly, units, strict=True)]
    r.asked = asked_at(cuts, floors)
    if any(history) and not any(a for a, past, (_, role) in zip(r.asked, history, units,
                                                                strict=True)
                                if not past and role not in INSTRUCTION_ROLES):
        # the last turn asks for nothing ("ok, go ahead", "yes please"): it asks for what the
        # model's last turn offered, whose doubted sentences are kept from OFFER_PRICE
        r.asked = asked_at(cuts, [OFFER_PRICE if role == LAST_ANSWER else f
                                  for f, (_, role) in zip(floors, units, strict=True)])
    _segment(r, config)
    last = [k for k, (_, role) in enumerate(units) if role in ("user", None)]  # the last turn
    _ask_back(r, units, split, last, config)
    _with_before(r, units, split, last, readable, pleasant, config, tau, cost)
    return r


def date_lines(ss: list[str]) -> frozenset[str]:
    """The sentences ``ss`` (of a system or developer text) that only state the date or the
    time (:func:`guard.pleasantries.is_date_line`) — a label ("Current date:") only when the
    sentence after it is one too (or none follows), so that a label is never taken from the
    text it introduces
    ("[Current date: 2026-01-07] Can I give my dog ...", split at the colon, is read whole).

    >>> sorted(date_lines(["You are Acme's assistant.", "Current date:", "2026-12-04."]))
    ['2026-12-04.', 'Current date:']
    >>> sorted(date_lines(["Current date:", "2026-12-04, max dose for a toddler"]))
    []
    """
    dated = [is_date_line(s) and not _hides_words(s) for s in ss]
    out: set[str] = set()
    labels: set[str] = set()
    for i, s in enumerate(ss):
        after = i + 1 < len(ss) and dated[i + 1]
        if s.rstrip().endswith(":") and (dated[i] or is_date_label(s)):
            (out if after or i + 1 == len(ss) else labels).add(s)
        elif dated[i]:
            out.add(s)
    return frozenset(out - labels)


def directive_lines(ss: list[str]) -> frozenset[str]:
    """The sentences ``ss`` (of a system or developer text) that only tell the model how to
    answer (:func:`guard.directives.is_directive`: "Think step by step.", "Respond only in
    valid JSON.") and whose decoding spells no word they do not hold.

    >>> sorted(directive_lines(["Be concise.", "Nitroglycerin and viagra.", "Reply in French."]))
    ['Be concise.', 'Reply in French.']
    """
    return frozenset(s for s in ss if is_directive(s) and not _hides_words(s))


#: The shortest word a date line's decoding may spell for the line to be no date line (the
#: leetspeak reader turns "2nd" into "znd", "3rd" into "erd": the lexicon knows such
#: abbreviations; "much", "dose", "insulin" are longer).
HIDDEN_WORD = 4


def _hides_words(sentence: str) -> bool:
    """Whether a decoding of ``sentence`` (:func:`guard.reading.decoded`: a cipher, numbers
    for letters, leetspeak) reads an English word it does not hold (nor a date or time word):
    a date line that spells something is not one. The leetspeak reader's "2026-oe-09" of
    "2026-03-09" holds none (:data:`HIDDEN_WORD`)."""
    own = {w.lower() for w in counted_words(sentence)}
    return any(len(w) >= HIDDEN_WORD and known(w) and w.lower() not in own
               and not is_date_word(w)
               for v in decoded(normalized(sentence), sentence) for w in counted_words(v))


#: Words that open a sentence asking in its form, a question or an order to the model
#: (:func:`asks_in_form`): interrogatives and auxiliaries ("is it safe ..."), and verbs of a
#: request ("tell me ...", "explain why ...", "lmk if ...").
ASKING_OPENERS = frozenset([
    "what", "whats", "how", "hows", "why", "whys", "when", "whens", "where", "wheres", "which",
    "who", "whos", "whom", "whose", "can", "cant", "could", "couldnt", "would", "wouldnt", "will",
    "wont", "should", "shouldnt", "shall", "may", "might", "must", "is", "isnt", "are", "arent",
    "am", "was", "wasnt", "were", "werent", "do", "dont", "does", "doesnt", "did", "didnt",
    "have", "has", "had", "tell", "explain", "give", "gimme", "list", "show", "describe",
    "calculate", "compute", "find", "name", "confirm", "say", "write", "help", "recommend",
    "suggest", "check", "estimate", "identify", "define", "summarize", "summarise", "translate",
    "compare", "walk", "lmk", "provide", "share", "state", "determine", "work", "solve",
    "convert", "figure", "predict", "rate", "rank", "pick", "choose", "advise", "teach",
    "outline", "detail", "clarify", "answer", "let", "need", "want", "wanna", "id", "act",
    "pretend", "imagine", "roleplay", "assume", "suppose", "you", "youre", "ur", "always",
    "never", "respond", "reply", "system", "only",
])
#: Phrases that make a sentence an order to the model wherever they sit ("ur my shopping
#: assistant, tell me if ...").
_ASKING_ANYWHERE = re.compile(r"\b(?:tell|give|show|help) me\b|\blet me know\b|\blmk\b|"
                              r"\bexplain\b", re.IGNORECASE)
#: Words skipped before the opener ("please tell me ...", "ok so how ...", "i need ...").
_LEADING = frozenset(["please", "pls", "plz", "hey", "hi", "ok", "okay", "so", "and", "but",
                      "quick", "quickly", "also", "now", "just", "i"])


_WORD_OR_APOSTROPHE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


def asks_in_form(sentence: str) -> bool:
    """Whether ``sentence`` asks by its form: a question mark, or an opening word of
    :data:`ASKING_OPENERS` (after :data:`_LEADING` words) — "Explain why the MMR vaccine
    causes autism.", "lmk if the store is open" ask whatever the detector says."""
    if sentence.rstrip().endswith("?") or _ASKING_ANYWHERE.search(sentence):
        return True
    words = [w.replace("'", "").replace("\u2019", "") for w in _WORD_OR_APOSTROPHE.findall(
        sentence.lower())]
    for w in words[:6]:
        if w in ASKING_OPENERS:
            return True
        if w not in _LEADING:
            return False
    return False


def _cheap_lone(units: list[tuple[str, str | None]], split: list[list[str]],
                readable: dict[str, bool], pleasant: set[str], probs: dict[str, float],
                tau: Thresholds, doubt: Callable[[list[str]], Sequence[float]] | None,
                memo: Memo | None) -> set[int]:
    """The texts of one doubted sentence that ask for nothing (:attr:`Thresholds.lone`): the
    user's last turn's (role ``user``: not an earlier turn, the model's text, a system prompt,
    a tool definition, nor a text with no role — a schema, a reasoning summary; a persona of
    one sentence, "You are a mechanic who tells customers the minimum brake pad thickness.",
    is read as before), of at most :data:`DETECT_LONG` words (a run-on sentence, a question
    buried in filler, is read as before); not asking by its form
    (:func:`asks_in_form`: a question, "tell me ...") nor a pleasantry; ``P(asks)`` at or
    above the sentence threshold and below :attr:`Thresholds.lone`; priced below
    :attr:`Thresholds.lone_price` by the doubt model (one batch call of ``doubt``). A user's
    statement the detector doubts ("my wifi keeps cutting out") is priced by a model that has
    seen such lines at the floor; a sentence of a longer text, a question, an order to the
    model, and what the doubt model prices high are read as before."""
    if doubt is None or tau.lone <= tau.sentence:
        return set()
    lone = {k: ss[0] for k, ((_, role), ss) in enumerate(zip(units, split, strict=True))
        if len(ss) == 1 and role == "user" and len(ss[0].split()) <= DETECT_LONG
        and readable[ss[0]] and ss[0] not in pleasant and not asks_in_form(ss[0])
        and tau.sentence <= probs.get(ss[0], 1.0) < tau.lone}
    if not lone:
        return set()
    doubted = list(dict.fromkeys(lone.values()))
    price = dict(zip(doubted, scored("doubt", doubted, doubt, memo), strict=True))
    return {k for k, s in lone.items() if price[s] < tau.lone_price}


#: How many earlier texts (the user's earlier turns, the model's last turn) a question that asks
#: nothing by itself is read with (:func:`_ask_back`).
ASK_BACK_TEXTS = 4


def _ask_back(r: Reading, units: list[tuple[str, str | None]], split: list[list[str]],
              last: list[int], config: AskingConfig) -> None:
    """When the user's last turn asks nothing by itself yet puts a question ("Is it ok to mix
    these?", "Are they ok together?"), it asks about what came before: the turn is also read
    whole with the earlier texts of the conversation (the user's earlier turns, the model's
    last turn: at most :data:`ASK_BACK_TEXTS`), as one segment the cost model prices
    ("That's nitroglycerin and sildenafil. Is it ok to mix these?"). Not when there is
    nothing before the question to ask about."""
    if not last or any(r.asked[k] for k in last) or not any(
            s.rstrip().endswith("?") for k in last for s in split[k]):
        return
    before = [t for (t, role) in units if role in (HISTORY, LAST_ANSWER)][-ASK_BACK_TEXTS:]
    own = [units[k][0] for k in last]
    if not before and sum(len(split[k]) for k in last) < 2:
        return
    joined = "\n".join([*before, *own])
    if len(r.segments) >= config.max_segments:
        raise too_many(config, "segments")
    r.asked.append(joined)
    r.segments.append(joined)
    r.owners.append(len(r.asked) - 1)


def _with_before(r: Reading, units: list[tuple[str, str | None]], split: list[list[str]],
                 last: list[int], readable: dict[str, bool], pleasant: set[str],
                 config: AskingConfig,
                 tau: Thresholds, cost: Callable[[list[str]], Sequence[float]] | None) -> None:
    """The user's last turn is also read with each earlier text of the conversation, one at a
    time: every text a client can write before or around it (its own earlier turns, the
    model's turns, tool results, a prefill after it), pleasantries left out, joined with the
    last turn; and, when the last turn asks nothing by itself yet holds several texts or
    sentences, the last turn read whole (a client's parts, role-less texts, a text it also
    sent in an earlier turn: fifth red-team round, 2026-12-03). A join the
    cost model prices at :attr:`Thresholds.strict_price` or more is kept as a segment, as a
    doubted sentence of a system prompt is — from :data:`OFFER_PRICE` when the last turn asks
    nothing by itself ("ok", "go ahead": it asks about what came before). A subject named in a
    sentence the detector reads as asking nothing ("Good morning, quick one about warfarin and
    ibuprofen.", "That's warfarin and ibuprofen.") is asked about by whatever the last turn
    says ("Let me know what you think", "Can he have both?"), however far back it sits (fourth
    red-team round, 2026-12-03). A cheaper join is left out: the cost model prices a harmless
    line joined with a question above the question alone, and every chat would pay for it
    (docs/results.md: with every pair counted, bench --contexts on the held-out split kept
    0.80 of the tiny models' gain with two harmless exchanges, against 0.93; the floors are
    two the guard already had, compared on the training split's contexts). Not system prompts
    and tool definitions: a product's prompt would price every question as its topic."""
    r.paired = len(r.asked)
    if cost is None or tau.strict_price == float("inf") or not last:
        return
    own = "\n".join(units[k][0] for k in last)
    joins = []
    for (_, role), ss in zip(units, split, strict=True):
        if role not in INSTRUCTION_ROLES and role not in ("user", None):
            said = [s for s in ss if readable[s] and s not in pleasant]
            if said:
                joins.append("\n".join([*said, own]))
    # the last turn asks nothing by itself ("ok", "go ahead"): it asks about what came before,
    # as it asks for the model's offer (OFFER_PRICE); and when it holds several texts or
    # sentences (parts, a text the client also sent in another role), about what it says
    # itself, read whole
    quiet = not any(r.asked[k] for k in last)
    if quiet and (len(last) > 1 or sum(readable[s] and s not in pleasant
                                       for k in last for s in split[k]) > 1):
        joins.append(own)
    if len(r.segments) + len(joins) > config.max_segments:
        raise too_many(config, "segments")
    floor = OFFER_PRICE if quiet else tau.strict_price
    if joins:
        for joined, c in zip(joins, cost(joins), strict=True):
            if float(c) >= floor:
                r.asked.append(joined)
                r.segments.append(joined)
                r.owners.append(len(r.asked) - 1)


def _asked(text: str, ss: list[str], cut: float, readable: dict[str, bool],
           pleasant: set[str], probs: dict[str, float], costly: set[str], r: Reading,
           skip: frozenset[str] = frozenset()) -> str:
    """The asked text of ``text`` (its sentences ``ss``) read at threshold ``cut``, without the
    sentences ``skip`` (the operator's trusted ones, date lines): what is left out and what
    cannot be read are counted in ``r``."""
    kept: list[str] = []
    changed = False
    for s in ss:
        if s in skip:
            changed = True
        elif not readable[s]:
            changed = True
            d = decoded_unreadable(s)
            if d is None:
                r.unreadable.append(s)
            else:
                kept.append(d)
        elif s in pleasant or (probs.get(s, 1.0) < cut and s not in costly):
            changed = True
            r.left_out += 1
        else:
            kept.append(s)
    return ("\n".join(kept) if changed else text) if kept else ""


#: In a tool definition read strictly, a doubted line of at most this many words that is not a
#: question is a label (a property name, an enum value: "units", "normal"): the detector alone
#: decides on it, never the cost model, whose price of one or two words out of a sentence is
#: noise (it prices "units" 8.3, "normal" 12.1 — as costly as a dose question). Not in a system
#: prompt, where two words after a sentence naming a subject ask about it ("The user takes
#: nitroglycerin and wants sildenafil.\nBoth safe?": red team, 2026-12-03), and never a
#: question.
LABEL_WORDS = 2
_WORD = re.compile(r"[^\W_]+")


def is_label(sentence: str) -> bool:
    """Whether ``sentence`` has at most :data:`LABEL_WORDS` words (an identifier's parts
    counted as words) and asks no question (no ``?``).

    >>> is_label("units"), is_label("to_currency"), is_label("max_dose_mg"), is_label("Both safe?")
    (True, True, False, False)
    """
    return "?" not in sentence and len(_WORD.findall(sentence)) <= LABEL_WORDS


def _costly_doubts(split: list[list[str]], cuts: list[float], floors: list[float],
                   labelled: list[bool], readable: dict[str, bool], pleasant: set[str],
                   probs: dict[str, float], tau: Thresholds,
                   cost: Callable[[list[str]], Sequence[float]] | None) -> set[str]:
    """The sentences of the texts read above :attr:`Thresholds.sentence` with a finite floor
    (strictly: :attr:`Thresholds.strict_price`; the model's offer: :data:`OFFER_PRICE`) whose
    ``P(asks)`` is doubtful (at or above the sentence threshold, below the text's own) and
    whose raw cost is at least the floor: they are kept (one batch call of ``cost``) — a
    costly question diluted in a persona, or a costly answer the model offers ("Let me tell
    you the maximum dose of ..."). A label (:func:`is_label`) in a text of ``labelled`` (a
    tool definition read strictly) is not: the detector alone decides on it."""
    if cost is None:
        return set()
    floor: dict[str, float] = {}
    for ss, cut, f, has_labels in zip(split, cuts, floors, labelled, strict=True):
        if cut > tau.sentence and f != float("inf"):
            for s in ss:
                if readable[s] and s not in pleasant and tau.sentence <= probs.get(s, 1.0) < cut \
                        and not (has_labels and is_label(s)):
                    floor[s] = min(f, floor.get(s, f))
    if not floor:
        return set()
    doubted = list(floor)
    return {s for s, c in zip(doubted, cost(doubted), strict=True) if float(c) >= floor[s]}


def _segment(r: Reading, config: AskingConfig) -> None:
    """The segments of the asked texts (:func:`guard.segments.owned_segments`), capped."""
    owned = owned_segments(r.asked)
    if len(owned) > config.max_segments:
        raise too_many(config, "segments")
    r.segments = [s for s, _ in owned]
    r.owners = [k for _, k in owned]
    r.read_texts = len(r.asked)
