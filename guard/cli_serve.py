"""``utilityguard serve``: run the OpenAI-compatible guard proxy in front of an upstream.

Every flag overrides the matching ``UTILITYGUARD_*`` environment variable (or ``.env`` entry);
see :class:`guard.settings.Settings` for all of them. Keys can be given as flags
(``--api-key``, ``--upstream-api-key``) but are better kept in the environment
(``UTILITYGUARD_API_KEYS``, ``UTILITYGUARD_UPSTREAM_API_KEY``): flags show up in the process
list.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from guard.cli import CLIError
from guard.settings import CONFIDENCE_KINDS, Settings

log = logging.getLogger(__name__)

#: flag destination -> Settings field (flags left unset fall back to the environment).
FLAGS = ("upstream", "host", "port", "confidence", "c_r", "mode", "cost_model", "calibrator",
         "trust_artifacts", "api_keys", "upstream_api_key", "refusal_text", "no_confidence",
         "max_body_bytes", "connect_timeout", "read_timeout", "audit_path", "audit_queries",
         "audit_queue_size", "consistency_samples")


def register(sub: Any) -> None:
    """Add the ``serve`` subcommand to the ``utilityguard`` parser."""
    p = sub.add_parser(
        "serve",
        help="run the OpenAI-compatible guard proxy in front of an upstream",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Serve POST /v1/chat/completions (streaming or not), GET /v1/models, /healthz and\n"
            "/metrics. Each reply is delivered only when p >= (L - C_R) / (1 + L); otherwise\n"
            "the client receives the refusal text. The decision is in the response headers\n"
            "x-utilityguard-decision / -cost / -confidence / -threshold / -request-id.\n"
            "Per request: x-utilityguard-refusal-cost (C_R), x-utilityguard-cost (L),\n"
            "x-utilityguard-mode (enforce|shadow), x-utilityguard-confidence (p, for\n"
            "--confidence caller).\n\n"
            "Every option can also be set as UTILITYGUARD_<OPTION> in the environment or a\n"
            ".env file (flags win), e.g. UTILITYGUARD_UPSTREAM, UTILITYGUARD_C_R,\n"
            "UTILITYGUARD_AUDIT_PATH. Prefer the environment for keys (flags are visible in\n"
            "the process list): UTILITYGUARD_API_KEYS (keys clients must send as\n"
            "'Authorization: Bearer <key>'; comma-separated or a JSON list) and\n"
            "UTILITYGUARD_UPSTREAM_API_KEY (sent upstream instead of the client's key)."
        ),
        epilog="example: utilityguard serve --upstream http://127.0.0.1:8080/v1 --c-r 2",
    )
    p.add_argument("--upstream", metavar="URL",
                   help="base URL of the OpenAI-compatible upstream, with its /v1")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (default 8787)")
    p.add_argument("--confidence", choices=CONFIDENCE_KINDS,
                   help="where p comes from: token logprobs (default), a stated confidence, "
                        "agreement of sampled replies, or the x-utilityguard-confidence header")
    p.add_argument("--c-r", dest="c_r", type=float, metavar="C_R",
                   help="price of an unnecessary refusal, >= 0 (default 2)")
    p.add_argument("--mode", choices=("enforce", "shadow"),
                   help="shadow: always deliver the reply, only record the decision")
    p.add_argument("--cost-model", type=Path, metavar="DIR",
                   help="a saved cost model (default: the shipped one)")
    p.add_argument("--calibrator", type=Path, metavar="DIR",
                   help="a saved calibrator for the confidence signal (default: none)")
    p.add_argument("--trust", dest="trust_artifacts", action="store_true", default=None,
                   help="load artifacts whose checksum or scikit-learn version differ")
    p.add_argument("--api-key", dest="api_keys", action="append", metavar="KEY",
                   help="a key clients must send as 'Authorization: Bearer KEY' (repeatable; "
                        "none: no auth)")
    p.add_argument("--upstream-api-key", metavar="KEY",
                   help="sent upstream instead of the client's Authorization header")
    p.add_argument("--refusal-text", help="what a refused reply says ('I cannot answer.')")
    p.add_argument("--no-confidence", metavar="POLICY",
                   help="refuse (default), answer, or a prior probability when no p is found")
    p.add_argument("--max-body-bytes", "--max-body-size", dest="max_body_bytes", type=int,
                   metavar="N",
                   help="reject larger request bodies with 413 (default 1048576)")
    p.add_argument("--connect-timeout", type=float, metavar="S", help="upstream connect timeout")
    p.add_argument("--read-timeout", "--timeout", dest="read_timeout", type=float, metavar="S",
                   help="upstream read timeout (default 120); a timeout answers 504")
    p.add_argument("--audit-path", type=Path, metavar="DB",
                   help="append every decision to this SQLite file (default: no audit log)")
    p.add_argument("--audit-queries", action="store_true", default=None,
                   help="also store the query text in the audit log")
    p.add_argument("--audit-queue-size", type=int, metavar="N",
                   help="decisions that may wait for the audit writer (default 10000)")
    p.add_argument("--consistency-samples", type=int, metavar="N",
                   help="samples for --confidence consistency (default 5)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="server processes (default 1); more use more cores. Each worker has "
                        "its own /metrics counters; all append to the same audit file")
    p.add_argument("--log-level", default="info",
                   choices=("critical", "error", "warning", "info", "debug"),
                   help="server log level (default info)")
    p.set_defaults(func=run)


def load_settings(args: argparse.Namespace) -> Settings:
    """The settings: the flags given on top of the environment / ``.env``."""
    overrides = {name: getattr(args, name) for name in FLAGS
                 if getattr(args, name, None) is not None}
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'settings'}: {e['msg']}"
            for e in exc.errors())
        raise CLIError(f"invalid settings: {problems}") from None
    if settings.upstream is None:
        raise CLIError("no upstream: pass --upstream URL or set UTILITYGUARD_UPSTREAM")
    return settings


def run(args: argparse.Namespace) -> int:
    """Build the app from the settings and serve it with uvicorn until interrupted."""
    import uvicorn

    from guard.proxy import create_app

    settings = load_settings(args)
    logging.getLogger("guard").setLevel(args.log_level.upper())
    # per-request access lines cost throughput; decisions are in /metrics and the audit log
    options: dict[str, Any] = {
        "host": settings.host, "port": settings.port, "log_level": args.log_level,
        "access_log": args.log_level in ("info", "debug"), "timeout_graceful_shutdown": 30}
    if args.workers < 1:
        raise CLIError(f"--workers must be >= 1, got {args.workers}")
    if args.workers == 1:
        uvicorn.run(create_app(settings), **options)
        return 0
    create_app(settings)  # fail here, once, on a bad cost model or calibrator
    # worker processes build the app from the environment; hand them the flags given here
    os.environ.update(settings_environment(args))
    uvicorn.run("guard.proxy.app:app_from_environment", factory=True, workers=args.workers,
                **options)
    return 0


def settings_environment(args: argparse.Namespace) -> dict[str, str]:
    """``UTILITYGUARD_*`` variables carrying the flags given on the command line."""
    env = {}
    for name in FLAGS:
        value = getattr(args, name, None)
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = json.dumps([_plain(v) for v in value])
        env[f"UTILITYGUARD_{name.upper()}"] = _plain(value)
    return env


def _plain(value: Any) -> str:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
