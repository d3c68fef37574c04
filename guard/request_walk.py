"""Every text the model reads in a request: one walk of the whole body, for every route.

The guard prices what a request asks wherever the model reads it (:mod:`guard.asking`), so the
walk reads the body the way an upstream does rather than an allow-list of fields: every string
is text the model reads except under keys known to hold something else (:data:`SKIP_KEYS`: ids,
roles, types, URLs, base64 media, sampling settings, metadata). Strings that hold JSON (tool call
arguments, tool results) are read as well as their parsed values; the base64 data of a file part
is decoded and read when it is text, and a file the guard cannot read (a PDF, ...) is counted
in :attr:`Asked.opaque`. Text that lives upstream — a ``previous_response_id``, a stored
``prompt``'s id, a ``conversation``, a ``file_id``, an ``item_reference`` — cannot be read at
all: the keys are listed in :attr:`Asked.upstream` and the guard prices them at a configured
ceiling.

Each text keeps the role of the message it sits in (``system``, ``developer``, ``user``,
``assistant``, ``tool``; ``instructions`` read as ``system``, tool definitions as ``tools``),
so that an operator's trusted system prompt can be recognized (only in a system or developer
position).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from guard.completion import field as read_field
from guard.reading.decode import readable_text

#: Keys whose values are not text the model reads (or are media), skipped with what they hold.
SKIP_KEYS = frozenset({
    "model", "user", "metadata", "id", "call_id", "tool_call_id", "item_id", "response_id",
    "type", "role", "status", "object", "url", "image_url", "detail", "mime_type",
    "media_type", "voice", "encrypted_content", "signature", "service_tier",
    "reasoning_effort", "effort", "truncation", "modalities", "logit_bias", "seed",
    "safety_identifier", "prompt_cache_key", "stream", "stream_options", "n", "temperature",
    "top_p", "max_tokens", "max_completion_tokens", "max_output_tokens", "logprobs",
    "top_logprobs", "presence_penalty", "frequency_penalty", "parallel_tool_calls", "store",
    "background", "include", "input_audio", "audio", "image", "image_data", "input_image",
    "annotations", "index", "created", "created_at", "strict", "version", "stop",
})
#: Keys whose (string) value names text kept upstream: it cannot be read here.
UPSTREAM_KEYS = frozenset({"previous_response_id", "conversation", "file_id", "file_url"})
#: Keys whose string value is a name a model reads as words (``get_max_dose``).
NAME_KEYS = frozenset({"name"})
#: Keys holding a file's base64 data (or a data URL): decoded and read when it is text.
FILE_DATA_KEYS = frozenset({"file_data"})
#: Strings longer than this are not parsed as JSON (they are still read as text).
MAX_JSON_CHARS = 200_000
#: How deep the walk looks (the proxy's JSON body is depth-checked before).
MAX_DEPTH = 32


@dataclass(frozen=True)
class RequestText:
    """One text the model reads: the text, the role of the message it sits in, where, and the
    unit it belongs to (a tool definition's name, description and parameters, or a message's
    content parts, are read together as one text)."""

    text: str
    role: str | None = None
    where: str = ""
    unit: str = ""


_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)+$"
                         r"|^[a-z]+(?:[A-Z][a-z0-9]*)+$")


def identifier_words(name: str) -> str:
    """A name as the words a model reads in it: ``get_max_dose`` and ``getMaxDose`` become
    ``get max dose``; anything else is returned as it is.

    >>> identifier_words("get_max_dose"), identifier_words("getMaxDose"), identifier_words("x")
    ('get max dose', 'get Max Dose', 'x')
    """
    if not _IDENTIFIER.match(name):
        return name
    spaced = re.sub(r"[_\-.]+", " ", name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", spaced)


@dataclass
class Asked:
    """Every text of a request (:attr:`texts`, in body order) and what cannot be read."""

    texts: list[RequestText] = field(default_factory=list)
    #: keys of text kept upstream (``previous_response_id``, a stored prompt's id, ...)
    upstream: list[str] = field(default_factory=list)
    #: files whose content is not text the guard can read (where they are)
    opaque: list[str] = field(default_factory=list)

    @classmethod
    def of_texts(cls, texts: str | Sequence[str], role: str | None = "user") -> Asked:
        """Plain texts (one question, or the texts of a request) as an :class:`Asked`, read
        as the walk reads any string (JSON in a text is read too: :func:`walk`)."""
        return walk(texts if isinstance(texts, str) else list(texts), role=role)

    def strings(self) -> list[str]:
        """The texts alone."""
        return [t.text for t in self.texts]

    def last_text(self, role: str = "user") -> str:
        """The last text of ``role`` (``""`` when there is none)."""
        return next((t.text for t in reversed(self.texts) if t.role == role), "")


def _data_text(data: str) -> str | None:
    """The text of a file's base64 data or data URL, ``None`` when it is not UTF-8 text."""
    raw = data.split(",", 1)[1] if data.startswith("data:") and "," in data else data
    try:
        blob = base64.b64decode(raw, validate=False)
    except (binascii.Error, ValueError):
        return None
    return readable_text(blob)


