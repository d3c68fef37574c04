"""Server-sent events of the Responses API: reading the upstream's, emitting the client's.

The upstream's stream is buffered whole (the decision needs the complete reply):
:func:`parse_events` reads its events, :func:`final_response` takes the ``response`` object of
its ``response.completed`` (or ``response.incomplete``) event, and
:func:`check_events_match` makes sure the events stream no text that object does not hold
(the decision is made on it). The client then receives
:func:`replay` (the upstream's events unchanged, the decision object added to the last one)
or :func:`refused_events` (a new, valid sequence ``response.created`` ...
``response.output_text.delta`` ... ``response.completed`` carrying only the allow-listed
refusal of :func:`guard.refusal_substitution.refused_response`). Each event is written as
``event: <type>`` and ``data: <json>``; the Responses API ends a stream without ``[DONE]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from guard.exceptions import UpstreamError
from guard.proxy.streaming import finish, parse_sse, sse
from guard.refusal_substitution import REFUSAL_ITEM_ID

#: Event types whose ``response`` is the final one.
FINAL_TYPES = ("response.completed", "response.incomplete")


def parse_events(raw: bytes, upstream: str = "upstream") -> list[dict[str, Any]]:
    """The events of a Responses API stream; an ``error`` or ``response.failed`` event raises
    :class:`UpstreamError` (the stream failed).

    >>> parse_events(b'event: response.created\\ndata: {"type": "response.created"}\\n\\n')
    [{'type': 'response.created'}]
    """
    events = parse_sse(raw, upstream)
    for event in events:
        check_event(event, upstream)
    return events


def check_event(event: Mapping[str, Any], upstream: str = "upstream") -> None:
    """:class:`UpstreamError` when ``event`` says the stream failed (``error``,
    ``response.failed``)."""
    if event.get("type") in ("error", "response.failed"):
        response = event.get("response")
        err = event.get("message") or (response.get("error")
                                       if isinstance(response, dict) else None)
        raise UpstreamError(f"the upstream at {upstream} failed during the stream: {err}")


def final_response(events: Sequence[Mapping[str, Any]], upstream: str = "upstream"
                   ) -> dict[str, Any]:
    """The ``response`` object of the stream's final event (:data:`FINAL_TYPES`)."""
    for event in reversed(events):
        if event.get("type") in FINAL_TYPES and isinstance(event.get("response"), dict):
            return dict(event["response"])
    raise UpstreamError(f"the upstream at {upstream} ended its stream without a "
                        "response.completed event")

