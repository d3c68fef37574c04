"""``utilityguard audit``: read the proxy's audit log (SQLite file or PostgreSQL URL).

``audit export`` writes each decision record as one JSON line (DESIGN.md's fields plus ``ts``,
``model``, ``stream`` and ``query``, which is null unless the proxy ran with
``audit_queries``), oldest first.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from guard.cli import CLIError


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
    p.set_defaults(func=_need_action)


def _need_action(args: argparse.Namespace) -> int:
    raise CLIError("audit needs an action: utilityguard audit export --path DB --out FILE")


def run_export(args: argparse.Namespace) -> int:
    """Export the audit log; print how many records were written."""
    from guard.proxy.audit import export_jsonl, open_store

    target = audit_source(args)
    n = export_jsonl(target, args.out)
    print(f"wrote {n} decision record(s) from {open_store(target).name} to {args.out}")
    return 0
