"""The text of a chat message, and the final user turn: the question a reply answers.

What the guard *prices* is every text the model reads, found by one walk of the whole request
(:func:`guard.request_walk.walk`, priced by :mod:`guard.asking`); :func:`last_user_message` is
the final turn, which the reply (and so its confidence and P(True)) answers.

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
    reply answers; the request is priced on everything it carries (:mod:`guard.asking`)."""
    return last_user_message(messages) or ""
