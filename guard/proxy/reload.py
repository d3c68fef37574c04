"""Reloading a running proxy's policy: ``POST /admin/reload``, SIGHUP, and the swap itself.

:func:`reload` loads the configured policy again (or one an admin names, checked by
:func:`check_policy_allowed`), in a thread, and swaps it in atomically; with ``--config`` the
file is read again, whole (:func:`guard.proxy.gateway.reload_config`). A policy that fails to
load changes nothing (logged; the admin endpoint answers 500 naming the policy still served).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import Request
from starlette.responses import JSONResponse, Response

from guard.core import Guard
from guard.exceptions import AuthenticationError, InvalidRequestError, PermissionDeniedError
from guard.proxy.auth import check_auth
from guard.proxy.build import build_guard
from guard.proxy.errors import error_body
from guard.proxy.gateway import is_routed, policies, reload_config, serving
from guard.proxy.parse import read_body
from guard.settings import Settings

if TYPE_CHECKING:
    from guard.proxy.state import Proxy

log = logging.getLogger(__name__)
#: The longest ``policy`` an admin may name (a path or a shipped name).
MAX_POLICY_CHARS = 4096


async def reload(proxy: Proxy, policy: str | None = None) -> Guard:
    """Load the configured policy again (the one given at start, whatever an admin switched
    to since) — or ``policy`` (a path or shipped name) instead, until the next reload — in a
    thread, and swap it in atomically: requests already running finish with the guard they
    started with; new ones get the new one. A policy that fails to load raises (ConfigError /
    ArtifactError) and leaves the old one serving. With ``--config`` the file is read again,
    whole (:func:`guard.proxy.gateway.reload_config`). One reload at a time
    (``proxy.reload_lock``)."""
    async with proxy.reload_lock:
        return await _reload(proxy, policy)


async def _reload(proxy: Proxy, policy: str | None) -> Guard:
    if proxy.configured.config is not None:
        return await reload_config(proxy)
    settings = proxy.configured if policy is None else proxy.configured.model_copy(
        update={"policy": policy})
    try:
        guard = await asyncio.to_thread(build_guard, settings, proxy._cost_model)
        await asyncio.to_thread(guard.predict_cost, "warm-up")
    except Exception as exc:
        log.error("policy reload failed, still serving %s: %s", serving(proxy), exc)
        raise
    old, proxy.guard, proxy.settings = proxy.guard, guard, settings
    log.warning("policy reloaded: %s -> %s", old.policy or "no policy",
                guard.policy or "no policy")
    return guard


def check_policy_allowed(policy: str, settings: Settings) -> None:
    """A policy ``POST /admin/reload`` may load: a shipped name, the configured ``--policy``,
    or a folder inside one of the operator's ``--policy-dir`` directories (symlinks
    resolved); :class:`PermissionDeniedError` (403) otherwise."""
    from guard.policy.artifact import shipped_policies

    if len(policy) > MAX_POLICY_CHARS or any(ord(ch) < 32 or ord(ch) == 127 for ch in policy):
        raise InvalidRequestError(f"'policy' must be a path or a shipped name of at most "
                                  f"{MAX_POLICY_CHARS} characters, without control "
                                  "characters", param="policy")
    if policy in shipped_policies() or policy == settings.policy:
        return
    try:
        target = Path(policy).resolve()
        allowed = any(target.is_relative_to(Path(root).resolve())
                      for root in settings.policy_dirs)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a name too long
        allowed = False
    if allowed:
        return
    raise PermissionDeniedError(
        "the admin endpoint loads only shipped policies, the configured --policy and "
        "folders inside an operator-configured --policy-dir", param="policy",
        code="policy_dir_not_allowed")


@contextlib.contextmanager
def reload_on_sighup(proxy: Proxy) -> Iterator[None]:
    """While the block runs (the app's lifespan, :func:`guard.proxy.app.create_app`), SIGHUP
    reloads the configured policy (where the platform has the signal and this is the main
    thread's loop)."""
    installed = watch_sighup(proxy)
    try:
        yield
    finally:
        if installed:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)


def watch_sighup(proxy: Proxy) -> bool:
    """Reload the configured policy on SIGHUP (where the platform has it and this is the
    main thread's loop); True when the handler was installed."""
    if (proxy.configured.policy is None and proxy.configured.config is None) or \
            not hasattr(signal, "SIGHUP"):
        return False
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[Any]] = set()

    def on_hup() -> None:
        task = loop.create_task(_reload_quietly(proxy))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    try:
        loop.add_signal_handler(signal.SIGHUP, on_hup)
    except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
        return False
    return True


async def _reload_quietly(proxy: Proxy) -> None:
    with contextlib.suppress(Exception):  # reload() logged why; the old policy serves on
        await reload(proxy)


async def admin_reload(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    key = proxy.settings.admin_api_key
    if key is None:
        raise AuthenticationError("the admin endpoint is disabled: set "
                                  "UTILITYGUARD_ADMIN_API_KEY", code="admin_disabled")
    check_auth(request.headers, (key.get_secret_value().encode(),))
    raw = await read_body(request, proxy.settings.max_body_bytes)
    try:
        body = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        raise InvalidRequestError("the body must be empty or JSON", code="invalid_json") from None
    policy = body.get("policy") if isinstance(body, dict) else None
    if not isinstance(body, dict) or (policy is not None and not isinstance(policy, str)) or \
            set(body) - {"policy"}:
        raise InvalidRequestError('the body must be empty or {"policy": "PATH_OR_NAME"}',
                                  param="policy")
    if is_routed(proxy) and policy is not None:
        raise InvalidRequestError("this gateway serves a --config file: edit the file and "
                                  "reload it whole (an empty body)", param="policy")
    if proxy.configured.policy is None and policy is None and not is_routed(proxy):
        raise InvalidRequestError("nothing to reload: the proxy serves without --policy; "
                                  'send {"policy": "PATH_OR_NAME"} to start using one')
    if policy is not None:
        check_policy_allowed(policy, proxy.configured)
    try:
        guard = await reload(proxy, policy)
    except Exception as exc:
        what = "the config" if is_routed(proxy) else "the policy"
        return JSONResponse(error_body(f"{what} failed to load; still serving "
                                       f"{serving(proxy)}: {exc}", "server_error",
                                       code="policy_load_failed"), status_code=500)
    if is_routed(proxy):
        return JSONResponse({"reloaded": True, "routes": policies(proxy.table)})
    return JSONResponse({"reloaded": True, "policy": guard.policy})
