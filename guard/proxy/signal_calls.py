"""The upstream calls a chat completion's confidence signal makes beyond the reply.

* The consistency signal (``--confidence consistency``) needs several samples: when the
  upstream returned fewer choices than the signal needs (it ignores ``n``), the missing ones
  are asked for as separate calls (:func:`with_samples`); a failed call is left out.
* ``--confidence ptrue`` asks the model once more whether its reply (choice 0) is correct
  (P(True), :mod:`guard.confidence.ptrue`, :func:`with_ptrue`); a failed call leaves the
  signal missing.

Both run in the forward stage (:mod:`guard.proxy.forward`), within the request's deadline;
neither is ever fatal to the request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from guard.completion import choice_answer
from guard.confidence.ptrue import PTRUE_KEY, PTrueExtractor, ptrue_from_reply, ptrue_request
from guard.core import Guard
from guard.exceptions import UpstreamError
from guard.proxy.plan import ChatPlan
from guard.proxy.pool import Upstream
from guard.refusal_detection import is_refusal

log = logging.getLogger(__name__)


def wants_ptrue(guard: Guard) -> bool:
    """Whether the guard reads P(True) (``--confidence ptrue``)."""
    return any(isinstance(ex, PTrueExtractor) for ex in guard.extractors)


async def with_ptrue(upstream: Upstream, body: Mapping[str, Any], query: str | None,
                     view: dict[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    """``view`` with the P(True) of its first choice (:mod:`guard.confidence.ptrue`): one
    extra call to the same model, the question and the reply shown, one token asked. A
    failed call or a reply without True/False among the top tokens leaves P(True) missing
    (logged), never fatal; a model refusal or tool call is not asked about."""
    answer = choice_answer(view) if view.get("choices") else None
    if answer is None or answer.acts or not answer.text or is_refusal(answer.text):
        return view
    req = {"model": body.get("model"), **ptrue_request(query or "", answer.text)}
    try:
        reply = await upstream.chat(req, headers)
    except UpstreamError as exc:
        log.warning("the P(True) call failed: %s", type(exc).__name__)
        return view
    p, _top = ptrue_from_reply(reply) if isinstance(reply, dict) else (None, None)
    if p is None:
        log.info("P(True): no True/False among the verdict's top tokens")
        return view
    return {**view, PTRUE_KEY: p}


async def _extra_samples(upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str],
                         reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` with the choices the upstream did not return (it ignores ``n``) added from
    separate calls; failed calls are left out (logged), never fatal."""
    have = len(reply.get("choices") or [])
    missing = plan.signal_samples - have
    if missing <= 0 or have == 0:
        return reply
    body = {k: v for k, v in plan.body.items() if k not in ("n", "stream", "stream_options")}
    results = await asyncio.gather(*(upstream.chat(body, headers) for _ in range(missing)),
                                   return_exceptions=True)
    extra: list[Any] = []
    for r in results:
        if isinstance(r, UpstreamError):
            log.warning("a consistency sample failed: %s", type(r).__name__)
        elif isinstance(r, BaseException):
            raise r
        else:
            extra.extend((r.get("choices") or [])[:1])
    return {**reply, "choices": [*(reply.get("choices") or []), *extra]}


async def with_samples(upstream: Upstream, plan: ChatPlan, headers: Mapping[str, str],
                       reply: dict[str, Any]) -> dict[str, Any]:
    """``reply`` checked to have choices, with the consistency samples the upstream did not
    return (the reply the confidence is read from)."""
    if not isinstance(reply.get("choices"), list):
        raise UpstreamError(f"the upstream at {upstream.name} returned a reply without "
                            "'choices'")
    if plan.signal_samples > len(reply["choices"]):  # only the consistency signal
        return await _extra_samples(upstream, plan, headers, reply)
    return reply
