"""``utilityguard audit``: read the proxy's audit log (SQLite file or PostgreSQL URL).

``audit export`` writes each decision record as one JSON line (docs/design.md's fields plus ``ts``,
``model``, ``stream`` and ``query``, which is null unless the proxy ran with
``audit_queries``), oldest first. ``audit report`` writes a self-contained HTML page of plots
(:mod:`guard.proxy.audit.page`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from guard.exceptions import CLIError


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``--path DB`` / ``--audit-url URL``: the audit log a command reads."""
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--path", type=Path, metavar="DB",
                     help="a SQLite audit log (default: UTILITYGUARD_AUDIT_PATH)")
    src.add_argument("--audit-url", metavar="URL",
                     help="a PostgreSQL audit log, postgresql://user:pw@host/db (default: "
                          "UTILITYGUARD_AUDIT_URL; prefer the environment for passwords)")


def audit_source(args: argparse.Namespace) -> str | os.PathLike[str]:
    """The audit log named by ``--path`` / ``--audit-url`` or, failing both, the settings."""
    if args.path is not None:
        return Path(args.path)
    if args.audit_url is not None:
        return str(args.audit_url)
    from guard.settings import Settings

    try:
        target = Settings().audit_target
    except ValueError as exc:
        raise CLIError(f"invalid audit settings: {exc}") from None
    if target is None:
        raise CLIError("no audit log given: pass --path DB or --audit-url URL (or set "
                       "UTILITYGUARD_AUDIT_PATH / UTILITYGUARD_AUDIT_URL)")
    return target


def register(sub: Any) -> None:
    """Add the ``audit`` subcommand (``export``, ``report``) to the ``utilityguard`` parser."""
    p = sub.add_parser("audit", help="work with the guard proxy's audit log",
                       description="Work with the audit log written by 'utilityguard serve "
                                   "--audit-path DB' (SQLite) or '--audit-url URL' "
                                   "(PostgreSQL).")
    actions = p.add_subparsers(dest="audit_command", metavar="ACTION")
    e = actions.add_parser("export", help="write the audit log as JSON lines",
                           description="Write every decision record of the audit log to a "
                                       "JSONL file, oldest first.")
    add_source_arguments(e)
    e.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl",
                   help="where to write the records")
    e.set_defaults(func=run_export)
    r = actions.add_parser("report", help="write an HTML page of plots about the audit log",
                           description="Write DIR/index.html: a self-contained page (inline "
                                       "SVG, nothing loaded from the network) with decisions "
                                       "over time, the answer rate by predicted-cost band, p "
                                       "against the thresholds, refusals by policy version "
                                       "and, where feedback exists, the accuracy of delivered "
                                       "answers and the realised utility against "
                                       "always-answer and always-refuse.")
    add_source_arguments(r)
    r.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="the directory to write index.html into (created)")
    r.add_argument("--bins", type=int, default=24, metavar="N",
                   help="time intervals of the decisions-over-time plot (default 24)")
    r.set_defaults(func=run_report)
    p.set_defaults(func=_need_action)


def _need_action(args: argparse.Namespace) -> int:
    raise CLIError("audit needs an action: export (--path DB --out FILE) or report "
                   "(--path DB --out DIR)")


def run_export(args: argparse.Namespace) -> int:
    """Export the audit log; print how many records were written."""
    from guard.proxy.audit import export_jsonl, open_store

    target = audit_source(args)
    n = export_jsonl(target, args.out)
    print(f"wrote {n} decision record(s) from {open_store(target).name} to {args.out}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    """Write the HTML report; print where."""
    from guard.proxy.audit import open_store, write_report

    if args.bins < 1:
        raise CLIError(f"--bins must be >= 1, got {args.bins}")
    target = audit_source(args)
    name = open_store(target).name  # a URL without its password
    path = write_report(target, args.out, name=name, bins=args.bins)
    print(f"wrote {path}")
    return 0
