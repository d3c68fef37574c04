"""The gateway around the routes: building them from ``--config``, reloading the file whole,
``GET /v1/models`` of a routed proxy, and ``GET /v1/decisions/{request_id}``.

A route is a child :class:`~guard.proxy.state.Proxy` (:meth:`~guard.proxy.state.Proxy.child`)
with the settings of :func:`guard.proxy.routes.route_settings` and the guard they describe.
A reload builds every route of the file anew (in a thread) and swaps the whole table at
once: a request already running finishes on the route it started with; a file that fails
(bad YAML, a bad field, a policy that does not load, a missing key variable) changes nothing
and is logged with its one-line reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from guard.core import Guard
from guard.exceptions import AuditStoreError, ConfigError, UnknownRequestError
from guard.proxy.auth import check_auth, credential
from guard.proxy.decisions import not_found, owned_row, valid_request_id
from guard.proxy.errors import error_body
from guard.proxy.routes import RouteTable, load_config, route_settings

if TYPE_CHECKING:
    from guard.proxy.state import Proxy

log = logging.getLogger(__name__)


def build_table(root: Proxy) -> RouteTable[Proxy]:
    """Every route of ``root.configured.config``, its guard loaded: :class:`ConfigError`
    ``"FILE: routes[i].field: ..."`` for the first that fails."""
    from guard.proxy.build import build_guard

    path = root.configured.config
    assert path is not None
    config = load_config(path)
    routes: list[tuple[str, Proxy]] = []
    for i, route in enumerate(config.routes):
        try:
            settings = route_settings(root.configured, route)  # "field: why"
        except ConfigError as exc:
            raise ConfigError(f"{path}: routes[{i}].{exc}") from None
        try:
            guard: Guard = build_guard(settings, root._cost_model)
        except Exception as exc:  # a policy that does not load, say: still the route's
            raise ConfigError(f"{path}: routes[{i}]: {exc}") from None
        routes.append((route.model, root.child(settings, guard, route.model)))
    return RouteTable(routes)


def use_table(root: Proxy, table: RouteTable[Proxy]) -> None:
    """Serve ``table`` from now on (one assignment: atomic for the requests)."""
    root.table = table
    root.guard = table.routes[0].guard  # what the root reports (announce, admin reload)


def policies(table: RouteTable[Proxy]) -> dict[str, str | None]:
    """Each route's model pattern and the policy deciding it."""
    return {r.route: r.guard.policy for r in table.routes}


def serving(proxy: Proxy) -> str:
    """What decides now, for a message that says what is still served: every route's policy
    (``small-model -> smollm2@..., big-* -> no policy``) of a gateway, the one policy of a
    one-route proxy."""
    root = proxy.root
    if root.configured.config is None:
        return root.guard.policy or "no policy"
    return ", ".join(f"{k} -> {v or 'no policy'}" for k, v in policies(root.table).items())


async def reload_config(root: Proxy) -> Guard:
    """Read the config file again and serve it whole; :class:`ConfigError` (logged, the old
    routes kept) when it fails. Returns the first route's guard."""
    try:
        table = await asyncio.to_thread(build_table, root)
        for route in table.routes:
            await asyncio.to_thread(route.guard.predict_cost, "warm-up")
    except Exception as exc:
        log.error("config reload failed, still serving the previous routes (%s): %s",
                  serving(root), exc)
        raise
    old = policies(root.table)
    use_table(root, table)
    await asyncio.to_thread(root.run_budgets)  # the new routes' budgets on the shared store
    log.warning("config reloaded: %s -> %s", old, policies(table))
    return table.routes[0].guard


def audit_unavailable() -> Response:
    """503: a lookup in the shared audit store failed (the database is unreachable now)."""
    return JSONResponse(error_body("the audit log cannot be reached now; ask again later",
                                   "server_error", code="audit_unavailable"), status_code=503)


def is_routed(proxy: Proxy) -> bool:
    """Whether ``proxy`` serves a ``--config`` file (else: one route, passed-through models)."""
    return proxy.root.configured.config is not None


def routed_models(proxy: Proxy, model: str | None) -> Response:
    """``GET /v1/models`` of a routed proxy: the routes' model ids and globs, in file order
    (``/v1/models/{model}``: the model if a route serves it, else 404)."""
    entries = [{"id": m, "object": "model", "created": 0, "owned_by": "utilityguard"}
               for m in proxy.root.table.models()]
    if model is None:
        return JSONResponse({"object": "list", "data": entries})
    route = proxy.routed(model)
    return JSONResponse({"id": model, "object": "model", "created": 0,
                         "owned_by": "utilityguard", "route": route.route})


#: How long ``GET /v1/decisions`` waits, in steps, for a decision whose audit row another
#: process may still be writing (seconds; 0.45 in all).
LOOKUP_WAITS = (0.05, 0.1, 0.3)


async def decision(request: Request) -> Response:
    """``GET /v1/decisions/{request_id}``: the decision of a request, to the credential that
    made it (:mod:`guard.proxy.decisions`), from this process's memory or else the shared
    audit store (any worker's or replica's); any other credential gets the same 404 as an
    unknown id."""
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    rid = request.path_params["request_id"]
    if not valid_request_id(rid):
        raise UnknownRequestError(f"no decision with request id {rid[:64]!r} (a request id "
                                  "is 32 hex digits)", param="request_id")
    owner = credential(request.headers)
    body: dict[str, Any] | None = proxy.decisions.find(rid, owner)
    shared = proxy.shared
    for wait in (*LOOKUP_WAITS, None):
        if body is not None or shared is None:
            break
        try:
            row = await asyncio.to_thread(shared.decision, rid)
        except AuditStoreError:
            return audit_unavailable()
        if row is not None:  # written: it is the answer, whoever owns it
            body = owned_row(row, owner, proxy.decisions.retention_s)
            break
        if wait is not None:
            await asyncio.sleep(wait)
    if body is None:
        raise not_found(rid, proxy.decisions.retention_s)
    return JSONResponse(body)
