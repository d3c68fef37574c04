"""utilityguard as a LiteLLM proxy guardrail.

Users of the LiteLLM proxy (``litellm --config config.yaml``) add the guard to their config;
it runs after each chat completion, decides with a :class:`~guard.Guard`, and substitutes the
refusal (the same allow-list refusal as the utilityguard proxy: nothing of a refused answer is
delivered). Install with ``pip install 'utilityguard[litellm]'``.

LiteLLM loads a custom guardrail from a Python file next to its ``config.yaml``; that file
only has to re-export the class::

    # utilityguard_guardrail.py, next to config.yaml
    from guard.integrations.litellm import UtilityGuardrail

    # config.yaml
    guardrails:
      - guardrail_name: utilityguard
        litellm_params:
          guardrail: utilityguard_guardrail.UtilityGuardrail
          mode: [pre_call, post_call]
          default_on: true

``post_call`` decides (non-streaming and streaming: a stream is held back until the decision
is made). ``pre_call`` asks the model for the guard's confidence signal (``logprobs`` by
default; it is removed from the reply unless the client asked for it); with ``post_call``
alone the guard reads whatever signal the client asked for, and without one its
``no_confidence`` policy decides.

The guard is configured like ``utilityguard serve``, by the ``UTILITYGUARD_*`` environment
variables of the LiteLLM process (or a ``.env`` file): ``UTILITYGUARD_C_R``,
``UTILITYGUARD_CONFIDENCE``, ``UTILITYGUARD_COST_MODEL``, ``UTILITYGUARD_CALIBRATOR``,
``UTILITYGUARD_MODE``, ``UTILITYGUARD_NO_CONFIDENCE``, ``UTILITYGUARD_REFUSAL_TEXT``. A
subclass may instead override :meth:`UtilityGuardrail.build_guard`.

Each decision is also in the response headers (``x-utilityguard-decision``, ...) of a
non-streaming reply, and in the ``utilityguard`` object of the body (see
:func:`guard.proxy.decision_body.decision_object`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from litellm.integrations.custom_guardrail import CustomGuardrail
from litellm.types.utils import Delta, ModelResponse, ModelResponseStream, StreamingChoices

from guard.completion import without_logprobs
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.integrations.common import REQUEST_ID_HEADER, fetch_decision, guarded_completion
from guard.proxy.decide import decision_body, decision_headers
from guard.proxy.streaming import assemble
from guard.request_walk import walk_request
from guard.settings import Settings

log = logging.getLogger(__name__)

#: LiteLLM call types the guard decides on (chat completions).
CHAT_CALL_TYPES = frozenset({"completion", "acompletion"})


#: How the litellm SDK names a provider's response headers in ``_hidden_params``.
_PROVIDER_HEADER = "llm_provider-"
_DECISION_FIELDS = ("decision", "mode", "cost", "confidence", "threshold", "alpha", "policy",
                    "request_id")


def decision_of(response: Any, *, api_base: str | None = None,
                api_key: str | None = None) -> dict[str, Any] | None:
    """The utilityguard proxy's decision about a litellm SDK ``response`` (a completion, a
    stream, or one of its chunks): its ``utilityguard`` field, else the decision read from
    the proxy by the request id header (``GET /v1/decisions/{request_id}``, given the
    ``api_base`` and ``api_key`` the call used) — for a stream, whose last chunk's
    ``utilityguard`` object the SDK drops. ``None`` when neither is there."""
    own = getattr(response, "utilityguard", None)
    if own is None and isinstance(getattr(response, "model_extra", None), Mapping):
        own = response.model_extra.get("utilityguard")
    if isinstance(own, Mapping):
        return dict(own)
    hidden = getattr(response, "_hidden_params", None) or {}
    headers = hidden.get("additional_headers") or {} if isinstance(hidden, Mapping) else {}
    rid = headers.get(_PROVIDER_HEADER + REQUEST_ID_HEADER) or headers.get(REQUEST_ID_HEADER)
    if not isinstance(rid, str) or api_base is None:
        return None
    found = fetch_decision(api_base, rid, api_key=api_key)
    return None if found is None else {k: found.get(k) for k in _DECISION_FIELDS}


def client_asked_logprobs(data: Mapping[str, Any]) -> bool:
    """Whether the client's own request (before the pre-call hook) asked for logprobs."""
    request = data.get("proxy_server_request")
    body = request.get("body") if isinstance(request, Mapping) else None
    return isinstance(body, Mapping) and body.get("logprobs") is True


