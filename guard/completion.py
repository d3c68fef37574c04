"""Reading and rewriting OpenAI chat completions without depending on the ``openai`` package.

A completion is either the JSON object of the Chat Completions API (a mapping) or an
``openai.types.chat.ChatCompletion`` (a pydantic model). The guard reads each choice's answer
(:func:`choice_answer`) and logprobs; what it delivers is built by :mod:`guard.delivery`, and
:func:`without_logprobs` is the one removal of logprobs a caller did not ask for. Nothing here
modifies the caller's object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple


def field(obj: Any, key: str) -> Any:
    """``obj[key]`` of a mapping, ``obj.key`` of an object (the SDKs' typed replies), ``None``
    when absent: the one mapping-or-attribute read of the distribution.

    >>> field({"role": "user"}, "role"), field(object(), "role")
    ('user', None)
    """
    if type(obj) is dict or isinstance(obj, Mapping):  # (a dict first: no ABC check)
        return obj.get(key)
    return getattr(obj, key, None)


def without_logprobs(value: Any) -> Any:
    """``value`` (a chat completion, one of its choices or stream chunks, a Responses API
    object or event) as the API sends it when no logprobs were asked for: every ``logprobs``
    list emptied (the Responses API's), any other ``logprobs`` value ``null`` (a chat
    choice's); the rest as it is. The one logprob-stripping of the distribution: the proxy's
    replies and streams of both APIs, the integrations. ``value`` is not modified.

    >>> without_logprobs({"index": 0, "logprobs": {"content": [{"token": "Pa"}]}})
    {'index': 0, 'logprobs': None}
    >>> without_logprobs({"type": "response.output_text.delta", "delta": "Pa",
    ...                   "logprobs": [{"token": "Pa", "logprob": -0.1}]})
    {'type': 'response.output_text.delta', 'delta': 'Pa', 'logprobs': []}
    """
    if isinstance(value, Mapping):
        return {k: ([] if isinstance(v, list) else None) if k == "logprobs"
                else without_logprobs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_logprobs(v) for v in value]
    return value


def is_completion(obj: Any) -> bool:
    """True for a chat completion mapping or object (one with a ``choices`` sequence).

    Examples
    --------
    >>> is_completion({"choices": [{"message": {"content": "Paris"}}]})
    True
    >>> is_completion("Paris"), is_completion({"text": "Paris"})
    (False, False)
    """
    if isinstance(obj, (str, bytes)):
        return False
    choices = field(obj, "choices")
    return isinstance(choices, Sequence) and not isinstance(choices, (str, bytes))


def _choices(completion: Any) -> Sequence[Any]:
    choices = field(completion, "choices")
    if not isinstance(choices, Sequence) or isinstance(choices, (str, bytes)):
        return ()
    return choices


def completion_text(completion: Any, index: int = 0) -> str | None:
    """The message content of choice ``index``; ``None`` when absent or not text.

    Examples
    --------
    >>> completion_text({"choices": [{"message": {"content": "Paris"}}]})
    'Paris'
    >>> completion_text({"choices": []}) is None, completion_text({"choices": [{}]}) is None
    (True, True)
    """
    choices = _choices(completion)
    if index >= len(choices):
        return None
    content = field(field(choices[index], "message"), "content")
    return content if isinstance(content, str) else None


class ChoiceAnswer(NamedTuple):
    """What a choice answers with, as the guard judges it.

    Attributes
    ----------
    content : str or None
        The message content (what the verbal extractor cleans).
    text : str or None
        The text the guard decides on: the content, the audio transcript, and each tool call
        (and legacy ``function_call``) as ``name(arguments)``, one per line; ``None`` when the
        choice says nothing at all.
    acts : bool
        The message calls a tool: it is an answer (never the model's own refusal), and a
        refusal must drop the call.
    """

    content: str | None
    text: str | None
    acts: bool


def _calls(message: Any) -> list[str]:
    calls: list[Any] = []
    tool_calls = field(message, "tool_calls")
    if isinstance(tool_calls, Sequence) and not isinstance(tool_calls, (str, bytes)):
        calls.extend(field(tc, "function") for tc in tool_calls)
    if (legacy := field(message, "function_call")) is not None:
        calls.append(legacy)
    out = []
    for fn in calls:
        name, args = field(fn, "name"), field(fn, "arguments")
        args = args if isinstance(args, str) else json.dumps(args, default=str)
        out.append(f"{name if isinstance(name, str) else ''}({args})")
    return out


def choice_answer(completion: Any, index: int = 0) -> ChoiceAnswer:
    """The answer of choice ``index`` (see :class:`ChoiceAnswer`).

    Examples
    --------
    >>> choice_answer({"choices": [{"message": {"content": "Paris"}}]})
    ChoiceAnswer(content='Paris', text='Paris', acts=False)
    >>> choice_answer({"choices": [{"message": {"content": None, "tool_calls": [
    ...     {"type": "function", "function": {"name": "dose", "arguments": "{\\"mg\\": 400}"}}]}}]})
    ChoiceAnswer(content=None, text='dose({"mg": 400})', acts=True)
    >>> choice_answer({"choices": []})
    ChoiceAnswer(content=None, text=None, acts=False)
    """
    choices = _choices(completion)
    message = field(choices[index], "message") if index < len(choices) else None
    content = field(message, "content")
    content = content if isinstance(content, str) else None
    parts = [content] if content else []
    transcript = field(field(message, "audio"), "transcript")
    if isinstance(transcript, str) and transcript:
        parts.append(transcript)
    calls = _calls(message) if message is not None else []
    parts.extend(calls)
    text = "\n".join(parts) if parts else content
    return ChoiceAnswer(content, text, bool(calls))


def completion_texts(completion: Any) -> list[str | None]:
    """The message content of every choice (``n > 1`` sampling), in order."""
    return [completion_text(completion, i) for i in range(len(_choices(completion)))]


def completion_logprobs(completion: Any, index: int = 0) -> Any:
    """The ``logprobs`` object of choice ``index`` (``None`` when absent or null)."""
    choices = _choices(completion)
    return field(choices[index], "logprobs") if index < len(choices) else None
