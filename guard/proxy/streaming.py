"""Server-sent events: reading the upstream's stream, and emitting the client's.

The proxy buffers the whole upstream stream, because the decision (and so the response
headers) needs the complete reply. :func:`parse_sse` reads the ``data:`` events,
:func:`assemble` builds the equivalent non-streaming completion (content, logprobs and tool
calls of each choice), and the client receives either

* :func:`replay` — the upstream's own chunks, minus what the guard added (logprobs the client
  did not ask for, choices beyond the ``n`` it asked for), when the delivered text is the
  upstream's; or
* :func:`synthesize` — new chunks from the delivered completion (role chunk, one content
  chunk, finish chunk per choice, then the usage chunk if asked), when the guard changed the
  text (a removed confidence line, or a refusal: then the completion is the allow-listed one
  of :func:`guard.refusal_substitution.refused_completion`, so the chunks carry nothing of the
  answer);

each chunk a ``chat.completion.chunk`` event, the stream ending in ``data: [DONE]``.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from guard.completion import without_logprobs
from guard.exceptions import UpstreamError
from utilityguard_base.wellformed import loads_standard

DONE = b"data: [DONE]\n\n"
_META = ("id", "created", "model", "system_fingerprint", "service_tier")


class SSEReader:
    """An incremental reader of the ``data:`` events of an SSE body: :meth:`feed` it bytes as
    they arrive and get the JSON objects of the events they complete; :attr:`done` once
    ``[DONE]`` was read (later bytes are ignored). The rules are :func:`parse_sse`'s.

    >>> reader = SSEReader()
    >>> reader.feed(b'data: {"a"'), reader.feed(b': 1}\\n\\ndata: [DONE]\\n\\n'), reader.done
    ([], [{'a': 1}], True)
    """

    def __init__(self, upstream: str = "upstream") -> None:
        self.upstream = upstream
        self.done = False
        self._pending = ""
        self._data: list[str] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, raw: bytes, *, final: bool = False) -> list[dict[str, Any]]:
        """The events that ``raw`` completes (``final``: the body ended, so is the last
        event)."""
        if self.done:
            return []
        text = self._pending + self._decoder.decode(raw, final=final)
        text = text.replace("\r\n", "\n")
        if not final and text.endswith("\r"):  # maybe the first half of a CRLF
            self._pending, text = "\r", text[:-1]
        else:
            self._pending = ""
        lines = text.replace("\r", "\n").split("\n")
        if not final:
            self._pending = lines.pop() + self._pending
        if final:
            lines.append("")
        events: list[dict[str, Any]] = []
        for line in lines:
            if line:
                if line.startswith("data:"):
                    self._data.append(line[5:].removeprefix(" "))
                continue
            if not self._data:
                continue
            payload, self._data = "\n".join(self._data), []
            if payload.strip() == "[DONE]":
                self.done = True
                break
            event = self._event(payload)
            if event is not None:
                events.append(event)
        return events

    def _event(self, payload: str) -> dict[str, Any] | None:
        try:
            event = loads_standard(payload, constants="null")
        except (ValueError, RecursionError):
            raise UpstreamError(f"the upstream at {self.upstream} sent a stream event that is "
                                "not JSON") from None
        if isinstance(event, dict) and event.get("error"):
            # the upstream's words go to the operator's log only: they may quote the answer
            err = event["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise UpstreamError(f"the upstream at {self.upstream} failed during the stream",
                                detail=str(msg)[:2000])
        if not isinstance(event, dict):
            return None
        return checked_choices(event, self.upstream, "stream event")


def checked_choices(reply: dict[str, Any], upstream: str, kind: str = "reply"
                    ) -> dict[str, Any]:
    """``reply`` when its ``choices`` (if any) are a list of objects; :class:`UpstreamError`
    (502) otherwise, before any stage reads them.

    >>> checked_choices({"choices": [{"index": 0}]}, "up")
    {'choices': [{'index': 0}]}
    >>> checked_choices({"choices": 5}, "up")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    utilityguard_base.exceptions.UpstreamError: the upstream at up sent a reply whose 'choices'...
    """
    choices = reply.get("choices")
    if choices is not None and (type(choices) is not list
                                or not all(type(c) is dict for c in choices)):
        raise UpstreamError(f"the upstream at {upstream} sent a {kind} whose 'choices' is not "
                            "a list of objects")
    return reply


def parse_sse(raw: bytes, upstream: str = "upstream") -> list[dict[str, Any]]:
    """The JSON objects of the ``data:`` events of an SSE body, up to ``[DONE]``.

    An event carrying ``{"error": ...}`` raises :class:`UpstreamError` (the stream failed);
    comments and other fields are ignored; a stream without ``[DONE]`` is accepted.

    Examples
    --------
    >>> parse_sse(b'data: {"a": 1}\\n\\n: keep-alive\\n\\ndata: [DONE]\\n\\n')
    [{'a': 1}]
    """
    return SSEReader(upstream).feed(raw, final=True)


def json_reply(raw: bytes, upstream: str, kind: str) -> dict[str, Any]:
    """The JSON object an upstream sent instead of the stream it was asked for (it ignored
    ``stream: true``); :class:`UpstreamError` when it is not one (``kind`` names it)."""
    try:
        data = loads_standard(raw, constants="null")
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise UpstreamError(f"the upstream at {upstream} returned a reply that is not {kind}")
    return checked_choices(data, upstream)


def _merge_tool_calls(calls: list[dict[str, Any]], deltas: Any) -> None:
    if not isinstance(deltas, list):
        return
    for d in deltas:
        if not isinstance(d, dict):
            continue
        i = d.get("index", len(calls))
        i = i if isinstance(i, int) and 0 <= i <= len(calls) else len(calls)
        if i == len(calls):
            calls.append({"id": None, "type": "function",
                          "function": {"name": "", "arguments": ""}})
        call = calls[i]
        for key in ("id", "type"):
            if d.get(key):
                call[key] = d[key]
        fn = d.get("function")
        if isinstance(fn, dict):
            for key in ("name", "arguments"):
                if isinstance(fn.get(key), str):
                    call["function"][key] += fn[key]


def _merge_text_fields(message: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Accumulate the other answer-carrying deltas: a legacy ``function_call`` (name and
    arguments) and an audio ``transcript``, so that the decision sees them."""
    for key, fields in (("function_call", ("name", "arguments")), ("audio", ("transcript",))):
        part = delta.get(key)
        if not isinstance(part, dict):
            continue
        target = message.setdefault(key, {f: "" for f in fields})
        for f in fields:
            if isinstance(part.get(f), str):
                target[f] += part[f]


