"""What every integration does with a reply: decide with the guard, deliver the result.

One function, :func:`guarded_completion`, shared by the LiteLLM guardrail and the LangChain
runnable: a chat completion mapping decided and delivered as :meth:`guard.Guard.apply` and the
proxy do it (:mod:`guard.delivery`: the refusal is the guard's allow-list refusal, every choice
cleaned), the logprobs the caller did not ask for removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from guard.completion import is_completion
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.delivery import decide_completion, delivered_completion
from guard.exceptions import ConfigError
from guard.request_walk import Asked
from guard.segments import Query


def guarded_completion(guard: Guard, query: Query | Asked | None,
                       completion: Mapping[str, Any], *,
                       keep_logprobs: bool, **overrides: Any
                       ) -> tuple[dict[str, Any], DecisionRecord]:
    """Decide about ``completion`` (a chat completion mapping) and return what to deliver
    with the decision record, as :meth:`guard.Guard.apply` and the proxy do
    (:mod:`guard.delivery`); ``overrides`` go to :meth:`guard.Guard.decide` (``request_id``,
    ``cost``, ...). The input is not modified."""
    if not is_completion(completion):
        raise ConfigError("a guarded reply must be a chat completion; got one without "
                          "'choices'")
    record = decide_completion(guard, query, completion, **overrides)
    delivered = delivered_completion(guard, query, completion, record,
                                     keep_logprobs=keep_logprobs)
    return delivered.completion, record


#: The response header naming the proxy's request id (what GET /v1/decisions/{id} takes).
REQUEST_ID_HEADER = "x-utilityguard-request-id"


def fetch_decision(base_url: str, request_id: str, *, api_key: str | None = None,
                   timeout: float = 10.0) -> dict[str, Any] | None:
    """The decision of ``request_id`` read again from the utilityguard proxy at
    ``base_url`` (its ``.../v1``): ``GET /v1/decisions/{request_id}`` with the same key the
    request was made with (the proxy shows a decision only to that key). ``None`` when the
    proxy does not know it (expired, another key, another process); an HTTP error raises.
    For a client that lost the decision: a stream whose last chunk did not arrive, or one
    relayed before the decision was known (no decision header)."""
    import httpx

    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    url = f"{base_url.rstrip('/')}/decisions/{quote(request_id, safe='')}"
    response = httpx.get(url, headers=headers, timeout=timeout, trust_env=False)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    body = response.json()
    return dict(body) if isinstance(body, Mapping) else None
