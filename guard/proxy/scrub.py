"""Finding a secret in every form a reply can carry it, and masking it in place.

:class:`Secrets` compiles the configured secrets (proxy keys, upstream keys, the audit
database's password) into what a relayed body is searched for:

* *exact spellings*: the secret, its JSON-escaped forms, its URL-quoted form, and the base64
  of the secret at each of the three alignments it can have inside a longer base64 text (the
  ``Basic`` form of ``user:KEY`` URL credentials, a base64 blob), in both alphabets;
* its *skeleton*: the secret's letters and digits, lower-cased. A body holds the secret
  upper-cased, spaced out or split by punctuation or JSON escapes (``s k - p r o``,
  ``SK-PROXY``, ``sk\\nproxy``) exactly when the skeleton of the body holds the secret's
  skeleton. The check is one C-level pass (:func:`skeleton`); only a hit builds the map from
  skeleton positions back to bytes (:func:`mask_skeletons`).

Masking keeps every byte count and every JSON structure: an exact spelling becomes as many
``*``; a skeleton hit turns the letters and digits it covers into ``*`` and leaves the
separators and escape sequences between them as they are. :class:`SseScrubber` does the same
for a stream relayed event by event: it follows the delta texts of each choice (or output)
across events, holds an event back while the text so far ends with the beginning of a
secret's skeleton, and masks the secret in every held event once it is complete, so a secret
split across two deltas never reaches the client.

Secrets shorter than :data:`MIN_SKELETON` letters and digits are matched by their exact
spellings only (a short skeleton would match ordinary words).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from urllib.parse import quote

#: The fewest letters and digits a secret needs to be matched by its skeleton.
MIN_SKELETON = 8
#: The shortest base64 core searched for (shorter ones would match by chance).
MIN_BASE64 = 12
#: A stream holds back at most this many events (then sends them: the bound of a stall).
MAX_HELD_EVENTS = 256

_ESCAPE = re.compile(rb"\\(?:u[0-9a-fA-F]{4}|.)", re.DOTALL)
_NOT_ALNUM = bytes(b for b in range(256) if not (48 <= b <= 57 or 97 <= b <= 122))
_ALNUM = frozenset(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
#: the text fields of a chat chunk or a Responses event, and what says whose text they are
_DELTA_TEXT = re.compile(
    rb'"(?:content|reasoning_content|reasoning|refusal|arguments|transcript|delta|text)"'
    rb'\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)
_STREAM_KEY = re.compile(rb'"(?:index|output_index)"\s*:\s*(\d{1,9})')


def skeleton(data: bytes) -> bytes:
    """The letters and digits of ``data``, lower-cased, JSON escape sequences dropped.

    >>> skeleton(b'SK-pro\\\\nXY 12')
    b'skproxy12'
    """
    return _ESCAPE.sub(b"", data).lower().translate(None, _NOT_ALNUM)


def _base64_cores(secret: bytes) -> set[bytes]:
    """The base64 characters fixed by ``secret`` alone, at each alignment, both alphabets."""
    out: set[bytes] = set()
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        total = offset + len(secret)
        enc = base64.b64encode(b"\0" * offset + secret)[skip:4 * (total // 3)]
        if len(enc) >= MIN_BASE64:
            out.update((enc, enc.translate(bytes.maketrans(b"+/", b"-_"))))
    return out


def spellings(secret: str) -> set[bytes]:
    """The exact byte strings ``secret`` may be relayed as (see the module docstring)."""
    raw = secret.encode()
    out = {raw, json.dumps(secret)[1:-1].encode(),
           json.dumps(secret, ensure_ascii=False)[1:-1].encode(),
           json.dumps(secret)[1:-1].replace("/", "\\/").encode(),  # PHP-style escaping
           quote(secret, safe="").encode()}
    return out | _base64_cores(raw)


class Secrets:
    """The configured secrets, compiled (see the module docstring)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        given = sorted({s for s in secrets if s})
        exact: set[bytes] = set()
        for s in given:
            exact |= spellings(s)
        #: exact spellings, longest first (one containing another is replaced whole)
        self.exact = sorted(exact, key=len, reverse=True)
        skeletons = {skeleton(s.encode()) for s in given}
        #: skeletons of the secrets long enough to have one
        self.skeletons = sorted((k for k in skeletons if len(k) >= MIN_SKELETON), key=len,
                                reverse=True)

    def __bool__(self) -> bool:
        return bool(self.exact)

    def scrub(self, data: bytes) -> bytes:
        """``data`` with every secret, in every form, masked (same length)."""
        for s in self.exact:
            if s in data:
                data = data.replace(s, b"*" * len(s))
        if self.skeletons:
            skel = skeleton(data)
            if any(k in skel for k in self.skeletons):
                data = mask_skeletons(data, [(0, len(data))], self.skeletons)
        return data

    def scrub_text(self, text: str) -> str:
        """:meth:`scrub` of a text (for log lines)."""
        return self.scrub(text.encode("utf-8", "replace")).decode("utf-8", "replace")