def _messages(completion: Mapping[str, Any]) -> list[Any]:
    return [ch.get("message") if isinstance(ch, Mapping) else ch
            for ch in completion.get("choices") or []]


def _dump(obj: Any) -> dict[str, Any]:
    dump = getattr(obj, "model_dump", None)
    data = dump() if callable(dump) else obj
    return dict(data) if isinstance(data, Mapping) else {}


class UtilityGuardrail(CustomGuardrail):
    """A LiteLLM custom guardrail that answers only when ``p >= (L - C_R) / (1 + L)``.

    Parameters
    ----------
    guard : Guard, optional
        The guard to decide with; default :meth:`build_guard` (from the settings).
    settings : Settings, optional
        Default ``Settings()``: the ``UTILITYGUARD_*`` environment.
    **kwargs
        What LiteLLM passes (``guardrail_name``, ``event_hook``, ``default_on``).
    """

    def __init__(self, guard: Guard | None = None, settings: Settings | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.settings = settings if settings is not None else Settings()
        self.guard = guard if guard is not None else self.build_guard()

    def build_guard(self) -> Guard:
        """The guard :attr:`settings` describe (as ``utilityguard serve`` builds it)."""
        from guard.proxy.build import build_guard

        return build_guard(self.settings)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict[str, Any],
                                  call_type: str) -> dict[str, Any]:
        """Ask the model for the guard's confidence signal (logprobs, a stated confidence)."""
        if call_type in CHAT_CALL_TYPES and isinstance(data.get("messages"), list):
            data.update(self.guard.request_overrides(data))
        return data

    def _decide(self, data: Mapping[str, Any], completion: dict[str, Any]
                ) -> tuple[dict[str, Any], DecisionRecord]:
        call_id = data.get("litellm_call_id")
        return guarded_completion(
            self.guard, walk_request(data), completion,
            keep_logprobs=client_asked_logprobs(data),
            request_id=call_id if isinstance(call_id, str) else None)

    async def async_post_call_success_hook(self, data: dict[str, Any], user_api_key_dict: Any,
                                           response: Any) -> Any:
        """Decide about a chat completion; return it, or its refused copy."""
        if not isinstance(response, ModelResponse):
            return response  # embeddings, images, ...: not an answer to guard
        delivered, record = self._decide(data, _dump(response))
        out = ModelResponse(**delivered, **decision_body(
            record, enabled=not self.settings.decision_headers_only))
        hidden = dict(getattr(response, "_hidden_params", None) or {})
        headers = dict(hidden.get("additional_headers") or {})
        headers.update(decision_headers(record))
        hidden["additional_headers"] = headers
        out._hidden_params = hidden
        return out

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        """Hold the stream back, decide on the assembled reply, then stream the reply (its
        own chunks, without logprobs the client did not ask for) or the refusal."""
        chunks: list[Any] = [chunk async for chunk in response]
        dumped = [_dump(c) for c in chunks]
        if not dumped:
            return
        assembled = assemble(dumped)
        delivered, record = self._decide(request_data, assembled)
        final = decision_body(record, enabled=not self.settings.decision_headers_only)
        if _messages(delivered) == _messages(assembled):  # the model's own reply: its chunks
            keep_logprobs = client_asked_logprobs(request_data)
            for k, (chunk, raw) in enumerate(zip(chunks, dumped, strict=True)):
                choices = raw.get("choices") or []
                last = k == len(chunks) - 1
                if (keep_logprobs or not any(c.get("logprobs") for c in choices)) and not (
                        last and final):
                    yield chunk
                    continue
                if not keep_logprobs:
                    choices = without_logprobs(choices)
                yield ModelResponseStream(**{**raw, "choices": choices,
                                             **(final if last else {})})
            return
        base = {k: dumped[0][k] for k in ("id", "created", "model") if dumped[0].get(k)}
        out = delivered.get("choices") or []
        for k, ch in enumerate(out):  # a refusal, or a cleaned text; the last one decided
            yield ModelResponseStream(**base, **(final if k == len(out) - 1 else {}),
                                      choices=[StreamingChoices(
                index=ch.get("index", 0), delta=Delta(**(ch.get("message") or {})),
                finish_reason=ch.get("finish_reason") or "stop")])
