"""A fake OpenAI-compatible upstream that replays recorded replies (``python -m
benchmarks.replay``): each question of a responses file is answered with its recorded reply,
and — when the request asks for logprobs — with token logprobs whose summary equals the
recorded one.

Response records carry the logprob *summary* (``logprob_mean``, ``logprob_low10``,
``completion_tokens``), not each token, so :func:`token_logprobs` synthesizes
``completion_tokens`` values: ``k = ceil(0.1 n)`` at ``logprob_low10`` and the other ``n - k`` at
the value that makes the mean ``logprob_mean`` (the guard's extractor then reads back the
recorded signal, up to rounding). For tests, demos and parity checks; it is not a model.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from utilityguard_base.exceptions import InvalidValueError
from utilityguard_base.jsonl import read_jsonl


def token_logprobs(mean: float, low10: float, n: int) -> list[float]:
    """``n`` token logprobs whose mean is ``mean`` and lowest-10% mean is ``low10``;
    ``InvalidValueError`` (a ``ValueError``) for a summary no ``n`` tokens can have."""
    k = max(1, math.ceil(0.1 * n))
    if n == k:
        if abs(mean - low10) > 1e-12:
            raise InvalidValueError(f"{n} token(s) cannot have mean {mean} and L10% {low10}")
        return [low10] * n
    rest = (n * mean - k * low10) / (n - k)
    if not low10 - 1e-12 <= rest <= 1e-12:
        raise InvalidValueError(f"no {n} tokens have mean {mean} and L10% {low10}")
    return [low10] * k + [min(rest, 0.0)] * (n - k)


def completion(record: Mapping[str, Any], logprobs: bool) -> dict[str, Any]:
    """The chat completion replaying ``record`` (a response record)."""
    conf = record.get("confidence") or {}
    values: list[float] = []
    if conf.get("logprob_mean") is not None and conf.get("logprob_low10") is not None:
        values = token_logprobs(conf["logprob_mean"], conf["logprob_low10"],
                                int(record.get("completion_tokens") or 1))
    tokens: list[dict[str, Any]] = [
        {"token": f"t{j}", "logprob": v, "bytes": None, "top_logprobs": []}
        for j, v in enumerate(values)]
    lp: dict[str, Any] | None = {"content": tokens} if logprobs and values else None
    return {
        "id": "chatcmpl-replay", "object": "chat.completion", "created": 0,
        "model": record.get("model") or "replay",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": record["response"]},
                     "logprobs": lp, "finish_reason": record.get("finish_reason") or "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": len(values),
                  "total_tokens": 1 + len(values)}}


def replay_app(by_question: Mapping[str, Mapping[str, Any]]) -> Starlette:
    """The upstream: ``POST /v1/chat/completions`` answers the last user message's recorded
    reply (404 in the OpenAI envelope for a question it has no record of)."""

    async def chat(request: Request) -> Response:
        body = await request.json()
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        question = users[-1].get("content") if users else None
        rec = by_question.get(question) if isinstance(question, str) else None
        if rec is None:
            return JSONResponse({"error": {"message": "no recorded reply for this question",
                                           "type": "invalid_request_error", "param": "messages",
                                           "code": "not_recorded"}}, status_code=404)
        return JSONResponse(completion(rec, bool(body.get("logprobs"))))

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def main() -> None:  # pragma: no cover - a thin command around replay_app
    import uvicorn

    from cost_models.datasets import load_seed, load_utilitybench

    p = argparse.ArgumentParser(prog="python -m benchmarks.replay", description=__doc__)
    p.add_argument("--data", default="seed", help="dataset of the responses ('seed')")
    p.add_argument("--responses", type=Path, required=True, help="response records (JSONL)")
    p.add_argument("--port", type=int, default=8082)
    args = p.parse_args()
    items = load_seed() if args.data == "seed" else load_utilitybench(args.data)
    question = {it.id: it.question for it in items}
    records = read_jsonl(args.responses)
    known = {question[r["id"]]: r for r in records if r["id"] in question}  # others: no item
    uvicorn.run(replay_app(known), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":  # pragma: no cover
    main()
