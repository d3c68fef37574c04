"""``@guarded``: put the guard around any function that asks a model.

The decorated function (sync or ``async``) may return

* ``str``: the reply; a verbal confidence line in it ("Confidence: 80%") is removed, and read
  only when the guard's calibrated policy reads the ``verbal`` signal or ``trust_verbal=True``
  (a model may write "Confidence: 100%" under any answer: the bare rule would take it as
  ``p = 1``);
* ``(str, confidence)``: the reply and a caller-supplied confidence (a probability, a
  :class:`~guard.decision_records.Confidence` or a mapping of signals);
* a chat completion (an ``openai`` ``ChatCompletion`` or its JSON mapping): token logprobs,
  else a verbal confidence, are read from the first choice.

The question priced is every text of a ``messages`` argument, else the argument named
``question``, ``query`` or ``prompt``, else the only ``str`` argument; ``query="name"`` names
the argument, ``query=callable`` computes it. A call with several ``str`` arguments and none of
those names is a :class:`~guard.exceptions.ConfigError` (``ask("gpt-4o-mini", question)``
must not price the model's name).

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

import copy
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

from guard.completion import is_completion
from guard.confidence.extractors import VerbalExtractor
from guard.core import Guard
from guard.decision_records import Confidence, DecisionRecord
from guard.exceptions import ConfigError
from guard.request_walk import Asked, walk_request
from guard.segments import Query

F = TypeVar("F", bound=Callable[..., Any])
QueryFn = Callable[..., Query]
DecisionCallback = Callable[[DecisionRecord], None]
#: The argument names taken for the question (in this order) when there is no ``messages``.
QUESTION_NAMES = ("question", "query", "prompt")


def find_query(sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> Query | Asked | None:
    """Every text the model reads in a ``messages`` argument and its companions (``tools``,
    ...: :func:`guard.request_walk.walk_request`, the proxy's rule), else the ``str`` argument
    named in :data:`QUESTION_NAMES`, else the only ``str`` argument (``None`` without one).

    Several ``str`` arguments and none named so: :class:`ConfigError`, so that
    ``ask("gpt-4o-mini", question)`` is not costed as the question "gpt-4o-mini".
    """
    bound = sig.bind_partial(*args, **kwargs).arguments
    if bound.get("messages"):
        asked = walk_request(bound)
        if asked.texts or asked.upstream or asked.opaque:
            return asked
    for name in QUESTION_NAMES:
        if isinstance(bound.get(name), str):
            return str(bound[name])
    texts = [k for k, v in bound.items() if isinstance(v, str)]
    if len(texts) > 1:
        raise ConfigError(
            f"@guarded cannot tell which argument is the question: {', '.join(texts)} are "
            f"all str; name it {' or '.join(QUESTION_NAMES)}, or pass guarded(query="
            f"{texts[-1]!r})")
    return str(bound[texts[0]]) if texts else None


def reads_verbal(guard: Guard) -> bool:
    """Whether ``guard``'s calibrator maps the model's stated confidence (``verbal``)."""
    cal = guard.calibrator
    return cal is not None and "verbal" in cal.signals


class _UnreadVerbal(VerbalExtractor):
    """A verbal extractor that removes the confidence line and reads nothing from it."""

    signals: tuple[str, ...] = ()

    def extract(self, completion: Any) -> Confidence:
        return Confidence()


def believing(guard: Guard, trust_verbal: bool) -> Guard:
    """``guard`` itself when a confidence written by the model may be believed (its
    calibrated policy reads ``verbal``, or ``trust_verbal``), else a shallow copy whose
    verbal extractors only remove the line (the caller's ``wrapper.guard`` stays ``guard``)."""
    if trust_verbal or reads_verbal(guard) or \
            not any(isinstance(ex, VerbalExtractor) for ex in guard.extractors):
        return guard
    view = copy.copy(guard)
    view.extractors = tuple(_UnreadVerbal(ex.instruction) if isinstance(ex, VerbalExtractor)
                            else ex for ex in guard.extractors)
    return view


class _Guarded:
    """The per-function state of a ``@guarded`` function (its guard and options)."""

    def __init__(self, fn: Callable[..., Any], guard: Guard, query: QueryFn | str | None,
                 on_decision: DecisionCallback | None, trust_verbal: bool) -> None:
        self.fn = fn
        self.guard = guard
        self.deciding = believing(guard, trust_verbal)
        self.query = query
        self.on_decision = on_decision
        self.signature = inspect.signature(fn)
        if isinstance(query, str) and query not in self.signature.parameters:
            raise ConfigError(f"guarded(query={query!r}): {fn.__qualname__}() has no such "
                              f"argument ({', '.join(self.signature.parameters)})")

    def query_text(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Query | Asked:
        if isinstance(self.query, str):
            text: Any = self.signature.bind_partial(*args, **kwargs).arguments.get(self.query)
        else:
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
            delivered, record = self.deciding.apply(query, text, confidence=confidence)
            pair = (delivered, confidence)
            out = result._make(pair) if hasattr(result, "_make") else pair
        elif isinstance(result, str) or (not isinstance(result, tuple) and is_completion(result)):
            out, record = self.deciding.apply(query, result)
        else:
            raise ConfigError(
                f"{self.fn.__qualname__}() returned {type(result).__name__}; a guarded function "
                "must return str, (str, confidence) or a chat completion"
            )
        if self.on_decision is not None:
            self.on_decision(record)
        return out


def _wrap(fn: F, guard: Guard | None, query: QueryFn | str | None,
          on_decision: DecisionCallback | None, trust_verbal: bool) -> F:
    if not callable(fn):
        raise ConfigError(f"@guarded decorates a function; got {type(fn).__name__}")
    state = _Guarded(fn, guard if guard is not None else Guard(), query, on_decision,
                     trust_verbal)
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
    query: QueryFn | str | None = None,
    on_decision: DecisionCallback | None = None,
    trust_verbal: bool = False,
) -> Callable[[F], F]: ...


def guarded(
    guard: Any = None,
    /,
    *,
    query: QueryFn | str | None = None,
    on_decision: DecisionCallback | None = None,
    trust_verbal: bool = False,
) -> Any:
    """Guard a function's replies; use as ``@guarded`` or ``@guarded(guard, ...)``.

    Parameters
    ----------
    guard : Guard, optional
        The guard to use; default ``Guard()`` (the shipped ``default`` policy).
    query : str or callable, optional
        The name of the argument holding the question, or ``query(*args, **kwargs)`` giving
        it (a str, or a list of texts each priced); default: every text of a ``messages``
        argument (priced as the proxy prices a request), else the argument named
        ``question``, ``query`` or ``prompt``, else the only ``str`` argument.
    on_decision : callable, optional
        Called with the :class:`~guard.decision_records.DecisionRecord` of every call.
    trust_verbal : bool, default False
        Take a confidence the model wrote in its reply ("Confidence: 95%") as ``p`` even
        though the guard's policy does not calibrate it. Off: such a line is removed and read
        only by a calibrated policy that reads ``verbal``.

    Returns
    -------
    callable
        The wrapped function (same signature, sync or async); ``wrapper.guard`` is its Guard.
    """
    if guard is not None and not isinstance(guard, Guard):
        if callable(guard):
            return _wrap(guard, None, query, on_decision, trust_verbal)
        raise ConfigError(f"guarded() takes a Guard; got {type(guard).__name__}")

    def decorate(fn: F) -> F:
        return _wrap(fn, guard, query, on_decision, trust_verbal)

    return decorate
