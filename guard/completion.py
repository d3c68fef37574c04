"""Reading and rewriting OpenAI chat completions without depending on the ``openai`` package.

A completion is either the JSON object of the Chat Completions API (a mapping) or an
``openai.types.chat.ChatCompletion`` (a pydantic model). The guard reads the first choice's
message content and logprobs, and rewrites the content in a deep copy: the caller's object is
never mutated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeVar, cast

from guard.exceptions import ConfigError

T = TypeVar("T")


def field(obj: Any, key: str) -> Any:
    """``obj[key]`` of a mapping, ``obj.key`` of an object (the SDKs' typed replies), ``None``
    when absent: the one mapping-or-attribute read of the distribution.

    >>> field({"role": "user"}, "role"), field(object(), "role")
    ('user', None)
    """
    if type(obj) is dict or isinstance(obj, Mapping):  # (a dict first: no ABC check)
        return obj.get(key)
    return getattr(obj, key, None)




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


def with_text(completion: T, text: str, index: int | None = 0) -> T:
    """A deep copy of ``completion`` whose choice ``index`` (every choice for ``None``) has
    message content ``text``.

    The input is never modified. pydantic models are copied with ``model_copy(deep=True)``,
    mappings with :func:`copy.deepcopy`.

    Examples
    --------
    >>> original = {"choices": [{"message": {"role": "assistant", "content": "Paris"}}]}
    >>> completion_text(with_text(original, "I cannot answer."))
    'I cannot answer.'
    >>> completion_text(original)
    'Paris'
    """
    n = len(_choices(completion))
    if index is not None and not 0 <= index < n:
        raise ConfigError(f"completion has no choice {index} to rewrite")
    indices = range(n) if index is None else (index,)
    if isinstance(completion, Mapping):
        out: Any = copy.deepcopy(dict(completion))
        for i in indices:
            message = out["choices"][i].get("message")
            if not isinstance(message, dict):
                message = {"role": "assistant"}
                out["choices"][i]["message"] = message
            message["content"] = text
        return cast(T, out)
    if not hasattr(completion, "model_copy"):
        raise ConfigError(
            f"cannot copy a {type(completion).__name__}; expected a mapping or a pydantic model"
        )
    model: Any = completion
    copied = model.model_copy(deep=True)
    for i in indices:
        copied.choices[i].message.content = text
    return cast(T, copied)
