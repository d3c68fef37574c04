"""The decide stage: the decision on a reply, and how it is told to the client.

:func:`decide` reads the confidence from the reply's view (:meth:`guard.Guard.extract`), merges
a caller's confidence header, and decides on the answer of choice 0 (:meth:`guard.Guard.decide`,
the request's price already known; a tool call is an answer). :func:`decision_headers` and
:func:`decision_body` are what the client is told: the ``x-utilityguard-*`` response headers
and the ``utilityguard`` body object (also used by the LiteLLM integration)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.delivery import decide_completion
from guard.price import Price
from guard.proxy.overrides import C_R_HEADER
from guard.segments import Query

if TYPE_CHECKING:
    from guard.proxy.exchange import Exchange
    from guard.proxy.overrides import Overrides


def fmt_value(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def priced_headers(price: Price | DecisionRecord, request_id: str, policy: str | None
                   ) -> dict[str, str]:
    """The ``x-utilityguard-*`` response headers of what is known before the reply (the
    price: mode, cost, threshold, C_R; the request id; the policy, ``NAME@SHA8``, absent
    when the guard has none): all an early stream's headers say
    (:mod:`guard.proxy.early`), and part of :func:`decision_headers`."""
    return {
        "x-utilityguard-mode": price.mode,
        "x-utilityguard-cost": fmt_value(price.cost),
        "x-utilityguard-threshold": fmt_value(price.threshold),
        "x-utilityguard-alpha": fmt_value(price.alpha),
        C_R_HEADER: fmt_value(price.c_r),
        "x-utilityguard-request-id": request_id,
        **({"x-utilityguard-policy": policy} if policy else {}),
    }


def decision_headers(record: DecisionRecord) -> dict[str, str]:
    """The ``x-utilityguard-*`` response headers of a decision: :func:`priced_headers`,
    the decision and the confidence."""
    return {"x-utilityguard-decision": record.decision,
            "x-utilityguard-confidence": fmt_value(record.p),
            **priced_headers(record, record.request_id, record.policy)}


def decision_body(record: DecisionRecord, *, enabled: bool = True) -> dict[str, Any]:
    """What a reply body gains: ``{"utilityguard": <the decision>}`` (see
    :meth:`guard.decision_records.DecisionRecord.summary`), or nothing when not ``enabled``."""
    return {"utilityguard": record.summary()} if enabled else {}


def decide_reply(guard: Guard, reply: Mapping[str, Any], view: Mapping[str, Any], *,
                 query: Query, overrides: Overrides, price: Price, request_id: str
                 ) -> DecisionRecord:
    """The decision about ``reply`` (its choice 0; ``view`` is the reply the confidence is
    read from: with the consistency samples), a caller's confidence header merged in
    (:func:`guard.delivery.decide_completion`, as :meth:`guard.Guard.apply` decides)."""
    return decide_completion(guard, query, reply, view=view, confidence=overrides.confidence,
                             price=price, request_id=request_id)


def decide(ex: Exchange[Any], answer: Mapping[str, Any], view: Mapping[str, Any]
           ) -> DecisionRecord:
    """The decide stage: the decision of the exchange's guard on ``answer`` (its choice 0),
    the confidence read from ``view``."""
    return decide_reply(ex.guard, answer, view, query=ex.query, overrides=ex.overrides,
                        price=ex.price, request_id=ex.request_id)