def relayed_response(events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``response`` object the events of a stream cut short make, as far as they go: the
    final one when it came, else the ``response.created`` envelope with the output its events
    streamed (each message's output texts and their logprobs, each function call's name and
    arguments), for the decision on what was relayed (:mod:`guard.proxy.early`).

    >>> delta = {"type": "response.output_text.delta", "item_id": "m", "content_index": 0}
    >>> relayed_response([{"type": "response.created", "response": {"id": "r"}},
    ...                   {**delta, "delta": "Par"}, {**delta, "delta": "is"}])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'id': 'r', 'output': [{'type': 'message', 'id': 'm', 'content': [{'type': 'output_text',
     'text': 'Paris', 'logprobs': []}]}]}
    """
    for event in reversed(events):
        if event.get("type") in FINAL_TYPES and isinstance(event.get("response"), dict):
            return dict(event["response"])
    out: dict[str, Any] = next((dict(e["response"]) for e in events
                                if e.get("type") == "response.created"
                                and isinstance(e.get("response"), dict)), {})
    items: dict[Any, dict[str, Any]] = {}
    for event in events:
        kind, item_id = event.get("type"), event.get("item_id")
        added = event.get("item")
        if kind == "response.output_item.added" and isinstance(added, dict):
            items[added.get("id")] = {**added, "content": [], "arguments": ""} \
                if added.get("type") == "function_call" else {**added, "content": []}
        elif kind == "response.output_text.delta":
            item = items.setdefault(item_id, {"type": "message", "id": item_id, "content": []})
            parts, index = item["content"], event.get("content_index", 0)
            while isinstance(index, int) and len(parts) <= index < 1024:
                parts.append({"type": "output_text", "text": "", "logprobs": []})
            part = parts[index] if isinstance(index, int) and 0 <= index < len(parts) else None
            if part is not None:
                part["text"] += str(event.get("delta") or "")
                part["logprobs"] += list(event.get("logprobs") or [])
        elif kind == "response.function_call_arguments.delta" and item_id in items:
            items[item_id]["arguments"] = str(items[item_id].get("arguments") or "") + \
                str(event.get("delta") or "")
    return {**out, "output": list(items.values())}



def _final_parts(final: Mapping[str, Any]) -> tuple[dict[tuple[Any, Any], str], dict[Any, str]]:
    """The final response's output texts by (item id, content index) and function-call
    arguments by item id."""
    texts: dict[tuple[Any, Any], str] = {}
    args: dict[Any, str] = {}
    output = final.get("output")
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            args[item.get("id")] = str(item.get("arguments") or "")
        content = item.get("content")
        for index, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") == "output_text":
                texts[item.get("id"), index] = str(part.get("text") or "")
    return texts, args


def check_events_match(events: Sequence[Mapping[str, Any]], final: Mapping[str, Any],
                       upstream: str = "upstream") -> None:
    """Raise :class:`UpstreamError` unless the text the events stream (output-text deltas
    and ``done`` texts, function-call argument deltas and ``done`` arguments) is exactly the
    text of the final ``response`` — the object the guard decides on. A delivered answer is
    the upstream's events, so a stream that says something its final object does not would
    deliver text nobody decided on.

    >>> final = {"output": [{"type": "message", "id": "m", "content": [
    ...     {"type": "output_text", "text": "Paris"}]}]}
    >>> delta = {"type": "response.output_text.delta", "item_id": "m", "content_index": 0}
    >>> check_events_match([{**delta, "delta": "Par"}, {**delta, "delta": "is"}], final)
    >>> check_events_match([{**delta, "delta": "400 mg"}], final)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.UpstreamError: the upstream at upstream streamed text that its...
    """
    texts, args = _final_parts(final)
    streamed: dict[tuple[Any, Any], str] = {}
    streamed_args: dict[Any, str] = {}
    done: list[tuple[Any, str, str]] = []  # (item id, what the event says, what final says)
    for event in events:
        kind, item = event.get("type"), event.get("item_id")
        if kind == "response.output_text.delta":
            key = (item, event.get("content_index", 0))
            streamed[key] = streamed.get(key, "") + str(event.get("delta") or "")
        elif kind == "response.output_text.done":
            key = (item, event.get("content_index", 0))
            done.append((item, str(event.get("text") or ""), texts.get(key, "\0missing")))
        elif kind == "response.function_call_arguments.delta":
            streamed_args[item] = streamed_args.get(item, "") + str(event.get("delta") or "")
        elif kind == "response.function_call_arguments.done":
            done.append((item, str(event.get("arguments") or ""), args.get(item, "\0missing")))
    mismatched = [key[0] for key, text in streamed.items() if texts.get(key) != text]
    mismatched += [key for key, text in streamed_args.items() if args.get(key) != text]
    mismatched += [key for key, said, held in done if said != held]
    if mismatched:
        raise UpstreamError(f"the upstream at {upstream} streamed text that its final "
                            f"response object does not hold (item {mismatched[0]!r}); "
                            "nothing was delivered")


def encode_event(event: Mapping[str, Any]) -> bytes:
    """One SSE event of the Responses API: ``event: <type>``, ``data: <json>``
    (:func:`~guard.proxy.streaming.sse`)."""
    kind = event.get("type")
    return sse(event, kind if isinstance(kind, str) else None)


def replay(events: Sequence[Mapping[str, Any]], final: Mapping[str, Any] | None = None
           ) -> bytes:
    """The upstream's events as the client's stream, ``final`` (the decision object) added
    to the last one (:func:`~guard.proxy.streaming.finish`; no ``[DONE]``)."""
    return finish(events, final, encode=encode_event, end=b"")


def refused_events(refused: Mapping[str, Any], refusal_text: str,
                   final: Mapping[str, Any] | None = None) -> bytes:
    """The stream of a refused response ``refused`` (from
    :func:`guard.refusal_substitution.refused_response`): created, the message item and its one
    text part
    (one delta: the refusal text), completed; ``final`` added to the last event.

    >>> body = refused_events({"id": "r", "object": "response", "output": []}, "No.")
    >>> [line for line in body.decode().splitlines() if line.startswith("event:")][:3]
    ['event: response.created', 'event: response.output_item.added', \
'event: response.content_part.added']
    """
    ids = {"item_id": REFUSAL_ITEM_ID, "output_index": 0, "content_index": 0}
    part = {"type": "output_text", "text": refusal_text, "annotations": []}
    item = {"type": "message", "id": REFUSAL_ITEM_ID, "status": "completed",
            "role": "assistant", "content": [part]}
    started = {k: v for k, v in refused.items() if k != "usage"}
    events: list[dict[str, Any]] = [
        {"type": "response.created",
         "response": {**started, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", **ids, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **ids, "delta": refusal_text, "logprobs": []},
        {"type": "response.output_text.done", **ids, "text": refusal_text, "logprobs": []},
        {"type": "response.content_part.done", **ids, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {**refused, "status": "completed"}},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return replay(events, final)
