"""``@guarded``: put the guard around any function that asks a model.

The decorated function (sync or ``async``) may return

* ``str``: the reply; a verbal confidence line in it ("Confidence: 80%") is read and removed;
* ``(str, confidence)``: the reply and a caller-supplied confidence (a probability, a
  :class:`~guard.decision_records.Confidence` or a mapping of signals);
* a chat completion (an ``openai`` ``ChatCompletion`` or its JSON mapping): token logprobs,
  else a verbal confidence, are read from the first choice.

The caller gets the same type back. When the guard refuses (enforce mode) the reply text is
replaced by the refusal text; a completion is deep-copied first (``model_copy(deep=True)``), so
the object the function returned is never modified.

The decision reaches the caller through two documented channels:

* ``on_decision=callback``: called with the :class:`~guard.decision_records.DecisionRecord` of every
  call, before the result is returned (exceptions it raises propagate);
* :func:`guard.last_decision`: the latest decision in the current thread / asyncio task
  (a :class:`contextvars.ContextVar`).

Example
-------
>>> from guard import Guard, guarded, last_decision
>>> class FixedCost:
...     def predict(self, texts):
...         return [8.0 for _ in texts]
>>> @guarded(Guard(FixedCost(), policy=None))  # the bare rule
... def ask(question: str) -> tuple[str, float]:
...     return "400 mg", 0.4  # the model's answer and a caller-supplied p
>>> ask("What is the maximum daily dose of acetaminophen?")
('I cannot answer.', 0.4)
>>> last_decision().decision, round(last_decision().threshold, 3)
('refuse', 0.667)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from guard.completion import is_completion
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError
from guard.request_walk import Asked, walk_request
from guard.segments import Query

F = TypeVar("F", bound=Callable[..., Any])
QueryFn = Callable[..., Query]
DecisionCallback = Callable[[DecisionRecord], None]


def find_query(sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> Query | Asked | None:
    """Every text the model reads in a ``messages`` argument and its companions (``tools``,
    ...: :func:`guard.request_walk.walk_request`, the proxy's rule), else the first ``str``
    argument.

    ``messages`` comes first so that ``ask(model="gpt-4o-mini", messages=[...])`` is not
    costed as the question "gpt-4o-mini".
    """
    bound = sig.bind_partial(*args, **kwargs).arguments
    if bound.get("messages"):
        asked = walk_request(bound)
        if asked.texts or asked.upstream or asked.opaque:
            return asked
    return next((v for v in bound.values() if isinstance(v, str)), None)


class _Guarded:
    """The per-function state of a ``@guarded`` function (its guard and options)."""

    def __init__(self, fn: Callable[..., Any], guard: Guard, query: QueryFn | None,
                 on_decision: DecisionCallback | None) -> None:
        self.fn = fn
        self.guard = guard
        self.query = query
        self.on_decision = on_decision
        self.signature = inspect.signature(fn)

    def query_text(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Query | Asked:
        text = self.query(*args, **kwargs) if self.query else find_query(
            self.signature, args, kwargs)
        if not isinstance(text, (str, Asked)) and not (
                isinstance(text, (list, tuple)) and all(isinstance(t, str) for t in text)):
            raise ConfigError(
                f"@guarded could not find the query text of {self.fn.__qualname__}(): it takes "
                "no str argument and no messages=[...]; pass guarded(query=lambda *a, **k: ...)"
            )
        return text

    def handle(self, query: Query | Asked, result: Any) -> Any:
        out: Any
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], str):
            text, confidence = result
            delivered, record = self.guard.apply(query, text, confidence=confidence)
            pair = (delivered, confidence)
            out = result._make(pair) if hasattr(result, "_make") else pair
        elif isinstance(result, str) or (not isinstance(result, tuple) and is_completion(result)):
            out, record = self.guard.apply(query, result)
        else:
            raise ConfigError(
                f"{self.fn.__qualname__}() returned {type(result).__name__}; a guarded function "
                "must return str, (str, confidence) or a chat completion"
            )
        if self.on_decision is not None:
            self.on_decision(record)
        return out


def _wrap(fn: F, guard: Guard | None, query: QueryFn | None,
          on_decision: DecisionCallback | None) -> F:
    if not callable(fn):
        raise ConfigError(f"@guarded decorates a function; got {type(fn).__name__}")
    state = _Guarded(fn, guard if guard is not None else Guard(), query, on_decision)
    wrapper: Any
    if inspect.iscoroutinefunction(fn):
        async_fn: Callable[..., Awaitable[Any]] = fn

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            q = state.query_text(args, kwargs)
            return state.handle(q, await async_fn(*args, **kwargs))
    else:

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            q = state.query_text(args, kwargs)
            return state.handle(q, fn(*args, **kwargs))

    wrapper.guard = state.guard
    return wrapper  # type: ignore[no-any-return]


@overload
def guarded(guard: F, /) -> F: ...


@overload
def guarded(
    guard: Guard | None = None,
    /,
    *,
    query: QueryFn | None = None,
    on_decision: DecisionCallback | None = None,
) -> Callable[[F], F]: ...


def guarded(
    guard: Any = None,
    /,
    *,
    query: QueryFn | None = None,
    on_decision: DecisionCallback | None = None,
) -> Any:
    """Guard a function's replies; use as ``@guarded`` or ``@guarded(guard, ...)``.

    Parameters
    ----------
    guard : Guard, optional
        The guard to use; default ``Guard()`` (the shipped ``default`` policy).
    query : callable, optional
        ``query(*args, **kwargs)`` giving the question (a str, or a list of texts each
        priced) from the call's arguments; default: every text of a ``messages`` argument
        (priced as the proxy prices a request), else the first ``str`` argument.
    on_decision : callable, optional
        Called with the :class:`~guard.decision_records.DecisionRecord` of every call.

    Returns
    -------
    callable
        The wrapped function (same signature, sync or async); ``wrapper.guard`` is its Guard.
    """
    if guard is not None and not isinstance(guard, Guard):
        if callable(guard):
            return _wrap(guard, None, query, on_decision)
        raise ConfigError(f"guarded() takes a Guard; got {type(guard).__name__}")

    def decorate(fn: F) -> F:
        return _wrap(fn, guard, query, on_decision)

    return decorate