def _skeleton_map(data: bytes, spans: Iterable[tuple[int, int]]) -> tuple[bytes, list[int]]:
    """The skeleton of ``data``'s byte ``spans`` and, for each of its characters, the offset
    of the byte it came from."""
    chars, where = bytearray(), []
    for start, end in spans:
        i = start
        while i < end:
            b = data[i]
            if b == 0x5C:  # a backslash: skip the escape sequence
                i += 6 if i + 1 < end and data[i + 1] == 0x75 else 2
                continue
            if b in _ALNUM:
                chars.append(b | 0x20 if 65 <= b <= 90 else b)
                where.append(i)
            i += 1
    return bytes(chars), where


def mask_skeletons(data: bytes, spans: Iterable[tuple[int, int]], skeletons: Iterable[bytes]
                   ) -> bytes:
    """``data`` with the letters and digits of every occurrence of a ``skeletons`` entry in
    the skeleton of its ``spans`` replaced by ``*`` (separators and escapes kept)."""
    skel, where = _skeleton_map(data, spans)
    out = bytearray(data)
    for k in skeletons:
        start = skel.find(k)
        while start >= 0:
            for j in range(start, start + len(k)):
                out[where[j]] = 0x2A
            start = skel.find(k, start + 1)
    return bytes(out)


