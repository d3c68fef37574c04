"""utilityguard around a LangChain chat model: a runnable that answers only when it should.

:class:`GuardedChatModel` wraps any LangChain chat model (``ChatOpenAI``, or the model after
``bind_tools``) and is itself a runnable, so it composes as the model did
(``prompt | GuardedChatModel(llm) | parser``)::

    from langchain_openai import ChatOpenAI
    from guard import Guard
    from guard.integrations.langchain import GuardedChatModel

    llm = GuardedChatModel(ChatOpenAI(model="gpt-4o-mini"), Guard(c_r=2.0))
    reply = llm.invoke("What is the maximum daily dose of acetaminophen for an adult?")
    reply.content                              # the answer, or "I cannot answer."
    reply.response_metadata["utilityguard"]    # decision, mode, cost, confidence, threshold, ...

For each call it asks the model for the guard's confidence signal (``logprobs=True`` with the
logprob extractor: OpenAI-compatible chat models accept it; a stated confidence with the
verbal extractor: the instruction is added to the system message), decides on the reply (its
text, or its tool calls: a tool call is an answer), and returns

* the model's own message, with the decision added to ``response_metadata["utilityguard"]``
  (logprobs the model was not configured to return removed, a confidence line removed); or
* a refusal: a new ``AIMessage`` with only the refusal text, the decision and the token usage
  (nothing of the refused answer: no tool calls, no extra fields).

``stream`` / ``astream`` yield the decided message as one chunk (the decision needs the whole
reply). Install with ``pip install 'utilityguard[langchain]'``.

:func:`decision_of` reads the decision from a message, whether :class:`GuardedChatModel` made
it or ``ChatOpenAI(include_response_headers=True)`` received it from the utilityguard proxy
(langchain-openai keeps the response headers but drops unknown fields of the body, so the
proxy's ``utilityguard`` body object does not reach a LangChain message).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig

from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.integrations.common import REQUEST_ID_HEADER, fetch_decision, guarded_completion
from guard.request_walk import Asked, walk
from guard.segments import Query

#: Request parameters the guard's extractors may set that are passed to the model as kwargs.
SIGNAL_PARAMS = ("logprobs", "top_logprobs")
#: The decision object's fields and the proxy's response headers that carry them.
HEADER_FIELDS = {"decision": "x-utilityguard-decision", "mode": "x-utilityguard-mode",
                 "cost": "x-utilityguard-cost", "confidence": "x-utilityguard-confidence",
                 "threshold": "x-utilityguard-threshold", "alpha": "x-utilityguard-alpha",
                 "policy": "x-utilityguard-policy",
                 "request_id": "x-utilityguard-request-id"}
_NUMBERS = ("cost", "confidence", "threshold", "alpha")


def decision_of(message: BaseMessage, llm: Any = None) -> dict[str, Any] | None:
    """The guard's decision about ``message``: ``response_metadata["utilityguard"]``, or the
    proxy's ``x-utilityguard-*`` headers in ``response_metadata["headers"]`` (with
    ``ChatOpenAI(include_response_headers=True)``) as the same object; ``None`` when the
    message carries neither.

    A stream the proxy relayed before its decision was known (an early stream) has a request
    id header but no decision header: given the ``ChatOpenAI`` that made the call as ``llm``,
    the decision is then read from the proxy (``GET /v1/decisions/{request_id}``, with the
    model's base URL and key: :func:`guard.integrations.common.fetch_decision`).

    Examples
    --------
    >>> from langchain_core.messages import AIMessage
    >>> decision_of(AIMessage("I cannot answer.", response_metadata={"headers": {
    ...     "x-utilityguard-decision": "refuse", "x-utilityguard-mode": "enforce",
    ...     "x-utilityguard-cost": "20", "x-utilityguard-confidence": "0.135335",
    ...     "x-utilityguard-threshold": "0.857143", "x-utilityguard-request-id": "r1"}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'decision': 'refuse', 'mode': 'enforce', 'cost': 20.0, 'confidence': 0.135335,
     'threshold': 0.857143, 'alpha': None, 'policy': None, 'request_id': 'r1'}
    """
    metadata = message.response_metadata or {}
    if isinstance(metadata.get("utilityguard"), Mapping):
        return dict(metadata["utilityguard"])
    headers = metadata.get("headers")
    if not isinstance(headers, Mapping):
        return None
    if HEADER_FIELDS["decision"] not in headers:
        rid = headers.get(REQUEST_ID_HEADER)
        return _fetched(llm, rid) if isinstance(rid, str) and llm is not None else None
    out: dict[str, Any] = {}
    for name, header in HEADER_FIELDS.items():
        value = headers.get(header)
        if name in _NUMBERS and value is not None:
            value = None if value == "none" else float(value)
        out[name] = value
    return out


def _fetched(llm: Any, request_id: str) -> dict[str, Any] | None:
    """The decision of ``request_id`` from the proxy ``llm`` (a ``ChatOpenAI``) calls."""
    base = getattr(llm, "openai_api_base", None)
    key = getattr(llm, "openai_api_key", None)
    if not isinstance(base, str):
        return None
    get = getattr(key, "get_secret_value", None)
    secret = get() if callable(get) else key
    found = fetch_decision(base, request_id, api_key=secret if isinstance(secret, str) else None)
    return None if found is None else {k: found.get(k) for k in HEADER_FIELDS}


def _to_messages(value: Any) -> list[BaseMessage]:
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return convert_to_messages([("human", value)])
    if isinstance(value, Sequence):
        return convert_to_messages(value)
    raise TypeError(f"a chat model input must be a str, a prompt value or a list of messages; "
                    f"got {type(value).__name__}")


def _asks_logprobs(model: Any) -> bool:
    """Whether ``model`` (or the model a binding wraps) is configured to return logprobs."""
    while model is not None:
        if getattr(model, "logprobs", None) is True:
            return True
        kwargs = getattr(model, "kwargs", None)
        if isinstance(kwargs, Mapping) and kwargs.get("logprobs") is True:
            return True
        model = getattr(model, "bound", None)
    return False


class GuardedChatModel(Runnable[Any, BaseMessage]):
    """A chat model whose replies the guard decides about (see the module docstring).

    Parameters
    ----------
    model : Runnable
        A LangChain chat model (or a binding of one) returning an ``AIMessage``.
    guard : Guard, optional
        The guard (default ``Guard()``: the shipped ``default`` policy, C_R = 2).
    ask_confidence : bool, default True
        Ask the model for the guard's confidence signal; ``False`` sends the input as given
        (the guard then reads what the model returns anyway).
    """

    def __init__(self, model: Runnable[Any, Any], guard: Guard | None = None, *,
                 ask_confidence: bool = True) -> None:
        self.model = model
        self.guard = guard if guard is not None else Guard()
        self.ask_confidence = ask_confidence
        self.keep_logprobs = _asks_logprobs(model)

    def _request(self, value: Any) -> tuple[list[Any], dict[str, Any], Asked]:
        messages: list[Any] = convert_to_openai_messages(_to_messages(value))
        body: dict[str, Any] = {"messages": messages}
        if self.ask_confidence:
            body = self.guard.request_overrides(body)
        params = {k: body[k] for k in SIGNAL_PARAMS if k in body}
        return list(body["messages"]), params, walk(messages)

    def decide(self, query: Query | Asked, message: BaseMessage
               ) -> tuple[BaseMessage, DecisionRecord]:
        """The message to deliver for the model's ``message`` to ``query``, and the decision."""
        if not isinstance(message, AIMessage):
            raise TypeError(f"the guarded model returned a {type(message).__name__}, not an "
                            "AIMessage")
        metadata = dict(message.response_metadata or {})
        sent = convert_to_openai_messages(message)
        completion = {"choices": [{"index": 0, "message": sent,
                                   "logprobs": metadata.get("logprobs"),
                                   "finish_reason": metadata.get("finish_reason")}]}
        delivered, record = guarded_completion(self.guard, query, completion,
                                               keep_logprobs=self.keep_logprobs)
        choice = delivered["choices"][0]
        out_message = choice.get("message") or {}
        content = out_message.get("content")
        content = content if isinstance(content, str) else ""
        decision = record.summary()
        if record.delivered_refusal and out_message != sent:  # allow-list: text + decision
            usage = {"usage_metadata": message.usage_metadata} if message.usage_metadata else {}
            return AIMessage(content=content, id=message.id,
                             response_metadata={"utilityguard": decision}, **usage), record
        metadata["utilityguard"] = decision
        if not self.keep_logprobs:
            metadata.pop("logprobs", None)
        update: dict[str, Any] = {"response_metadata": metadata}
        if out_message != sent:
            update["content"] = content  # a confidence line removed
        return message.model_copy(update=update), record

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
               ) -> BaseMessage:
        messages, params, query = self._request(input)
        reply = self.model.invoke(messages, config, **params, **kwargs)
        return self.decide(query, reply)[0]

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
                      ) -> BaseMessage:
        messages, params, query = self._request(input)
        reply = await self.model.ainvoke(messages, config, **params, **kwargs)
        return self.decide(query, reply)[0]
