"""The audit log's tables: their columns and SQL types, shared by every backend.

A :class:`Table` is a name and typed :class:`Column` s; each backend creates it (and adds the
columns an older database lacks) from this one description, so SQLite and PostgreSQL hold the
same schema. :data:`DECISIONS` is docs/design.md's decision record
(:class:`~guard.decision_records.DecisionRecord`, one column per field, its type read from the
field's
annotation) plus ``ts`` (Unix time), ``model`` (what the client asked for), ``stream`` (0/1),
``query`` (the query text, null unless the proxy stores queries), ``policy`` (the version
of the policy that decided, when the record does not carry it itself; null otherwise),
``route`` (the model id or glob of the route that decided; ``*`` without ``--config``),
``key_id`` (which proxy key made the request, :func:`guard.proxy.auth.key_id`: never the
key; null without auth) and ``owner`` (who may read the decision again: a digest of the
credential that made the request, :func:`guard.proxy.auth.credential`). Every
table also has an ``id`` primary key that grows with insertion order, so "oldest first" is
``ORDER BY id``.

:data:`FEEDBACK` holds labels on decisions (by ``request_id``). Another table is one more
:class:`Table` added to :data:`TABLES`; the stores create every table listed there (and add
the columns an older database lacks).

Examples
--------
>>> [c.name for c in DECISIONS.columns][:3]
['request_id', 'cost', 'cost_source']
>>> DECISIONS.column("p").kind, DECISIONS.column("stream").kind
('real', 'integer')
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from guard.decision_records import DecisionRecord

ColumnKind = Literal["real", "integer", "text"]


@dataclass(frozen=True)
class Column:
    """One column: its name and its kind (``real``, ``integer`` or ``text``)."""

    name: str
    kind: ColumnKind


@dataclass(frozen=True)
class Table:
    """A table of the audit log: its name and columns (``id`` is implicit), the columns it
    is looked up by (one index each) and the columns no two rows may share (``unique``: what
    :meth:`~guard.proxy.audit.store.AuditStore.claim` claims)."""

    name: str
    columns: tuple[Column, ...]
    indexes: tuple[str, ...] = ()
    unique: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        """The column called ``name`` (``KeyError`` when there is none)."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    def checked(self, names: Any) -> list[str]:
        """``names`` when each is ``id`` or one of the columns (they are written into SQL);
        ``KeyError`` otherwise."""
        out = list(names)
        for name in out:
            if name != "id" and name not in self.names:
                raise KeyError(f"{self.name} has no column {name!r}")
        return out

    def row(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """``values`` as a tuple in column order (missing columns are null; text is made
        storable by both backends: no NUL, no lone surrogate)."""
        return tuple(storable(values.get(c.name)) if c.kind == "text" else values.get(c.name)
                     for c in self.columns)


def storable(value: Any) -> Any:
    """Text both backends store: UTF-8 encodable (lone surrogates become ``?``), no NUL
    (PostgreSQL rejects it); non-text values pass through."""
    if not isinstance(value, str):
        return value
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "?")


def _kind(annotation: Any) -> ColumnKind:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _kind(args[0])
    if typing.get_origin(annotation) is typing.Annotated:
        return _kind(args[0])
    if annotation is float:
        return "real"
    if annotation in (int, bool):
        return "integer"
    return "text"


def _decision_columns() -> tuple[Column, ...]:
    fields = DecisionRecord.model_fields
    record = tuple(Column(name, _kind(f.annotation)) for name, f in fields.items())
    extras = (Column("ts", "real"), Column("model", "text"), Column("stream", "integer"),
              Column("query", "text"), Column("policy", "text"), Column("route", "text"),
              Column("key_id", "text"), Column("owner", "text"))
    return (*record, *(c for c in extras if c.name not in fields))


#: Every decision the proxy made (one row per request), looked up by ``request_id``
#: (``GET /v1/decisions/{id}`` and ``POST /v1/feedback`` on any replica).
DECISIONS = Table("decisions", _decision_columns(), indexes=("request_id",))
#: Labels on decisions (``POST /v1/feedback``), appended, never updated: the latest label of
#: a ``request_id`` counts. ``correct`` / ``answerable`` are 0, 1 or null (unknown); ``cost``
#: is the realised cost of a wrong answer, or null.
FEEDBACK = Table("feedback", (Column("request_id", "text"), Column("ts", "real"),
                              Column("correct", "integer"), Column("answerable", "integer"),
                              Column("cost", "real"), Column("key_id", "text")),
                 indexes=("request_id",))
#: Requests the proxy refused for what they were not granted (a client override of the guard
#: without --allow-client-overrides / --override-api-key): when, which request, what kind,
#: and the detail (header names only, never a value or a key).
SECURITY_EVENTS = Table("security_events", (
    Column("ts", "real"), Column("request_id", "text"), Column("kind", "text"),
    Column("detail", "text")))
#: The ``--refusal-budget`` controller's steps, shared by every worker and replica
#: (:mod:`guard.proxy.budget_ledger`): per ``route``, step ``seq`` set ``c_r`` at ``ts`` from
#: the ``estimate`` over the window of decisions up to id ``last_id`` (``decisions`` of them
#: from ``keys`` client keys). ``(route, seq)`` is unique: the replica whose insert claims the
#: next ``seq`` takes the step, every other one reads it.
BUDGET_STEPS = Table("budget_steps", (
    Column("route", "text"), Column("seq", "integer"), Column("ts", "real"),
    Column("c_r", "real"), Column("estimate", "real"), Column("last_id", "integer"),
    Column("decisions", "integer"), Column("keys", "integer")), unique=("route", "seq"))
#: The tables every store creates.
TABLES: tuple[Table, ...] = (DECISIONS, FEEDBACK, SECURITY_EVENTS, BUDGET_STEPS)
#: The decision table's column names, in order.
COLUMNS: tuple[str, ...] = DECISIONS.names


def decision_row(record: DecisionRecord, *, ts: float, model: str | None, stream: bool,
                 query: str | None, route: str | None = None,
                 key_id: str | None = None, owner: str | None = None) -> tuple[Any, ...]:
    """The :data:`DECISIONS` row of one decision (``route``: the model id or glob of the
    ``serve --config`` route that decided it; ``key_id``: the key that made the request;
    ``owner``: who may read it again)."""
    return DECISIONS.row({**record.model_dump(), "ts": ts, "model": model,
                          "stream": int(stream), "query": query, "route": route,
                          "key_id": key_id, "owner": owner})
