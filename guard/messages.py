"""What the guard prices: every text a request carries — one rule for the decorator, both
proxy routes and the integrations, so the same request is priced the same way on every path.

:func:`request_texts` (a chat's ``messages``) and :func:`responses_texts` (a Responses API
body) list the texts: the text of every message whatever its role (system, developer, user,
assistant, tool), every text content part by itself and the parts of a message joined, the
arguments of the tool calls a message holds; for the Responses API also ``instructions`` and
every input item. :func:`guard.segments.request_segments` cuts them into the question
segments the cost model prices; the price is the maximum (:meth:`guard.Guard.price`).
:func:`last_user_message` is the final turn, which the reply (and so the confidence)
answers.

The text of a message is its ``content`` when that is a string; for a list of content parts
(text, images, audio, ...) it is the text parts joined with a newline (``"\\n"``; non-text
parts are skipped). Messages may be mappings (the JSON of the Chat Completions API) or objects
with ``role`` / ``content`` attributes (``openai`` or LangChain message models).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guard.completion import field

#: What joins the text parts of one message.
PART_SEPARATOR = "\n"


def message_text(content: Any) -> str | None:
    """The text of a message ``content`` (``None`` when it has no text).

    Examples
    --------
    >>> message_text([{"type": "text", "text": "What is"}, {"type": "image_url"},
    ...               {"type": "text", "text": "this?"}])
    'What is\\nthis?'
    >>> message_text("Capital of France?"), message_text(None)
    ('Capital of France?', None)
    """
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = [field(p, "text") for p in content]
        text = PART_SEPARATOR.join(p for p in parts if isinstance(p, str))
        return text or None
    return None


def last_user_message(messages: Any) -> str | None:
    """The text of the last ``{"role": "user", ...}`` message of a chat, or ``None``.

    >>> last_user_message([{"role": "system", "content": "Be brief."},
    ...                    {"role": "user", "content": "Capital of France?"}])
    'Capital of France?'
    """
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        return None
    for m in reversed(messages):
        if field(m, "role") == "user":
            return message_text(field(m, "content"))
    return None


def query_text(messages: Any) -> str:
    """The final user turn (:func:`last_user_message`), ``""`` when there is none: what the
    reply answers; the request is priced on :func:`request_texts`."""
    return last_user_message(messages) or ""


#: Keys whose string values are text a client wrote (message content, content parts, tool
#: call arguments and outputs, refusals, Responses items); anything else (ids, urls, base64
#: data, roles) is not priced.
TEXT_KEYS = ("content", "text", "arguments", "output", "refusal", "input", "instructions")
#: Keys that hold nested items to look into (content parts, tool calls, functions).
NESTED_KEYS = ("content", "tool_calls", "function", "input", "output")
#: How deep :func:`item_texts` looks into one item (a JSON body is already depth-checked).
MAX_DEPTH = 8
#: the keys :func:`item_texts` reads, in order, each once
_ITEM_KEYS = tuple(dict.fromkeys((*TEXT_KEYS, *NESTED_KEYS)))


def item_texts(item: Any, depth: int = 0) -> list[str]:
    """Every client text of one message or input item, in order: each string under a text
    key (a mapping or an object's attribute), nested items looked into.

    >>> item_texts({"role": "assistant", "content": None, "tool_calls": [
    ...     {"function": {"name": "dose", "arguments": '{"drug": "insulin"}'}}]})
    ['{"drug": "insulin"}']
    """
    if isinstance(item, str):
        return [item]
    if depth >= MAX_DEPTH or item is None or isinstance(item, (bytes, bytearray, int, float)):
        return []
    if type(item) is not dict and isinstance(item, Sequence):  # (a dict is not: no ABC check)
        return [t for x in item for t in item_texts(x, depth + 1)]
    out: list[str] = []
    for key in _ITEM_KEYS:
        value = field(item, key)
        if isinstance(value, str):
            if key in TEXT_KEYS:
                out.append(value)
        elif value is not None and key in NESTED_KEYS:
            out.extend(item_texts(value, depth + 1))
    return out


def _with_joined(texts: list[str]) -> list[str]:
    """A message's texts, and their join when there are several (one question split over
    content parts)."""
    return [*texts, PART_SEPARATOR.join(texts)] if len(texts) > 1 else texts


def request_texts(messages: Any) -> list[str]:
    """Every text of a chat's ``messages`` (see the module docstring), in order.

    >>> request_texts([{"role": "system", "content": "Max dose of insulin?"},
    ...                {"role": "user", "content": [{"type": "text", "text": "Go"},
    ...                                             {"type": "text", "text": "on."}]}])
    ['Max dose of insulin?', 'Go', 'on.', 'Go\\non.']
    """
    if isinstance(messages, str):
        return [messages]
    if not isinstance(messages, Sequence) or isinstance(messages, (bytes, bytearray)):
        return []
    return [t for m in messages for t in _with_joined(item_texts(m))]


def responses_texts(body: Any) -> list[str]:
    """Every text of a Responses API request body: ``instructions``, then ``input`` (a
    string, or every input item as in :func:`request_texts`).

    >>> responses_texts({"instructions": "Be brief.", "input": "Max dose?"})
    ['Be brief.', 'Max dose?']
    """
    out: list[str] = []
    instructions = field(body, "instructions")
    if isinstance(instructions, str):
        out.append(instructions)
    return out + request_texts(field(body, "input"))
