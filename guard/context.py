"""The latest decision of the current thread or asyncio task: :func:`last_decision`.

This is the package's one piece of module-level state, a :class:`contextvars.ContextVar`, which
is what makes it safe: every thread has its own value, and every asyncio task runs in its own
copy of the context. :meth:`guard.Guard.decide` (and so every ``@guarded`` call) stores its
record here.

Consequence: a decision made inside a task started with ``asyncio.gather``,
``asyncio.create_task`` or ``asyncio.run`` is visible inside that task but not to the code that
started it; pass ``on_decision=`` to ``@guarded`` to collect those.
"""

from __future__ import annotations

from contextvars import ContextVar

from guard.decision_records import DecisionRecord

_LAST_DECISION: ContextVar[DecisionRecord | None] = ContextVar(
    "utilityguard_last_decision", default=None
)


def last_decision() -> DecisionRecord | None:
    """The latest decision made in the current context (thread or asyncio task), or ``None``.

    Set by :meth:`Guard.decide` (and so by every ``@guarded`` call). Each thread and each
    asyncio task sees only its own decisions; a task started with ``asyncio.gather`` or
    ``create_task`` runs in a copy of the context, so its decision is not visible to the
    parent: use ``on_decision=`` for those.
    """
    return _LAST_DECISION.get()


def remember_decision(record: DecisionRecord) -> None:
    """Store ``record`` as the current context's latest decision."""
    _LAST_DECISION.set(record)
