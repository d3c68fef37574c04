"""The proxy's endpoints besides the guarded ones (:data:`guard.proxy.pipeline.GUARDED`).

``POST /v1/feedback`` (:mod:`guard.proxy.feedback`), ``GET /v1/models`` and
``GET /v1/models/{model}`` (passed through, or the routes of a ``--config`` gateway),
``POST /v1/embeddings`` (passed through), ``/v1/completions`` (refused: not guarded),
``GET /healthz`` (liveness), ``GET /readyz`` (readiness: the upstream answers too; 503 when it
does not), ``GET /metrics``. ``GET /v1/decisions/{id}`` is :mod:`guard.proxy.gateway`'s and
``POST /admin/reload`` :mod:`guard.proxy.reload`'s.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import Request
from starlette.responses import JSONResponse, Response

from guard.exceptions import AuditStoreError, InvalidRequestError, UnknownRequestError
from guard.proxy.audit import FEEDBACK
from guard.proxy.auth import check_auth, key_id, key_in
from guard.proxy.errors import error_body
from guard.proxy.feedback import feedback_row, parse_feedback
from guard.proxy.gateway import audit_unavailable, is_routed, routed_models
from guard.proxy.metrics import CONTENT_TYPE
from guard.proxy.parse import read_body
from guard.proxy.pool import upstream_headers

if TYPE_CHECKING:
    from guard.proxy.state import Proxy


#: A model id: segments of letters, digits and ``._:@+-`` (not starting with a dot), joined
#: by ``/`` (``meta-llama/Llama-3-8B``). Nothing else reaches the upstream.
MODEL_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:@+-]*(?:/[A-Za-z0-9_][A-Za-z0-9._:@+-]*)*")


def model_path(request: Request) -> str:
    """The upstream path of a models request; :class:`InvalidRequestError` for a model id
    that is not one (a dot segment, an encoded character, anything that could leave the
    upstream's ``/v1``)."""
    model = request.path_params.get("model")
    if model is None:
        return "models"
    raw = request.scope.get("raw_path") or b""
    limit = request.app.state.proxy.settings.max_model_chars
    if len(model) > limit or b"%" in raw or not MODEL_ID.fullmatch(model):
        raise InvalidRequestError(
            "invalid model id: use letters, digits, '._:@+-' and '/' between segments",
            param="model", code="invalid_model_id")
    return "models/" + "/".join(quote(part, safe="") for part in model.split("/"))


async def feedback(request: Request) -> Response:
    """``POST /v1/feedback``: a label for one decision, appended to the audit log."""
    proxy: Proxy = request.app.state.proxy
    key = check_auth(request.headers, (*proxy.client_keys, *proxy.labeller_keys))
    labeller = key_id(key)
    proxy.label_limit.admit(labeller)
    label = parse_feedback(await read_body(request, proxy.settings.max_body_bytes))
    target, audit = proxy.settings.audit_target, proxy.audit
    if target is None or audit is None:
        raise InvalidRequestError("feedback is stored in the audit log: serve with "
                                  "--audit-path (or --audit-url)", code="no_audit_log")
    rid = label["request_id"]
    known, owner = proxy.recent.owner(rid)
    if not known and proxy.shared is not None:  # any worker's or replica's, by its index
        try:
            row = await asyncio.to_thread(proxy.shared.decision, rid)
        except AuditStoreError:
            return audit_unavailable()
        known, owner = row is not None, None if row is None else row.get("key_id")
    if not known or (owner != labeller and not key_in(key, proxy.labeller_keys)):
        # another key's decision is answered as an unknown one: nothing to learn from it
        raise UnknownRequestError(f"no decision with request_id {rid!r} in the audit log",
                                  param="request_id")
    if not audit.submit_row(FEEDBACK, feedback_row(label, labeller)):
        return JSONResponse(error_body("the audit log is not keeping up; the label was not "
                                       "recorded, send it again", "server_error",
                                       code="audit_queue_full"), status_code=503)
    return JSONResponse({"recorded": True, **label})


async def models(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    if is_routed(proxy):
        return routed_models(proxy, request.path_params.get("model"))
    upstream = proxy.upstream
    data = await upstream.within(proxy.settings.request_timeout, upstream.get(
        model_path(request), proxy.upstream_headers(request.headers)))
    return JSONResponse(data)


async def embeddings(request: Request) -> Response:
    """``POST /v1/embeddings``, passed through unchanged: an embedding answers no question."""
    proxy: Proxy = request.app.state.proxy
    check_auth(request.headers, proxy.client_keys)
    body = await read_body(request, proxy.settings.max_body_bytes)
    upstream = proxy.upstream
    data = await upstream.within(proxy.settings.request_timeout, upstream.post(
        "embeddings", body, proxy.upstream_headers(request.headers)))
    return JSONResponse(data)


async def not_guarded(request: Request) -> Response:
    """``/v1/completions``: not served, so that no endpoint delivers an unguarded answer."""
    raise InvalidRequestError(
        f"the utilityguard proxy does not serve {request.url.path}: it guards "
        "/v1/chat/completions and /v1/responses only (an endpoint it passed through would "
        "deliver unguarded answers); send the request as a chat completion",
        code="endpoint_not_guarded")


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    routes = proxy.table.routes  # the operator's key only, if any, to each upstream
    checks = await asyncio.gather(*(r.upstream.ready(upstream_headers({}, r.upstream_key))
                                    for r in routes))
    ready = all(ok for ok, _ in checks)
    body: dict[str, Any] = {"status": "ready" if ready else "unavailable",
                            "upstream": routes[0].upstream.name, "detail": checks[0][1]}
    if is_routed(proxy):
        body["routes"] = [{"model": r.route, "upstream": r.upstream.name, "ready": ok,
                           "detail": detail} for r, (ok, detail) in zip(routes, checks,
                                                                        strict=True)]
    if proxy.audit is not None:  # reported, not a condition: records queue while it is down
        # without the log's name: where the audit database lives is the operator's business
        body["audit"] = {k: v for k, v in proxy.audit.status().items() if k != "log"}
    return JSONResponse(body, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    if proxy.settings.metrics_api_key is not None:
        check_auth(request.headers, (proxy.settings.metrics_api_key.get_secret_value().encode(),))
    extra = proxy.budget.metrics_text() if proxy.budget is not None else ""
    return Response(proxy.metrics.render() + extra, media_type=CONTENT_TYPE)
