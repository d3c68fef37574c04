"""A streaming upstream that pauses after its first events until the test releases it.

It answers ``/v1/chat/completions`` and ``/v1/responses`` with a stream: the first events
(the role chunk and the first word; the Responses API's ``created`` event and first delta),
then it sets :attr:`GatedUpstream.paused` and waits for :attr:`GatedUpstream.released`
(at most :data:`MAX_PAUSE` s), sends the rest and sets :attr:`GatedUpstream.finished`.
Whether the proxy relayed the first events before the upstream finished is then a fact of
the order of events, not of timing. Keywords in the question: ``unsure`` (token logprob
-2.0, else -0.01), ``echo`` (a delta repeats the ``Authorization`` header it received),
``huge`` (a 64 KiB delta after the pause), ``linger`` (after ``[DONE]`` the body stays
open until the test releases it or the proxy closes the connection), ``json`` (a plain JSON
completion: the upstream ignores ``stream``), ``ignore-n`` (one choice whatever ``n`` is;
else ``n`` choices). Token logprobs are sent when asked (chat: ``logprobs``; Responses:
``include``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

WORDS = ["The", " answer", " is", " 42."]
ANSWER = "".join(WORDS)
MAX_PAUSE = 20.0
HEAD = {"id": "chatcmpl-gated", "object": "chat.completion.chunk", "created": 1700000000,
        "model": "gated-model"}


def _sse(event: dict[str, Any], kind: str | None = None) -> bytes:
    head = f"event: {kind}\n" if kind else ""
    return (head + "data: " + json.dumps(event) + "\n\n").encode()


@dataclass
class GatedUpstream:
    """See the module docstring; one per test."""

    paused: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    closed: threading.Event = field(default_factory=threading.Event)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"]),
                                 Route("/v1/responses", self.responses, methods=["POST"])])

    async def _wait(self, request: Request) -> bool:
        """Until released (``True``) or the proxy left (``False``), at most MAX_PAUSE s."""
        for _ in range(int(MAX_PAUSE / 0.005)):
            if self.released.is_set():
                return True
            if await request.is_disconnected():
                self.closed.set()
                return False
            await asyncio.sleep(0.005)
        return True

    async def _gate(self, request: Request, first: list[bytes], rest: list[bytes],
                    linger: bool = False) -> AsyncIterator[bytes]:
        try:
            for b in first:
                yield b
            if linger:  # the whole stream now, then the body held open
                for b in rest:
                    yield b
                self.paused.set()
                await self._wait(request)
                return
            self.paused.set()
            if not await self._wait(request):
                return
            for b in rest:
                yield b
            self.finished.set()
        except BaseException:  # the proxy closed the connection while we streamed
            self.closed.set()
            raise

    async def chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append({"body": body, "headers": dict(request.headers),
                              "peer": request.client})
        q = str(body["messages"][-1]["content"])
        lp = -2.0 if "unsure" in q else -0.01
        n = 1 if "ignore-n" in q else int(body.get("n") or 1)
        words = list(WORDS)
        if "echo" in q:
            words[1] = " " + request.headers.get("authorization", "")
        if "json" in q:
            self.finished.set()
            return JSONResponse({**HEAD, "object": "chat.completion", "choices": [
                {"index": i, "finish_reason": "stop", "logprobs": None,
                 "message": {"role": "assistant", "content": "".join(words)}}
                for i in range(n)]})

        def chunk(i: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
            logprobs = {"content": [{"token": delta["content"], "logprob": lp, "bytes": None,
                                     "top_logprobs": []}]} \
                if body.get("logprobs") and delta.get("content") else None
            return _sse({**HEAD, "choices": [{"index": i, "delta": delta, "logprobs": logprobs,
                                              "finish_reason": finish}]})

        first = [chunk(i, {"role": "assistant", "content": ""}) for i in range(n)]
        first += [chunk(i, {"content": words[0]}) for i in range(n)]
        rest = [chunk(i, {"content": w}) for w in words[1:] for i in range(n)]
        if "huge" in q:
            rest.insert(0, chunk(0, {"content": "x" * 65536}))
        rest += [chunk(i, {}, "stop") for i in range(n)]
        if (body.get("stream_options") or {}).get("include_usage"):
            rest.append(_sse({**HEAD, "choices": [], "usage": {
                "prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}))
        rest.append(b"data: [DONE]\n\n")
        return StreamingResponse(self._gate(request, first, rest, linger="linger" in q),
                                 media_type="text/event-stream")

    async def responses(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append({"body": body, "headers": dict(request.headers)})
        q = body["input"] if isinstance(body["input"], str) else json.dumps(body["input"])
        lp = -2.0 if "unsure" in q else -0.01
        ids = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
        asked = "message.output_text.logprobs" in (body.get("include") or [])
        tokens = [{"token": w, "logprob": lp, "bytes": [], "top_logprobs": []}
                  for w in WORDS] if asked else []
        part = {"type": "output_text", "text": ANSWER, "annotations": [], "logprobs": tokens}
        item = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [part]}
        done = {"id": "resp_gated", "object": "response", "created_at": 1700000000,
                "model": "gated-model", "status": "completed", "output": [item]}
        events = [{"type": "response.created", "response": {**done, "status": "in_progress",
                                                            "output": []}},
                  {"type": "response.output_item.added", "output_index": 0,
                   "item": {**item, "status": "in_progress", "content": []}},
                  {"type": "response.content_part.added", **ids,
                   "part": {**part, "text": "", "logprobs": []}}]
        events += [{"type": "response.output_text.delta", **ids, "delta": w,
                    "logprobs": tokens[k:k + 1]} for k, w in enumerate(WORDS)]
        events += [{"type": "response.output_text.done", **ids, "text": ANSWER,
                    "logprobs": tokens},
                   {"type": "response.content_part.done", **ids, "part": part},
                   {"type": "response.output_item.done", "output_index": 0, "item": item},
                   {"type": "response.completed", "response": done}]
        raw = [_sse({**e, "sequence_number": i}, e["type"]) for i, e in enumerate(events)]
        return StreamingResponse(self._gate(request, raw[:4], raw[4:]),
                                 media_type="text/event-stream")
