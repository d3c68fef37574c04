"""What a refused reply contains: the one refusal-substitution function.

When the guard refuses, the caller receives a reply built from an **allow-list**, never the
model's reply with known answer fields deleted: whatever field a provider adds tomorrow
(``reasoning_content``, ``audio``, ``annotations``, ...) cannot survive a refusal. Used by the
decorator (through :meth:`guard.Guard.apply`) and the proxy (non-streaming and streaming).

A refused chat completion keeps only

* the envelope: ``id``, ``object``, ``created``, ``model`` (each only when it is a string,
  ``created`` only when an integer) and ``usage`` as :func:`refused_usage` gives it (the
  prompt's token counts; the completion's are 0, which would tell the refused answer's
  length);
  not ``system_fingerprint`` nor ``service_tier``, which describe the upstream that answered;
* per choice: ``index``, ``message = {"role": "assistant", "content": <refusal text>}``,
  ``logprobs = None``, ``finish_reason = "stop"``.

Tool calls, a legacy ``function_call``, logprobs, reasoning, audio, the ``refusal`` field and
every other field are dropped. A ``chat.completion.chunk`` (a stream event) is refused the
same way, with ``delta`` in place of ``message``.

API (stable; other modules build on it):

* :func:`refused_completion(reply, refusal_text) <refused_completion>` — a refused copy of a
  completion or chunk, same type as given (a mapping gives a ``dict``, an ``openai``
  pydantic model the same model class); the input is never modified;
* :func:`refused_message(refusal_text) <refused_message>` — the refused message alone;
* :func:`refused_response(reply, refusal_text) <refused_response>` — a refused copy of a
  Responses API ``response`` object (``POST /v1/responses``): it keeps only ``id``,
  ``object``, ``model``, ``status`` (strings), ``created_at`` (a number) and
  :func:`refused_usage`; its ``output`` is one assistant message with one ``output_text`` part,
  the refusal text. Reasoning items, function calls, logprobs, annotations, ``instructions``,
  ``metadata`` and every other field are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from guard.completion import field
from guard.exceptions import ConfigError

T = TypeVar("T")

#: Envelope fields a refusal keeps (string values only).
ENVELOPE_STR_FIELDS = ("id", "object", "model")
#: The object type of a stream event (refused with ``delta`` instead of ``message``).
CHUNK_OBJECT = "chat.completion.chunk"


def plain_mapping(obj: Any) -> Any:
    """A mapping view of ``obj`` (pydantic models are dumped, extra fields included)."""
    if isinstance(obj, Mapping):
        return obj
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


#: The ``usage`` entries of the prompt a refusal keeps (Chat Completions, Responses API).
PROMPT_COUNTS = ("prompt_tokens", "input_tokens")
#: Their breakdowns (cached tokens, audio tokens), kept as numbers.
PROMPT_DETAILS = ("prompt_tokens_details", "input_tokens_details")
#: The counts of the completion, which a refusal reports as 0: the refused answer's length
#: would tell about it.
COMPLETION_COUNTS = ("completion_tokens", "output_tokens")


def _numbers(value: Any) -> dict[str, Any]:
    """The numeric entries of a mapping (nested mappings too), nothing else."""
    out: dict[str, Any] = {}
    for key, v in value.items():
        if not isinstance(key, str):
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[key] = v
        elif isinstance(v, Mapping) and (nested := _numbers(v)):
            out[key] = nested
    return out


def refused_usage(usage: Any) -> dict[str, Any] | None:
    """The ``usage`` of a refused reply: the prompt's token counts (and their details) as
    the upstream reported them, the completion's as 0 and ``total_tokens`` as the prompt's —
    nothing that tells how long the refused answer was (its length, its reasoning tokens);
    ``None`` without a usage mapping.

    >>> refused_usage({"prompt_tokens": 12, "completion_tokens": 250, "total_tokens": 262,
    ...                "completion_tokens_details": {"reasoning_tokens": 200}})
    {'prompt_tokens': 12, 'completion_tokens': 0, 'total_tokens': 12}
    """
    if not isinstance(usage, Mapping):
        return None
    out: dict[str, Any] = {}
    for key, value in usage.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in PROMPT_COUNTS and number:
            out[key] = value
        elif key in PROMPT_DETAILS and isinstance(value, Mapping):
            out[key] = _numbers(value)
        elif key in COMPLETION_COUNTS:
            out[key] = 0
        elif key == "total_tokens" and number:
            out[key] = next((usage[k] for k in PROMPT_COUNTS if isinstance(
                usage.get(k), (int, float)) and not isinstance(usage.get(k), bool)), 0)
    return out


def refused_message(refusal_text: str) -> dict[str, Any]:
    """The message of a refused choice: the role and the refusal text, nothing else.

    >>> refused_message("I cannot answer.")
    {'role': 'assistant', 'content': 'I cannot answer.'}
    """
    return {"role": "assistant", "content": refusal_text}


def refused_choice(index: int, refusal_text: str, *, chunk: bool = False) -> dict[str, Any]:
    """One refused choice: its ``index``, the refusal message (a ``delta`` in a stream
    chunk), ``logprobs: null``, finish ``"stop"``; nothing else.

    >>> refused_choice(1, "No.")  # doctest: +NORMALIZE_WHITESPACE
    {'index': 1, 'message': {'role': 'assistant', 'content': 'No.'}, 'logprobs': None,
     'finish_reason': 'stop'}
    """
    return {"index": index, ("delta" if chunk else "message"): refused_message(refusal_text),
            "logprobs": None, "finish_reason": "stop"}


def _refused_dict(reply: Mapping[str, Any], refusal_text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ENVELOPE_STR_FIELDS:
        if isinstance(reply.get(key), str):
            out[key] = reply[key]
    created = reply.get("created")
    if isinstance(created, int) and not isinstance(created, bool):
        out["created"] = created
    chunk = out.get("object") == CHUNK_OBJECT
    out.setdefault("object", "chat.completion")
    choices = reply.get("choices")
    if not isinstance(choices, Sequence) or isinstance(choices, (str, bytes)):
        choices = []
    refused: list[dict[str, Any]] = []
    for position, ch in enumerate(choices):
        index = field(ch, "index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            index = position
        refused.append(refused_choice(index, refusal_text, chunk=chunk))
    out["choices"] = refused
    usage = refused_usage(plain_mapping(reply.get("usage")))
    if usage is not None:
        out["usage"] = usage
    return out


def refused_completion(reply: T, refusal_text: str) -> T:
    """A refused copy of the chat completion (or stream chunk) ``reply``: every choice says
    ``refusal_text`` and nothing of the answer is left (see the module docstring).

    ``reply`` is a mapping (the JSON of the Chat Completions API) or a pydantic model such as
    ``openai.types.chat.ChatCompletion``; the result has the same type and ``reply`` is not
    modified.

    Examples
    --------
    >>> answer = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
    ...           "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": {},
    ...                        "message": {"role": "assistant", "content": None,
    ...                                    "reasoning_content": "it is 400 mg",
    ...                                    "tool_calls": [{"id": "t"}]}}],
    ...           "usage": {"prompt_tokens": 3, "completion_tokens": 9, "note": "400 mg"}}
    >>> refused_completion(answer, "I cannot answer.")  # doctest: +NORMALIZE_WHITESPACE
    {'id': 'c1', 'object': 'chat.completion', 'model': 'm', 'created': 1,
     'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'I cannot answer.'},
                  'logprobs': None, 'finish_reason': 'stop'}],
     'usage': {'prompt_tokens': 3, 'completion_tokens': 0}}
    """
    if not isinstance(refusal_text, str):
        raise ConfigError("the refusal text must be a string")
    if isinstance(reply, Mapping):
        return cast(T, _refused_dict(reply, refusal_text))
    validate = getattr(type(reply), "model_validate", None)
    data = plain_mapping(reply)
    if not callable(validate) or not isinstance(data, Mapping):
        raise ConfigError(f"cannot refuse a {type(reply).__name__}; expected a chat completion "
                          "mapping or a pydantic model")
    return cast(T, validate(_refused_dict(data, refusal_text)))


#: Envelope fields a refused Responses API ``response`` keeps (string values only).
RESPONSE_STR_FIELDS = ("id", "object", "model", "status")
#: The id of a refused response's one message item.
REFUSAL_ITEM_ID = "msg_utilityguard_refusal"


def refused_output_item(refusal_text: str) -> dict[str, Any]:
    """The one output item of a refused response: an assistant message saying
    ``refusal_text`` in one ``output_text`` part."""
    return {"type": "message", "id": REFUSAL_ITEM_ID, "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": refusal_text, "annotations": []}]}


def refused_response(reply: Mapping[str, Any], refusal_text: str) -> dict[str, Any]:
    """A refused copy of the Responses API ``response`` object ``reply`` (see the module
    docstring); ``reply`` is not modified.

    Examples
    --------
    >>> answer = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m",
    ...           "status": "completed", "instructions": "dose is 400 mg",
    ...           "output": [{"type": "reasoning", "summary": [{"text": "400 mg"}]},
    ...                      {"type": "function_call", "name": "dose", "arguments": "400"}],
    ...           "usage": {"input_tokens": 3, "output_tokens": 9, "note": "400 mg"}}
    >>> refused_response(answer, "No.")  # doctest: +NORMALIZE_WHITESPACE
    {'id': 'resp_1', 'object': 'response', 'model': 'm', 'status': 'completed',
     'created_at': 1, 'output': [{'type': 'message', 'id': 'msg_utilityguard_refusal',
     'status': 'completed', 'role': 'assistant', 'content': [{'type': 'output_text',
     'text': 'No.', 'annotations': []}]}], 'usage': {'input_tokens': 3, 'output_tokens': 0}}
    """
    if not isinstance(refusal_text, str):
        raise ConfigError("the refusal text must be a string")
    out: dict[str, Any] = {k: reply[k] for k in RESPONSE_STR_FIELDS
                           if isinstance(reply.get(k), str)}
    created = reply.get("created_at")
    if isinstance(created, (int, float)) and not isinstance(created, bool):
        out["created_at"] = created
    out.setdefault("object", "response")
    out["output"] = [refused_output_item(refusal_text)]
    usage = refused_usage(plain_mapping(reply.get("usage")))
    if usage is not None:
        out["usage"] = usage
    return out