class SseScrubber:
    """Scrubs one ``text/event-stream`` response, fed its body chunks in order (see the
    module docstring).

    Invariant: what was sent of a stream never ends with the beginning of a secret's
    skeleton (else the event is held), so a secret that runs through several events lies
    whole in events still held, where it is masked once complete. :data:`MAX_HELD_EVENTS`
    bounds a stall; the skeleton already sent is remembered per stream, so a secret that
    resumes after such a release is still masked from where it resumes. The position map
    (a Python loop over bytes) is built only when a secret is actually there."""

    def __init__(self, secrets: Secrets) -> None:
        self.secrets = secrets
        self._pending = b""  # an event not yet complete
        self._held: list[bytes] = []  # complete events held back
        self._held_skel: dict[bytes, bytes] = {}  # per stream: the skeleton of held text
        self._sent: dict[bytes, bytes] = {}  # per stream: the end of the skeleton sent
        self._keep = max((len(k) for k in secrets.skeletons), default=1) - 1
        self._firsts = sorted({k[:1] for k in secrets.skeletons})
        #: every proper beginning of a secret's skeleton
        self._prefixes = {k[:n] for k in secrets.skeletons for n in range(1, len(k))}

    def feed(self, chunk: bytes, more: bool) -> bytes:
        """What may be sent of ``chunk`` (and of what was held); with ``more`` false,
        everything left."""
        data = self._pending + chunk
        if not more and not self._held and not self._sent and self.secrets.skeletons:
            whole = self._whole(data)  # the usual case: a buffered stream in one chunk
            if whole is not None:
                self._pending = b""
                return whole
        cut = data.rfind(b"\n\n")
        end = cut + 2 if cut >= 0 else 0
        if not more:
            end = len(data)
        self._pending = data[end:]
        out: list[bytes] = []
        for event in _EVENT_END.split(data[:end]):
            if event:
                out.extend(self._event(event))
        if not more:
            out.extend(self._release())
        return b"".join(out)

    def _whole(self, data: bytes) -> bytes | None:
        """A whole stream of one choice scrubbed at once (C-level passes, no per-event work),
        or ``None`` when it needs the event-by-event path (several choices, or a secret runs
        through its deltas)."""
        if len(set(_STREAM_KEY.findall(data))) > 1:
            return None
        text = skeleton(b"".join(m.group(1) for m in _DELTA_TEXT.finditer(data)))
        if any(k in text for k in self.secrets.skeletons):
            return None
        return self.secrets.scrub(data)

    def _event(self, event: bytes) -> list[bytes]:
        event = self.secrets.scrub(event)  # whatever lies inside the one event
        if not self.secrets.skeletons:
            return [event]
        spans = _text_spans(event)
        if not spans and not self._held:
            return [event]
        for key, start, end in spans:
            self._held_skel[key] = self._held_skel.get(key, b"") + skeleton(event[start:end])
        self._held.append(event)
        full = {key: self._sent.get(key, b"") + part for key, part in self._held_skel.items()}
        if any(k in f for f in full.values() for k in self.secrets.skeletons):
            self._mask_held()  # a secret runs through the held text: mask it in place
            full = {key: self._sent.get(key, b"") + part
                    for key, part in self._held_skel.items()}
        if len(self._held) < MAX_HELD_EVENTS and any(self._open(f) for f in full.values()):
            return []
        return self._release()

    def _open(self, tail: bytes) -> bool:
        """Whether ``tail`` ends with the beginning of a secret's skeleton."""
        start = max(0, len(tail) - self._keep)
        for first in self._firsts:
            at = tail.find(first, start)
            while at >= 0:
                if tail[at:] in self._prefixes:
                    return True
                at = tail.find(first, at + 1)
        return False

    def _mask_held(self) -> None:
        """Mask every secret skeleton that ends in the held events' text (per stream, joined
        to what was sent before), and read the held skeletons again."""
        joined = bytearray(b"\n\n".join(self._held))
        offsets, pos = [], 0
        for event in self._held:
            offsets.append(pos)
            pos += len(event) + 2
        spans: dict[bytes, list[tuple[int, int]]] = {}
        for n, event in enumerate(self._held):
            for key, start, end in _text_spans(event):
                spans.setdefault(key, []).append((offsets[n] + start, offsets[n] + end))
        data = bytes(joined)
        for key, where_spans in spans.items():
            sent = self._sent.get(key, b"")
            skel, where = _skeleton_map(data, where_spans)
            full = sent + skel
            for k in self.secrets.skeletons:
                i = full.find(k)
                while i >= 0:
                    for j in range(max(i, len(sent)), i + len(k)):
                        joined[where[j - len(sent)]] = 0x2A
                    i = full.find(k, i + 1)
        data = bytes(joined)
        self._held = [data[o:o + len(e)] for o, e in zip(offsets, self._held, strict=True)]
        self._held_skel = {key: _skeleton_map(data, where_spans)[0]
                           for key, where_spans in spans.items()}

    def _release(self) -> list[bytes]:
        for key, part in self._held_skel.items():
            tail = self._sent.get(key, b"") + part
            self._sent[key] = tail[-self._keep:] if self._keep else b""
        held, self._held, self._held_skel = self._held, [], {}
        return held


_EVENT_END = re.compile(rb"(?<=\n\n)")


def _text_spans(event: bytes) -> list[tuple[bytes, int, int]]:
    """``(stream key, start, end)`` of each delta text value in one event's bytes, the key
    being the nearest ``"index"`` / ``"output_index"`` before it."""
    keys = [(m.start(), m.group(1)) for m in _STREAM_KEY.finditer(event)]
    out = []
    for m in _DELTA_TEXT.finditer(event):
        key = b"0"
        for at, value in keys:
            if at > m.start():
                break
            key = value
        out.append((key, m.start(1), m.end(1)))
    return out
