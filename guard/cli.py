"""The ``utilityguard`` command line.

Subcommands are registered by the packages that implement them, through the entry-point group
``utilityguard.commands`` (``name = "module:register"``), so the CLI root lives in ``guard``
without importing ``benchmarks`` (which depends on ``guard``). Each ``register(subparsers)``
adds one subparser whose ``func(args) -> int`` runs the command.

Errors a user can fix (bad files, bad values, an unreachable upstream) are raised as
:class:`CLIError` or ``ValueError`` and printed as one line on stderr with exit code 2 — never a
traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any


class CLIError(Exception):
    """A user-facing error: printed as ``utilityguard: error: <message>``, exit code 2."""


def _unavailable(sub: Any, name: str, error: Exception) -> None:
    p = sub.add_parser(name, help=f"(unavailable: {error})")

    def fail(_args: argparse.Namespace) -> int:
        raise CLIError(f"command {name!r} is unavailable: {error}")

    p.set_defaults(func=fail)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command, only that command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="utilityguard",
        description=(
            "A runtime abstention guard for LLMs: deliver an answer only when "
            "p >= (L - C_R) / (1 + L), where p is the probability it is correct, L the "
            "consequence cost of a wrong answer and C_R the price of an unnecessary refusal."
        ),
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    eps = sorted(entry_points(group="utilityguard.commands"), key=lambda e: e.name)
    words = [a for a in (argv or []) if not a.startswith("-")]
    chosen = [ep for ep in eps if words and ep.name == words[0]]
    for ep in chosen or eps:
        try:
            ep.load()(sub)
        except ImportError as exc:  # a broken or missing optional command must not break the rest
            _unavailable(sub, ep.name, exc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.argv = argv  # the words as given, e.g. for a model card's "command"
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (CLIError, ValueError, OSError) as exc:
        print(f"utilityguard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("utilityguard: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
