"""One guarded request as it passes the pipeline's stages, and what an API adapter provides.

:class:`Exchange` is made by the parse stage (:func:`guard.proxy.parse.parse`) and read by
every later one: the route serving the request, the client's body, its overrides, the price,
the plan of the upstream request. :class:`Api` is the contract of a thin per-API adapter
(:data:`guard.proxy.chat.CHAT`, :data:`guard.proxy.responses.RESPONSES`): how the API's body is
read, priced, planned, fetched, assembled from a stream and delivered; the stages themselves
(:mod:`guard.proxy.pipeline`) are written once for every API.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.price import Price
from guard.request_walk import Asked

if TYPE_CHECKING:
    from starlette.requests import Request

    from guard.proxy.overrides import Overrides
    from guard.proxy.pool import Upstream
    from guard.proxy.state import Proxy
    from guard.settings import Settings

Event = dict[str, Any]
P = TypeVar("P", bound="Plan")


class Plan(Protocol):
    """A route's upstream request plan (:class:`~guard.proxy.plan.ChatPlan`,
    :class:`~guard.proxy.plan.ResponsesPlan`): what is sent, and what to undo in the reply."""

    @property
    def body(self) -> dict[str, Any]: ...

    def as_sent(self: P, body: Mapping[str, Any]) -> P: ...


@dataclass(frozen=True)
class Fetched(Generic[P]):
    """What the upstream sent: its reply (a chat completion, a response object), its stream
    events when it streamed, and the plan that was sent (the client's body as sent after a
    rejected addition, :func:`~guard.proxy.forward.resend_as_sent`)."""

    reply: dict[str, Any]
    events: list[Event] | None
    plan: P


@dataclass(frozen=True)
class Forwarded(Fetched[P]):
    """:class:`Fetched`, with the reply as the decision reads it: ``answer`` (a chat
    completion whose choice 0 is decided on) and ``view`` (the reply the confidence is read
    from: with the consistency samples and P(True) the signal needs)."""

    answer: Mapping[str, Any]
    view: Mapping[str, Any]
    upstream_s: float


@dataclass(frozen=True)
class Delivery:
    """What an adapter delivers: the body, whether it is an event stream, and the headers it
    adds to the decision headers."""

    content: bytes
    stream: bool
    headers: Mapping[str, str]


@dataclass
class Exchange(Generic[P]):
    """One guarded request: made by the parse stage, priced, then read by the later stages."""

    request: Request
    api: Api[P]
    proxy: Proxy  # the route serving the request
    request_id: str
    body: dict[str, Any]  # the client's body, as parsed
    overrides: Overrides
    headers: dict[str, str]  # what is sent upstream
    query: Asked  # every text the model reads: what the guard prices
    plan: P
    t0: float
    owner: str = ""  # who may read the decision again (GET /v1/decisions)
    price: Price = field(init=False)  # set by the price stage
    guard: Guard = field(init=False)  # the route's, read once: one policy for the request
    settings: Settings = field(init=False)
    stream: bool = field(init=False)  # the client asked for a stream
    t_up: float = field(init=False)  # when the forward stage started

    def __post_init__(self) -> None:
        self.guard, self.settings = self.proxy.guard, self.proxy.settings
        self.stream = bool(self.body.get("stream"))
        self.t_up = self.t0

    @property
    def upstream(self) -> Upstream:
        return self.proxy.upstream

    def record(self, record: DecisionRecord, upstream_s: float) -> None:
        """Count the decision, keep it for ``GET /v1/decisions`` and queue its audit row."""
        model = self.body.get("model")
        self.proxy.record(record, query=self.price.question or self.api.question(self),
                          model=model if isinstance(model, str) else None, stream=self.stream,
                          upstream_s=upstream_s, total_s=time.perf_counter() - self.t0,
                          owner=self.owner)


class Api(Protocol[P]):
    """A thin adapter: what one API (chat completions, Responses) adds to the shared stages.

    Parse: :meth:`parse`, :meth:`query`, :meth:`question`, :meth:`plan`. Forward:
    :meth:`fetch` (a buffered reply), :meth:`judged` (the reply as the decision reads it).
    Early stream (:mod:`guard.proxy.early`): :meth:`shape`, :meth:`hold`, :meth:`encode`,
    :meth:`assembled`, :meth:`tail`; :meth:`relayed` and :meth:`answer` for a stream cut
    short. Deliver: :meth:`deliver`.
    """

    #: the upstream path (under its ``/v1``) of the API
    path: str
    #: what its reply is, for messages (``"a chat completion"``)
    kind: str

    def parse(self, raw: bytes, settings: Settings) -> dict[str, Any]:
        """The client's body, checked for the fields the guard reads."""
        ...

    def query(self, body: Mapping[str, Any]) -> Asked:
        """Every text the model reads in the request (:func:`guard.request_walk.walk`)."""
        ...

    def question(self, ex: Exchange[P]) -> str:
        """The question the audit row shows when the price names none (a caller's cost)."""
        ...

    def plan(self, body: Mapping[str, Any], guard: Guard) -> P:
        """The upstream request: the client's body plus what the guard's signal needs."""
        ...

    async def fetch(self, upstream: Upstream, plan: P, headers: Mapping[str, str]
                    ) -> tuple[dict[str, Any], list[Event] | None]:
        """The upstream's whole reply to ``plan`` (a stream buffered), and its events."""
        ...

    async def judged(self, ex: Exchange[P], plan: P, reply: dict[str, Any]
                     ) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """``(answer, view)`` of ``reply`` (see :class:`Forwarded`); may call the upstream
        again for the signal (the caller bounds it by the deadline)."""
        ...

    def answer(self, reply: Mapping[str, Any]) -> Mapping[str, Any]:
        """``reply`` as the chat completion whose choice 0 is decided on (without what
        :meth:`judged` may add: what a stream cut short is decided on)."""
        ...

    def shape(self, plan: P, event: Event, upstream: str) -> Event | None:
        """An upstream stream event as the client receives it (``None``: not the client's)."""
        ...

    def hold(self, event: Event) -> bool:
        """Whether the event may be the stream's last (held back: the last carries the
        decision)."""
        ...

    def encode(self, event: Event) -> bytes:
        """One event of the client's stream."""
        ...

    def assembled(self, events: list[Event], upstream: str) -> dict[str, Any]:
        """The reply a whole stream of upstream events makes (what is decided on)."""
        ...

    def relayed(self, events: list[Event]) -> dict[str, Any]:
        """The reply the upstream events of a stream cut short make, as far as they go."""
        ...

    def tail(self, held: list[Event], reply: Mapping[str, Any], final: Mapping[str, Any]
             ) -> bytes:
        """The end of an early stream: the held events, ``final`` (the decision object) in
        the last one."""
        ...

    def deliver(self, ex: Exchange[P], got: Forwarded[P], record: DecisionRecord,
                final: Mapping[str, Any]) -> Delivery:
        """What the client receives once decided: the reply as it may see it, or the
        allow-listed refusal (:mod:`guard.refusal_substitution`), ``final`` added."""
        ...
