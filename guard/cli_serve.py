"""``utilityguard serve``: run the OpenAI-compatible guard proxy in front of an upstream.

Every flag overrides the matching ``UTILITYGUARD_*`` environment variable (or ``.env`` entry);
see :class:`guard.settings.Settings` for all of them. Keys can be given as flags
(``--api-key``, ``--upstream-api-key``) but are better kept in the environment
(``UTILITYGUARD_API_KEYS``, ``UTILITYGUARD_UPSTREAM_API_KEY``): flags show up in the process
list.
"""

from __future__ import annotations

import argparse
import errno
import functools
import inspect
import logging
import os
import socket
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError
from pydantic.fields import FieldInfo

from guard.exceptions import CLIError
from guard.settings import PREFIX, Settings
from utilityguard_base.bounds import problem

log = logging.getLogger(__name__)
WORKER_START_S = 60  # how long a --workers process may take to answer the supervisor


def _flag_type(annotation: Any) -> tuple[str, Any]:
    """``(kind, detail)`` of a field for argparse: ``("bool", None)``, ``("list", None)``,
    ``("choices", values)`` or ``("value", converter)``. Pydantic validates what the
    converter returns, so a union (``"refuse"`` or a probability) stays a string."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if annotation is bool:
        return "bool", None
    if origin is list or annotation is list:
        return "list", None
    if origin is typing.Annotated:
        return _flag_type(args[0])
    if origin is typing.Literal:
        return "choices", tuple(args)
    if origin in (typing.Union, types.UnionType):
        return _flag_type(args[0]) if len(args) == 1 else ("value", str)
    if annotation in (int, float, Path):
        return "value", annotation
    return "value", str


def _help(name: str, field: FieldInfo) -> str:
    text = field.description or name.replace("_", " ")
    default = field.default
    if default is not None and not field.default_factory and not isinstance(
            default, (bool, SecretStr)) and "default" not in text:
        text += f" (default {default!r})" if isinstance(default, str) else f" (default {default})"
    # argparse formats a help string with %: a literal one ("Confidence: N%") is doubled
    return f"{text} [env {PREFIX}{name.upper()}]".replace("%", "%%")


def add_settings_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                       names: Sequence[str] | None = None) -> None:
    """One ``--<field-name>`` flag per :class:`Settings` field (or per field of ``names``),
    plus the spellings in the field's ``json_schema_extra["flags"]``. Every default is
    ``None``, so a flag left out falls back to the environment / ``.env`` / the field's
    default."""
    for name, field in Settings.model_fields.items():
        if names is not None and name not in names:
            continue
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        flags = ["--" + name.replace("_", "-"), *typing.cast(list[str], extra.get("flags", []))]
        options: dict[str, Any] = {"dest": name, "default": None, "help": _help(name, field)}
        kind, detail = _flag_type(field.annotation)
        if kind == "bool":
            options["action"] = "store_true"
        else:
            if "metavar" in extra:
                options["metavar"] = extra["metavar"]
            if kind == "list":
                options["action"] = "append"
            elif kind == "choices":
                options["choices"] = detail
            else:
                options["type"] = detail
        parser.add_argument(*flags, **options)


def register(sub: Any) -> None:
    """Add the ``serve`` subcommand to the ``utilityguard`` parser."""
    p = sub.add_parser(
        "serve",
        help="run the OpenAI-compatible guard proxy in front of an upstream",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Serve POST /v1/chat/completions and POST /v1/responses (streaming or not): each\n"
            "reply is delivered only when p >= (L + 1 - alpha (1 + C_R)) / (1 + L), alpha =\n"
            "P(answerable) (1: (L - C_R) / (1 + L)); otherwise the client receives the\n"
            "refusal text. The decision is in the body (its 'utilityguard'\n"
            "object; in a stream, the last chunk's) and in the response headers\n"
            "x-utilityguard-decision / -cost / -confidence / -threshold / -alpha / -policy /\n"
            "-request-id; GET /v1/decisions/{request_id} returns it again, to the key that\n"
            "made the request. Per request (when the operator allows overrides):\n"
            "x-utilityguard-c-r (C_R), x-utilityguard-cost (L),\n"
            "x-utilityguard-mode (enforce|shadow), x-utilityguard-confidence (p, for\n"
            "--confidence caller).\n\n"
            "Also: POST /v1/feedback (a label for a decision, into the audit log), GET\n"
            "/v1/models, POST /v1/embeddings (passed through), GET /healthz (liveness),\n"
            "GET /readyz (the upstream answers), GET /metrics (Prometheus), POST\n"
            "/admin/reload (admin key). SIGHUP and an empty POST /admin/reload re-read what\n"
            "was configured at start (the --config file, or --policy); POST /admin/reload\n"
            "{\"policy\": ...} switches a one-route proxy to another policy until then.\n\n"
            "Several models, each with its own upstream, policy and C_R: --config FILE (a\n"
            "YAML list of routes; see docs/gateway.md). Without it the flags describe one\n"
            "route that serves every model; with it they are the routes' defaults.\n\n"
            "Every option can also be set as UTILITYGUARD_<OPTION> in the environment or a\n"
            ".env file (flags win), e.g. UTILITYGUARD_UPSTREAM, UTILITYGUARD_C_R,\n"
            "UTILITYGUARD_AUDIT_PATH. Prefer the environment for keys (flags are visible in\n"
            "the process list): UTILITYGUARD_API_KEYS (keys clients must send as\n"
            "'Authorization: Bearer <key>'; comma-separated or a JSON list) and\n"
            "UTILITYGUARD_UPSTREAM_API_KEY (sent upstream instead of the client's key)."
        ),
        epilog="examples:\n  utilityguard serve --upstream http://127.0.0.1:8080/v1 --c-r 2\n"
               "  utilityguard serve --config gateway.yaml",
    )
    add_settings_flags(p)
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="server processes (default 1); more use more cores. /metrics of "
                        "any worker reports the sum over all; all append to the same audit log")
    p.add_argument("--log-level", default="info",
                   choices=("critical", "error", "warning", "info", "debug"),
                   help="server log level (default info)")
    p.set_defaults(func=run)


def settings_problem(exc: ValidationError) -> str:
    """The first problem of invalid settings as one line naming the flag and the variable
    that set it (``invalid setting --upstream (UTILITYGUARD_UPSTREAM): ...``), in the
    project's words (:func:`utilityguard_base.bounds.problem`), not pydantic's."""
    errors = exc.errors()
    e = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    name = str(e["loc"][0]).removeprefix(PREFIX).lower() if e["loc"] else ""
    if name in Settings.model_fields:
        where = f"setting --{name.replace('_', '-')} ({PREFIX}{name.upper()})"
    else:
        where = "settings"
    return f"invalid {where}: {problem(e)}{more}"


def settings_from(overrides: dict[str, Any]) -> Settings:
    """:class:`Settings` from ``overrides`` on top of the environment / ``.env``; a one-line
    :class:`CLIError` (:func:`settings_problem`) when they are invalid."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise CLIError(settings_problem(exc)) from None


