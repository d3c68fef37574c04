"""A minimal, fast OpenAI-compatible upstream for the proxy benchmark (raw ASGI, no framework).

``POST .../chat/completions`` answers a fixed completion with token logprobs, as JSON or, when
the request says ``"stream": true``, as server-sent events ending in ``data: [DONE]``.
``GET .../models`` lists one model. A request whose body contains ``perf-fail`` is answered
with HTTP 503 (the soak benchmark's failing requests). A streaming request whose body
contains ``perf-drip`` is streamed as a model generates: the role chunk and the first token
at once, then each further chunk :data:`DRIP_SECONDS` apart (the time-to-first-token
benchmark). Serve it with
``python -m uvicorn benchmarks.perf.fake_upstream:app --host 127.0.0.1 --port PORT``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_TOKENS = ["The", " capital", " of", " France", " is", " Paris", "."]
_LOGPROBS: dict[str, list[dict[str, Any]]] = {
    "content": [{"token": t, "logprob": -0.05, "bytes": None, "top_logprobs": []}
                for t in _TOKENS]
}
COMPLETION = json.dumps({
    "id": "chatcmpl-perf", "object": "chat.completion", "created": 0, "model": "perf-model",
    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": _LOGPROBS,
                 "message": {"role": "assistant", "content": "".join(_TOKENS)}}],
    "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
}).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None,
           logprobs: dict[str, Any] | None = None) -> bytes:
    body = {"id": "chatcmpl-perf", "object": "chat.completion.chunk", "created": 0,
            "model": "perf-model", "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": finish, "logprobs": logprobs}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


STREAM = b"".join(
    [_chunk({"role": "assistant", "content": ""})]
    + [_chunk({"content": t}, logprobs={"content": [c]})
       for t, c in zip(_TOKENS, _LOGPROBS["content"], strict=True)]
    + [_chunk({}, finish="stop"), b"data: [DONE]\n\n"]
)
#: The pause between two chunks of a dripped stream (``perf-drip``).
DRIP_SECONDS = 0.01
#: The dripped stream, in the pieces sent apart: role and first token, then one chunk each.
DRIP = [_chunk({"role": "assistant", "content": ""})
        + _chunk({"content": _TOKENS[0]}, logprobs={"content": [_LOGPROBS["content"][0]]})]
DRIP += [_chunk({"content": t}, logprobs={"content": [c]})
         for t, c in zip(_TOKENS[1:], _LOGPROBS["content"][1:], strict=True)]
DRIP += [_chunk({}, finish="stop") + b"data: [DONE]\n\n"]
FAILURE = json.dumps({"error": {"message": "overloaded", "type": "server_error", "param": None,
                                "code": "overloaded"}}).encode()
MODELS = json.dumps({"object": "list", "data": [{"id": "perf-model", "object": "model",
                                                 "owned_by": "perf"}]}).encode()


async def read_body(receive: Receive) -> bytes:
    """The whole request body of an ASGI request (shared with ``relay_clients``)."""
    chunks = []
    while True:
        msg = await receive()
        chunks.append(msg.get("body", b""))
        if not msg.get("more_body"):
            return b"".join(chunks)


async def _drip(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    for k, piece in enumerate(DRIP):
        if k:
            await asyncio.sleep(DRIP_SECONDS)
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    path = scope["path"]
    status = 200
    if path.endswith("/chat/completions"):
        raw = await read_body(receive)
        stream = b'"stream": true' in raw or b'"stream":true' in raw
        body, ctype = (STREAM, b"text/event-stream") if stream else (COMPLETION,
                                                                    b"application/json")
        if b"perf-fail" in raw:  # the soak benchmark's failing requests
            status, body, ctype = 503, FAILURE, b"application/json"
        elif stream and b"perf-drip" in raw:
            await _drip(send)
            return
    elif path.endswith("/models"):
        body, ctype = MODELS, b"application/json"
    else:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
