"""What every guarded route shares about a decision: admitting the request, resending it
as sent when the upstream rejects the guard's additions, deciding on a reply, and telling the
client (the ``x-utilityguard-*`` headers and the ``utilityguard`` body object)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from guard.completion import choice_answer
from guard.core import Guard, Price
from guard.decision_records import Confidence, DecisionRecord
from guard.exceptions import PermissionDeniedError, UpstreamStatusError
from guard.proxy.labels import key_id
from guard.proxy.request import Overrides, check_auth, check_overrides
from guard.segments import Query

if TYPE_CHECKING:
    from guard.proxy.app import Proxy
    from guard.settings import Settings

log = logging.getLogger(__name__)
#: Upstream statuses after which the request is retried without the guard's additions.
REJECTED = (400, 422)


def fmt_value(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def decision_headers(record: DecisionRecord) -> dict[str, str]:
    """The ``x-utilityguard-*`` response headers of a decision."""
    return {
        "x-utilityguard-decision": record.decision,
        "x-utilityguard-mode": record.mode,
        "x-utilityguard-cost": fmt_value(record.cost),
        "x-utilityguard-confidence": fmt_value(record.p),
        "x-utilityguard-threshold": fmt_value(record.threshold),
        "x-utilityguard-c-r": fmt_value(record.c_r),
        "x-utilityguard-request-id": record.request_id,
        # the fitted policy that decided (NAME@SHA8); absent when the guard has none
        **({"x-utilityguard-policy": record.policy} if record.policy else {}),
    }


def decision_body(record: DecisionRecord, *, enabled: bool = True) -> dict[str, Any]:
    """What a reply body gains: ``{"utilityguard": <the decision>}`` (see
    :meth:`guard.decision_records.DecisionRecord.summary`), or nothing when not ``enabled``."""
    return {"utilityguard": record.summary()} if enabled else {}


def decide_reply(guard: Guard, reply: Mapping[str, Any], view: Mapping[str, Any], *,
                 query: Query, overrides: Overrides, price: Price, request_id: str
                 ) -> DecisionRecord:
    """The decision about ``reply`` (its choice 0; ``view`` is the reply the confidence is
    read from: with the consistency samples), a caller's confidence header merged in."""
    conf = guard.extract(view)
    if overrides.confidence is not None:
        conf = conf.merged(Confidence(caller=overrides.confidence))
    answer = choice_answer(reply)
    return guard.decide(query, answer.text, confidence=conf, price=price,
                        request_id=request_id, acts=answer.acts)


def admit(request: Request, proxy: Proxy, settings: Settings) -> str:
    """A new request id for ``request`` once it is authenticated and its override headers
    are allowed (a forbidden override is recorded as a security event and raised). With
    routes, a caller's confidence header is checked again by :func:`route_for`."""
    request.state.request_id = rid = proxy.new_request_id()
    key = check_auth(request.headers, proxy.client_keys)
    proxy.owners.add(rid, key_id(key))  # who may label this decision
    proxy.admitted(rid, key or request.headers.get("authorization"))
    request.state.key = key
    caller = any(r.settings.confidence == "caller" for r in proxy.table.routes)
    _check_overrides(request, proxy, rid, key, caller)
    return rid


def _check_overrides(request: Request, proxy: Proxy, rid: str, key: bytes | None,
                     caller: bool) -> None:
    try:
        check_overrides(request.headers, allowed=proxy.may_override(key),
                        caller_confidence=caller)
    except PermissionDeniedError as exc:
        proxy.forbidden(rid, "override_not_allowed", exc.message)
        raise


def route_for(request: Request, root: Proxy, rid: str, model: Any) -> Proxy:
    """The route serving the request's ``model`` (404 when none; the root itself without
    ``--config``), its override headers checked against the route's own confidence signal."""
    proxy = root.routed(model)
    if proxy is not root:
        _check_overrides(request, proxy, rid, request.state.key,
                         proxy.settings.confidence == "caller")
    return proxy


def resend_as_sent(proxy: Proxy, exc: UpstreamStatusError, sent: Mapping[str, Any],
                   body: Mapping[str, Any]) -> bool:
    """Whether to send the client's ``body`` again as it sent it: the upstream rejected
    (:data:`REJECTED`) the request ``sent``, to which the guard added fields (logprobs, ``n``,
    ``include``) it may not support; the reply then has no signal and the no-confidence
    policy decides. Logged and counted (``rejected_guard_fields``)."""
    if exc.status not in REJECTED or sent == body:
        return False
    log.warning("the upstream rejected the guard's request fields (HTTP %d); retrying with "
                "the client's request as sent", exc.status)
    proxy.metrics.upstream_errors.inc("rejected_guard_fields")
    return True
