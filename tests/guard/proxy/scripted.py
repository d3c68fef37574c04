"""An upstream that answers what a test scripts, and records the raw bytes it receives.

:class:`Script` is a real ASGI app (served by the tests on 127.0.0.1): ``reply(obj)`` sets a
JSON reply, ``stream(events)`` an SSE stream (each event its own body chunk, a short pause
between them, so a proxy relaying as it arrives sees them one by one), ``fail(status, obj)``
an HTTP error. ``received`` holds the raw request bodies, so what a proxy forwards is checked
as bytes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route


def completion(content: str, logprobs: list[float] | None = None) -> dict[str, Any]:
    """A chat completion saying ``content`` with these token logprobs (none: null)."""
    lp = None if logprobs is None else {"content": [
        {"token": f"t{i}", "logprob": v, "top_logprobs": []} for i, v in enumerate(logprobs)]}
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": lp,
                         "message": {"role": "assistant", "content": content}}]}


def chunk(content: str | None, logprob: float | None = -0.01, finish: str | None = None
          ) -> str:
    """One chat completion chunk (JSON text) with a content delta and its token logprob."""
    delta = {} if content is None else {"content": content}
    lp = None if content is None or logprob is None else {
        "content": [{"token": content, "logprob": logprob, "top_logprobs": []}]}
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 0,
                       "model": "m", "choices": [{"index": 0, "delta": delta, "logprobs": lp,
                                                  "finish_reason": finish}]})


@dataclass
class Script:
    """What the scripted upstream answers next, and the raw request bodies it received."""

    body: bytes = b""
    content_type: str = "application/json"
    status: int = 200
    events: list[bytes] | None = None
    received: list[bytes] = field(default_factory=list)

    def reply(self, obj: Any) -> None:
        self.body, self.content_type, self.status, self.events = \
            json.dumps(obj).encode(), "application/json", 200, None

    def fail(self, status: int, obj: Any) -> None:
        self.reply(obj)
        self.status = status

    def stream(self, events: list[str]) -> None:
        self.events = [f"data: {e}\n\n".encode() for e in [*events, "[DONE]"]]
        self.body, self.content_type, self.status = b"".join(self.events), \
            "text/event-stream", 200

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            self.received.append(await request.body())
            if self.events is None:
                return Response(self.body, status_code=self.status,
                                media_type=self.content_type)
            events = list(self.events)

            async def paced() -> AsyncIterator[bytes]:
                for e in events:
                    yield e
                    await asyncio.sleep(0.01)

            return StreamingResponse(paced(), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
