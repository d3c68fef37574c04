"""Fixtures shared by the test packages: a queue of upstream replies (the chat client's tests,
utilityguard_base, and the consequence judges', cost_models)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import httpx
import pytest

Queued = Callable[[Sequence[httpx.Response | Exception], list[httpx.Request]],
                  httpx.MockTransport]


@pytest.fixture
def queued_transport() -> Queued:
    """``make(responses, seen)``: a mock transport answering each request with the next of
    ``responses`` (an exception is raised instead), recording the requests in ``seen``."""

    def make(responses: Sequence[httpx.Response | Exception],
             seen: list[httpx.Request]) -> httpx.MockTransport:
        queue = list(responses)

        def handler(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            nxt = queue.pop(0)
            if isinstance(nxt, Exception):
                raise nxt
            return nxt

        return httpx.MockTransport(handler)

    return make