class _Walk:
    def __init__(self) -> None:
        self.out = Asked()

    def value(self, v: Any, role: str | None, where: str, depth: int,
              key: str | None = None) -> None:
        if depth > MAX_DEPTH or v is None or isinstance(v, (bool, int, float)):
            return
        if isinstance(v, str):
            self.string(identifier_words(v) if key in NAME_KEYS else v, role, where, depth)
        elif isinstance(v, Mapping) or (hasattr(v, "__dict__") and not isinstance(v, Sequence)):
            self.mapping(v, role, where, depth)
        elif isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
            for k, x in enumerate(v):
                self.value(x, role, f"{where}[{k}]", depth + 1)

    def string(self, v: str, role: str | None, where: str, depth: int) -> None:
        if not v.strip():
            return
        self.out.texts.append(RequestText(v, role, where, _unit(role, where)))
        s = v.lstrip()
        if s[:1] in "{[" and len(v) <= MAX_JSON_CHARS:  # JSON in a string: its values too
            try:
                parsed = json.loads(v)
            except (ValueError, RecursionError):
                return
            if isinstance(parsed, (dict, list)):
                self.value(parsed, role, f"{where}<json>", depth + 1)

    def mapping(self, m: Any, role: str | None, where: str, depth: int) -> None:
        items = m.items() if isinstance(m, Mapping) else _attributes(m)
        own = read_field(m, "role")
        role = own if isinstance(own, str) else role
        if read_field(m, "type") == "item_reference":
            self.out.upstream.append(f"{where}.item_reference")
            return
        schema_keys = where.endswith(("properties", "$defs", "definitions"))
        for key, v in items:
            path = f"{where}.{key}" if where else str(key)
            if schema_keys and isinstance(key, str):  # a schema's property names are read
                self.string(identifier_words(key), role, f"{path}<key>", depth)
            if key in UPSTREAM_KEYS:
                if v:
                    self.out.upstream.append(path)
                continue
            if key in FILE_DATA_KEYS and isinstance(v, str):
                text = _data_text(v)
                if text is None:
                    self.out.opaque.append(path)
                else:
                    self.out.texts.append(RequestText(text, role, path, _unit(role, path)))
                continue
            if key == "prompt" and isinstance(v, Mapping):  # a stored prompt: id upstream
                if v.get("id"):
                    self.out.upstream.append(f"{path}.id")
                self.value({k: x for k, x in v.items() if k != "id"}, role, path, depth + 1)
                continue
            if key in SKIP_KEYS:
                continue
            sub = "system" if key == "instructions" else "tools" \
                if key in ("tools", "functions") else role
            self.value(v, sub, path, depth + 1, key)


def _unit(role: str | None, where: str) -> str:
    """The unit a text belongs to, read as one text: one tool definition (``tools[3]``), the
    content parts of one message (``messages[2].content``, its parts joined by line breaks);
    every other text is its own unit."""
    if role == "tools" and (m := re.match(r"^(?:[^\[]*?)(tools|functions)\[\d+\]", where)):
        return m.group(0)
    if m := re.match(r"^(.*?\.content)\[\d+\]", where):
        return m.group(1)
    return where


def _attributes(obj: Any) -> list[tuple[str, Any]]:
    """The public attributes of an SDK object (a pydantic model or a plain object)."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        data = dump(exclude_none=True)
        return list(data.items()) if isinstance(data, dict) else []
    return [(k, v) for k, v in vars(obj).items() if not k.startswith("_")]


#: The fields of a chat or Responses call the model reads: what an integration (LiteLLM,
#: LangChain, the decorator) walks when the call's arguments also hold its own settings.
REQUEST_KEYS = ("messages", "tools", "functions", "response_format", "prediction", "input",
                "instructions", "text", "prompt", "previous_response_id", "conversation")


def walk_request(call: Mapping[str, Any]) -> Asked:
    """:func:`walk` of the :data:`REQUEST_KEYS` of a call's arguments (a LiteLLM request, a
    decorated function's keyword arguments), the rest left out.

    >>> [t.text for t in walk_request({"messages": [{"role": "user", "content": "Hi?"}],
    ...                                "litellm_call_id": "c1", "model": "m"}).texts]
    ['Hi?']
    """
    return walk({k: call[k] for k in REQUEST_KEYS if call.get(k) is not None})


def walk(value: Any, *, role: str | None = None) -> Asked:
    """Every text the model reads in ``value`` (a request body, its ``messages``, one message,
    or a text), in order, with what cannot be read.

    Examples
    --------
    >>> a = walk({"model": "m", "messages": [
    ...     {"role": "system", "content": "Be brief."},
    ...     {"role": "user", "content": [{"type": "text", "text": "Max dose?"},
    ...                                  {"type": "image_url", "image_url": {"url": "x"}}]}],
    ...     "tools": [{"type": "function", "function": {"name": "dose",
    ...                "description": "Look up a dose."}}]})
    >>> [(t.role, t.text) for t in a.texts]  # doctest: +NORMALIZE_WHITESPACE
    [('system', 'Be brief.'), ('user', 'Max dose?'), ('tools', 'dose'),
     ('tools', 'Look up a dose.')]
    >>> walk({"previous_response_id": "resp_1", "input": "and for a child?"}).upstream
    ['previous_response_id']
    """
    w = _Walk()
    w.value(value, role, "", 0)
    return w.out