def load_settings(args: argparse.Namespace) -> Settings:
    """The settings: the flags given on top of the environment / ``.env``."""
    overrides = {name: getattr(args, name) for name in Settings.model_fields
                 if getattr(args, name, None) is not None}
    settings = settings_from(overrides)
    if settings.config is not None and settings.upstream is not None:
        raise CLIError("give --config FILE (its routes name their upstreams) or --upstream "
                       "URL (one route for every model), not both")
    if settings.upstream is None and settings.config is None:
        raise CLIError("no upstream: pass --upstream URL (or set UTILITYGUARD_UPSTREAM), or "
                       "--config FILE with a route per model")
    return settings


def run(args: argparse.Namespace) -> int:
    """Build the app from the settings and serve it with uvicorn until interrupted."""
    import uvicorn

    from guard.proxy import create_app
    from guard.proxy.server import server_config

    settings = load_settings(args)
    logging.getLogger("guard").setLevel(args.log_level.upper())
    # per-request access lines cost throughput; decisions are in /metrics and the audit log
    options: dict[str, Any] = {
        "host": settings.host, "port": settings.port, "log_level": args.log_level,
        "access_log": args.log_level in ("info", "debug"), "timeout_graceful_shutdown": 30}
    if args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    check_audit_log(settings)
    sock = listen(settings.host, settings.port)  # before loading anything: fail fast
    options.update(max_header_bytes=settings.max_header_bytes,
                   max_headers=settings.max_headers)
    if args.workers == 1:
        with sock:
            # the policy, the config file and the parts load (and fail, one line) before
            # the server says it listens
            config = server_config(create_app(settings), **options)
            log.info("listening on http://%s:%d", settings.host, sock.getsockname()[1])
            uvicorn.Server(config).run(sockets=[sock])
        return 0
    from uvicorn.supervisors import Multiprocess

    from guard.proxy.metrics import multiprocess_directory

    with sock, multiprocess_directory():  # /metrics of any worker sums over all of them
        create_app(settings)  # fail here, once, on a bad policy, cost model or calibrator
        log.info("listening on http://%s:%d", settings.host, sock.getsockname()[1])
        config = worker_config(settings, args.workers, **options)
        sockets = [sock]
        supervisor: Any = Multiprocess
        if "target" in inspect.signature(supervisor).parameters:  # older uvicorn
            supervisor(config, target=uvicorn.Server(config).run, sockets=sockets).run()
        else:
            supervisor(config, sockets=sockets).run()
    return 0


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``, or a one-line :class:`CLIError` (exit 2) when
    the port is taken or the address is not this machine's (rather than uvicorn's log lines
    and exit 1)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = ("the port is already in use (another server runs there: stop it or pass "
                  "--port)" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc))
        raise CLIError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.set_inheritable(True)  # --workers: the worker processes accept on it
    return sock


def check_audit_log(settings: Settings) -> None:
    """Open (creating its tables) the audit log once before serving, so an unreachable or
    foreign database is a one-line error here rather than a failed worker startup."""
    from guard.proxy.audit import open_store

    if settings.audit_target is not None:
        with open_store(settings.audit_target) as store:
            store.connect(create=True)


def worker_config(settings: Settings, workers: int, **options: Any) -> Any:
    """The uvicorn config of ``--workers N``: each worker process unpickles it and calls
    ``create_app(settings)`` itself, so the settings travel with the config (no environment
    variables are set)."""
    import uvicorn

    from guard.proxy.parentwatch import worker_app
    from guard.proxy.server import server_config

    if "timeout_worker_healthcheck" in inspect.signature(uvicorn.Config).parameters:
        # a worker still importing on a loaded machine is not dead (uvicorn's default: 5 s)
        options.setdefault("timeout_worker_healthcheck", WORKER_START_S)
    options.setdefault("max_header_bytes", settings.max_header_bytes)
    options.setdefault("max_headers", settings.max_headers)
    # each worker dies with this process, even when it is SIGKILLed (guard.proxy.parentwatch)
    return server_config(functools.partial(worker_app, settings, os.getpid()), factory=True,
                         workers=workers, **options)
