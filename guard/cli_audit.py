"""``utilityguard audit export``: the proxy's SQLite audit log as JSON lines.

Each line is one decision record (DESIGN.md's fields plus ``ts``, ``model``, ``stream`` and
``query``, which is null unless the proxy ran with ``audit_queries``), oldest first.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from guard.cli import CLIError


def register(sub: Any) -> None:
    """Add the ``audit`` subcommand (with ``export``) to the ``utilityguard`` parser."""
    p = sub.add_parser("audit", help="work with the guard proxy's audit log",
                       description="Work with the SQLite audit log written by "
                                   "'utilityguard serve --audit-path DB'.")
    actions = p.add_subparsers(dest="audit_command", metavar="ACTION")
    e = actions.add_parser("export", help="write the audit log as JSON lines",
                           description="Write every decision record of the audit log to a "
                                       "JSONL file, oldest first.")
    e.add_argument("--path", type=Path, metavar="DB",
                   help="the audit database (default: UTILITYGUARD_AUDIT_PATH)")
    e.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl",
                   help="where to write the records")
    e.set_defaults(func=run_export)
    p.set_defaults(func=_need_action)


def _need_action(args: argparse.Namespace) -> int:
    raise CLIError("audit needs an action: utilityguard audit export --path DB --out FILE")


def run_export(args: argparse.Namespace) -> int:
    """Export the audit log; print how many records were written."""
    from guard.proxy.audit import export_jsonl
    from guard.settings import Settings

    path = args.path or Settings().audit_path
    if path is None:
        raise CLIError("no audit log given: pass --path DB or set UTILITYGUARD_AUDIT_PATH")
    n = export_jsonl(path, args.out)
    print(f"wrote {n} decision record(s) from {path} to {args.out}")
    return 0