def _chunk_logprobs(lp: Any) -> list[Any]:
    """A chunk's token logprobs in the chat format (``{"content": [...]}``), also read from
    the legacy completions format (``{"tokens": [...], "token_logprobs": [...]}``)."""
    if not isinstance(lp, dict):
        return []
    if isinstance(lp.get("content"), list):
        return list(lp["content"])
    values, tokens = lp.get("token_logprobs"), lp.get("tokens")
    if not isinstance(values, list):
        return []
    if not isinstance(tokens, list) or len(tokens) != len(values):
        tokens = [""] * len(values)
    return [{"token": t, "logprob": v, "top_logprobs": []}
            for t, v in zip(tokens, values, strict=True)]


def assemble(chunks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``chat.completion`` equivalent of a list of ``chat.completion.chunk`` objects.

    Examples
    --------
    >>> done = assemble([
    ...     {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
    ...     {"id": "c1", "choices": [{"index": 0, "delta": {"content": "Pa"}}]},
    ...     {"id": "c1", "choices": [{"index": 0, "delta": {"content": "ris"},
    ...                               "finish_reason": "stop"}]}])
    >>> done["choices"][0]["message"], done["choices"][0]["finish_reason"]
    ({'role': 'assistant', 'content': 'Paris'}, 'stop')
    """
    out: dict[str, Any] = {"object": "chat.completion"}
    choices: dict[int, dict[str, Any]] = {}
    texts: dict[int, list[str]] = {}
    for chunk in chunks:
        for key in _META:
            if key not in out and chunk.get(key) is not None:
                out[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            out["usage"] = chunk["usage"]
        for ch in chunk.get("choices") or ():
            if not isinstance(ch, dict):
                continue
            i = _index(ch)
            c = choices.setdefault(i, {"index": i, "message": {"role": "assistant"},
                                       "logprobs": None, "finish_reason": None})
            raw_delta = ch.get("delta")
            delta: dict[str, Any] = raw_delta if isinstance(raw_delta, dict) else {}
            if isinstance(delta.get("role"), str):
                c["message"]["role"] = delta["role"]
            if isinstance(delta.get("content"), str):
                texts.setdefault(i, []).append(delta["content"])
            if "tool_calls" in delta:
                _merge_tool_calls(c["message"].setdefault("tool_calls", []),
                                  delta["tool_calls"])
            _merge_text_fields(c["message"], delta)
            tokens = _chunk_logprobs(ch.get("logprobs"))
            if tokens:
                if c["logprobs"] is None:
                    c["logprobs"] = {"content": []}
                c["logprobs"]["content"].extend(tokens)
            if ch.get("finish_reason") is not None:
                c["finish_reason"] = ch["finish_reason"]
    for i, c in choices.items():
        c["message"]["content"] = "".join(texts[i]) if i in texts else None
    out["choices"] = [choices[i] for i in sorted(choices)]
    return out


def _index(choice: Mapping[str, Any]) -> int:
    i = choice.get("index", 0)
    return i if isinstance(i, int) else 0


def sse(data: Mapping[str, Any], name: str | None = None) -> bytes:
    """One server-sent event: ``event: <name>`` when it has a name (the Responses API's
    events), ``data: <json>``, a blank line. The one SSE encoder of the proxy: chat chunks,
    Responses events and the error event that ends a failed stream.

    >>> sse({"a": 1})
    b'data: {"a":1}\\n\\n'
    >>> sse({"type": "response.created"}, "response.created")
    b'event: response.created\\ndata: {"type":"response.created"}\\n\\n'
    """
    head = f"event: {name}\n".encode() if name else b""
    return head + b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


def encode(event: Mapping[str, Any]) -> bytes:
    """One event of a chat completions stream (:func:`sse`, unnamed)."""
    return sse(event)


def finish(events: Sequence[Mapping[str, Any]], final: Mapping[str, Any] | None = None, *,
           encode: Callable[[Mapping[str, Any]], bytes] = encode, end: bytes = DONE) -> bytes:
    """The SSE body of ``events`` (each encoded by ``encode``), ``final``'s keys added to the
    last event (the decision object), then ``end`` (``data: [DONE]``; the Responses API ends
    a stream without it).

    Examples
    --------
    >>> finish([{"choices": []}], {"utilityguard": {"decision": "answer"}}).split(b"\\n\\n")
    [b'data: {"choices":[],"utilityguard":{"decision":"answer"}}', b'data: [DONE]', b'']
    """
    out = [encode(e) for e in events[:-1]]
    if events:
        out.append(encode({**events[-1], **(final or {})}))
    out.append(end)
    return b"".join(out)


def relay_chunk(chunk: Mapping[str, Any], *, client_n: int, keep_logprobs: bool,
                include_usage: bool) -> dict[str, Any] | None:
    """One upstream chunk as the client receives it, without what the guard added (choices
    beyond the client's ``n``, logprobs it did not ask for, a usage chunk it did not ask
    for); ``None`` when nothing of it is the client's."""
    raw_choices = chunk.get("choices") or []
    choices = [dict(c) for c in raw_choices if isinstance(c, dict) and _index(c) < client_n]
    if not choices and raw_choices:
        return None  # a chunk only for a sample the guard asked for
    if not choices and not include_usage:
        return None  # a usage chunk the client did not ask for
    if not keep_logprobs:
        choices = without_logprobs(choices)
    return {**chunk, "choices": choices}


def replay(chunks: Iterable[Mapping[str, Any]], *, client_n: int, keep_logprobs: bool,
           include_usage: bool, final: Mapping[str, Any] | None = None) -> bytes:
    """The upstream's chunks as the client's stream, without what the guard added (see
    :func:`relay_chunk`), ``final`` added to the last chunk (see :func:`finish`)."""
    out = [c for chunk in chunks
           if (c := relay_chunk(chunk, client_n=client_n, keep_logprobs=keep_logprobs,
                                include_usage=include_usage)) is not None]
    return finish(out, final)


def synthesize(completion: Mapping[str, Any], *, include_usage: bool,
               final: Mapping[str, Any] | None = None) -> bytes:
    """A stream for a delivered ``completion``: per choice a role chunk, a content chunk
    (with any tool calls) and a finish chunk; then the usage chunk when asked (``final``
    added to the last chunk, see :func:`finish`)."""
    base = {"id": completion.get("id") or "chatcmpl-utilityguard",
            "object": "chat.completion.chunk",
            "created": completion.get("created") or 0,
            "model": completion.get("model") or "unknown"}
    for key in ("system_fingerprint", "service_tier"):
        if completion.get(key) is not None:
            base[key] = completion[key]
    if include_usage:
        base["usage"] = None
    out: list[dict[str, Any]] = []
    for ch in completion.get("choices") or ():
        i = ch.get("index", 0)
        message = ch.get("message") or {}
        role = message.get("role") or "assistant"
        content: dict[str, Any] = {"content": message.get("content") or ""}
        if message.get("tool_calls"):
            content["tool_calls"] = [{"index": k, **tc}
                                     for k, tc in enumerate(message["tool_calls"])]
        last = ch.get("finish_reason") or "stop"
        for delta, reason in (({"role": role, "content": ""}, None), (content, None),
                              ({}, last)):
            out.append({**base, "choices": [
                {"index": i, "delta": delta, "logprobs": None, "finish_reason": reason}]})
    if include_usage and completion.get("usage") is not None:
        out.append({**base, "choices": [], "usage": completion["usage"]})
    return finish(out, final)
