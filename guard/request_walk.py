"""Every text the model reads in a request: one walk of the whole body, for every route.

The guard prices what a request asks wherever the model reads it (:mod:`guard.asking`), so the
walk reads the body the way an upstream does rather than an allow-list of fields: every string
is text the model reads except under keys known to hold something else (:data:`SKIP_KEYS`: ids,
roles, types, URLs, base64 media, sampling settings, metadata). Strings that hold JSON (tool call
arguments, tool results) are read as well as their parsed values; the base64 data of a file part
is decoded and read when it is text, and a file the guard cannot read (a PDF, ...) is counted
in :attr:`Asked.opaque`. Text that lives upstream — a ``previous_response_id``, a stored
``prompt``'s id, a ``conversation``, a ``file_id``, an ``item_reference``, an earlier audio
reply's ``audio.id`` — cannot be read at all: the keys are listed in :attr:`Asked.upstream`
and the guard prices them at a configured ceiling.

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
from urllib.parse import unquote

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
#: Keys whose value is free-form — a JSON schema (a tool's parameters, a response format's),
#: a stored prompt's variables — like JSON inside a string (a tool call's arguments, a tool's
#: result): written by the client, not shaped by the API, so :data:`SKIP_KEYS` and the other
#: keys above mean nothing there. Every value in it is read (a property named ``user`` or
#: ``id``, a ``metadata`` object inside a schema), and so is every key that is a name or words
#: (:data:`NAMED_MAPS`, or a key with spaces or of :data:`KEY_CHARS` characters or more).
FREE_KEYS = frozenset({"parameters", "schema", "input_schema", "output_schema", "variables"})
#: Keys whose mapping is keyed by names the client chose: every key there is read as words.
NAMED_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                        "dependentSchemas", "variables"})
#: The Responses API's built-in tools (their ``type``): an API that takes them does not show
#: their settings (:data:`TOOL_CONFIG_KEYS`) to the model (a settings key in any other tool is
#: read).
BUILT_IN_TOOLS = frozenset({
    "file_search", "web_search", "web_search_preview", "web_search_preview_2025_03_11",
    "web_search_2025_08_26", "computer_use_preview", "computer_use", "code_interpreter",
    "image_generation", "local_shell", "shell", "mcp", "apply_patch"})
#: The ``type`` of a tool, or of an object in one, that the APIs define (Chat Completions,
#: Responses' built-in tools, their options): skipped in a tool definition, where any other
#: ``type`` is read (:data:`TOOL_SKIPPED`).
TOOL_TYPES = BUILT_IN_TOOLS | frozenset({
    "function", "custom", "grammar", "text", "approximate", "auto", "json_schema",
    "json_object", "eq", "ne", "gt", "gte", "lt", "lte", "and", "or", "in", "nin"})
#: Keys of a built-in tool (:data:`BUILT_IN_TOOLS`) that configure it — ids, addresses,
#: credentials, sizes, settings — and are not text the model reads: skipped there (read, a
#: ``file_search`` tool's vector store id priced a trivia question 1.39 instead of 0.63), read
#: in any other tool.
TOOL_CONFIG_KEYS = frozenset({
    "vector_store_ids", "server_url", "connector_id", "authorization", "headers",
    "require_approval", "container", "file_ids", "search_context_size", "ranking_options",
    "max_num_results", "filters", "user_location", "display_width", "display_height",
    "environment", "background", "input_fidelity", "moderation", "output_compression",
    "output_format", "partial_images", "quality", "size", "input_image_mask",
    "allowed_domains"})
#: Keys of :data:`SKIP_KEYS` still skipped in a tool definition (what they hold is no text: an
#: address, an opaque blob); under any other key of :data:`SKIP_KEYS` a tool's text is read —
#: an API that takes a tool defines none of them (``id``, ``metadata``, ``user``, ...), and a
#: server that passes the tool's JSON to its chat template may show them to the model.
TOOL_SKIPPED = frozenset({"url", "image_url", "encrypted_content", "signature"})
#: A key of a free-form mapping this long (or with spaces) is read as text.
KEY_CHARS = 20
#: JSON schema type names: the value of a free-form ``type`` that is not text.
SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
#: Keys holding a file's base64 data (or a data URL): decoded and read when it is text.
FILE_DATA_KEYS = frozenset({"file_data"})
#: A web address is read as words when its path and query hold at least this many.
URL_WORDS = 4
#: Strings longer than this are not parsed as JSON (they are still read as text).
MAX_JSON_CHARS = 200_000
#: How deep the walk looks: text nested deeper is not read, and counted as a file the guard
#: cannot read (:attr:`Asked.opaque`, priced at the ceiling).
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


def url_words(url: str) -> str | None:
    """The words of a web address's path and query (a page's slug reads as text to a model
    that opened it), or ``None`` when it has fewer than :data:`URL_WORDS` words or is no web
    address (a data URL is media).

    >>> url_words("https://example.com/can-i-take-nitroglycerin-with-sildenafil?x=1")
    'can i take nitroglycerin with sildenafil x 1'
    >>> url_words("https://cdn.example.com/img/a1.png"), url_words("data:image/png;base64,AA")
    (None, None)
    """
    if not url.startswith(("http://", "https://")) or len(url) > MAX_JSON_CHARS:
        return None
    rest = url.split("://", 1)[1]
    tail = rest.split("/", 1)[1] if "/" in rest else ""
    words = [w for w in re.split(r"[/\-_.+=&?#%:;,~]+", unquote(tail)) if w]
    return " ".join(words) if sum(w.isalpha() for w in words) >= URL_WORDS else None


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
              key: str | None = None, free: bool = False) -> None:
        if v is None or isinstance(v, (bool, int, float)):
            return
        if depth > MAX_DEPTH:
            self.out.opaque.append(f"{where} (nested deeper than {MAX_DEPTH})")
            return
        if isinstance(v, str):
            self.string(identifier_words(v) if key in NAME_KEYS else v, role, where, depth)
        elif isinstance(v, Mapping) or (hasattr(v, "__dict__") and not isinstance(v, Sequence)):
            if free:
                self.free_mapping(v, role, where, depth)
            else:
                self.mapping(v, role, where, depth)
        elif isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
            for k, x in enumerate(v):
                self.value(x, role, f"{where}[{k}]", depth + 1, free=free)

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
                self.value(parsed, role, f"{where}<json>", depth + 1, free=True)

    def free_mapping(self, m: Any, role: str | None, where: str, depth: int) -> None:
        """A mapping the client wrote freely (:data:`FREE_KEYS`): every value read, and every
        key that is a name or words."""
        items = m.items() if isinstance(m, Mapping) else _attributes(m)
        named = where.rsplit(".", 1)[-1] in NAMED_MAPS
        for key, v in items:
            path = f"{where}.{key}"
            if isinstance(key, str) and (named or " " in key.strip() or len(key) >= KEY_CHARS):
                self.string(identifier_words(key), role, f"{path}<key>", depth)
            if not named and key == "type" and _schema_type(v):
                continue
            self.value(v, role, path, depth + 1, free=True)

    def mapping(self, m: Any, role: str | None, where: str, depth: int) -> None:
        items = m.items() if isinstance(m, Mapping) else _attributes(m)
        own = read_field(m, "role")
        if isinstance(own, str) and role != "tools":  # a tool definition stays one, whatever
            role = own  # "role" a client writes in it
        if read_field(m, "type") == "item_reference":
            self.out.upstream.append(f"{where}.item_reference")
            return
        tool = role == "tools"
        built_in = tool and read_field(m, "type") in BUILT_IN_TOOLS
        for key, v in items:
            path = f"{where}.{key}" if where else str(key)
            if built_in and key in TOOL_CONFIG_KEYS:
                continue
            if key in FREE_KEYS:
                self.value(v, role, path, depth + 1, free=True)
                continue
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
            if key == "audio" and isinstance(v, Mapping) and v.get("id"):
                self.out.upstream.append(f"{path}.id")  # an earlier audio reply, kept upstream
                continue
            if key == "prompt" and isinstance(v, Mapping):  # a stored prompt: id upstream
                if v.get("id"):
                    self.out.upstream.append(f"{path}.id")
                self.value({k: x for k, x in v.items() if k != "id"}, role, path, depth + 1)
                continue
            if key == "url" and isinstance(v, str) and (words := url_words(v)):
                self.out.texts.append(RequestText(words, role, f"{path}<words>",
                                                  _unit(role, path)))
                continue
            if key in SKIP_KEYS:
                if tool and _read_in_tool(key, v):  # a client's text, where no API puts one
                    self.value(v, role, path, depth + 1, free=True)
                continue
            sub = "system" if key == "instructions" else "tools" \
                if key in ("tools", "functions") else role
            self.value(v, sub, path, depth + 1, key)


def _read_in_tool(key: str, v: Any) -> bool:
    """A value under a key of :data:`SKIP_KEYS` in a tool definition is read: every one but
    a ``type`` the APIs define (:data:`TOOL_TYPES`, a JSON schema type) and the keys of
    :data:`TOOL_SKIPPED`."""
    if key in TOOL_SKIPPED:
        return False
    if key == "type":
        return isinstance(v, str) and v not in TOOL_TYPES and not _schema_type(v)
    return True


def _schema_type(v: Any) -> bool:
    """``v`` is a JSON schema ``type``: a type name or a list of them."""
    names = v if isinstance(v, list) else [v]
    return bool(names) and all(isinstance(x, str) and x in SCHEMA_TYPES for x in names)


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
