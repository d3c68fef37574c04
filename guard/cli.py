"""The ``utilityguard`` command line.

Subcommands are registered by the packages that implement them, through the entry-point group
``utilityguard.commands`` (``name = "module:register"``), so the CLI root lives in ``guard``
without importing ``benchmarks`` (which depends on ``guard``). Each ``register(subparsers)``
adds one subparser whose ``func(args) -> int`` runs the command.

Errors a user can fix (bad files, bad values, an unreachable upstream) derive from
:class:`utilityguard_base.exceptions.UtilityGuardError` (or are an ``OSError``: a missing
file, a full disk) and are printed as one line on stderr, ``utilityguard: error: ...``, with exit
code 2 — never a traceback. Any other exception is a bug and shows as one. Usage errors (an unknown
flag or command, a bad choice) take the same one-line form, name the subcommand's help and suggest
the closest flag, command or choice.
"""

from __future__ import annotations

import argparse
import difflib
import logging
import re
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, NoReturn

from utilityguard_base.exceptions import CLIError, UtilityGuardError


def _closest(word: str, candidates: Sequence[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def suggestion(parser: argparse.ArgumentParser, message: str, argv: Sequence[str] = ()
               ) -> tuple[str, str] | None:
    """``(given, closest)``: the closest flag, command or choice to what an argparse
    ``message`` rejects (or, for any message, to a flag in ``argv`` that ``parser`` does not
    know); ``None`` when nothing is close."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        options = re.findall(r"'([^']*)'", choice.group(2)) or [
            c.strip() for c in choice.group(2).split(",")]
        match = _closest(choice.group(1), options)
        return (choice.group(1), match) if match else None
    unknown = re.search(r"unrecognized arguments: (.*)", message)
    if unknown:
        for word in unknown.group(1).split():
            if word.startswith("-"):
                match = _closest(word.split("=", 1)[0], _option_strings(parser))
                if match:
                    return word.split("=", 1)[0], match
    known = set(_option_strings(parser))
    for word in argv:
        flag = word.split("=", 1)[0]
        if flag.startswith("--") and flag not in known:
            match = _closest(flag, list(known))
            if match:
                return flag, match
    return None


class UsageParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line with a "did you mean"."""

    #: the words being parsed (set by :func:`main`), to suggest a flag for a misspelt one
    words: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        close = suggestion(self, message, self.words)
        hint = f"; {close[0]!r}: did you mean {close[1]!r}?" if close else ""
        where = self.prog.removeprefix("utilityguard").strip()
        prefix = f"{where}: " if where else ""
        self.exit(2, f"utilityguard: error: {prefix}{message}{hint} "
                     f"(see '{self.prog} --help')\n")


def command_parser(parser: argparse.ArgumentParser, argv: Sequence[str]
                   ) -> argparse.ArgumentParser:
    """The (sub)parser of the deepest command that ``argv`` names (``cost train`` -> its
    parser), for usage errors that argparse reports on the top-level parser."""
    current = parser
    for word in argv:
        subs = _subcommands(current)
        if not word.startswith("-") and word in subs:
            current = subs[word]
    return current


def _version() -> str:
    try:
        return version("utilityguard")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown (not installed)"


def _unavailable(sub: Any, name: str, error: Exception) -> None:
    p = sub.add_parser(name, help=f"(unavailable: {error})")

    def fail(_args: argparse.Namespace) -> int:
        raise CLIError(f"command {name!r} is unavailable: {error}")

    p.set_defaults(func=fail)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command, only that command's module is imported."""
    parser = UsageParser(
        prog="utilityguard",
        description=(
            "A runtime abstention guard for LLMs: deliver an answer only when "
            "p >= (L - C_R) / (1 + L), where p is the probability it is correct, L the "
            "consequence cost of a wrong answer and C_R the price of an unnecessary refusal."
        ),
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    parser.add_argument("--version", action="version", version=f"utilityguard {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    eps = sorted(entry_points(group="utilityguard.commands"), key=lambda e: e.name)
    words = [a for a in (argv or []) if not a.startswith("-")]
    chosen = [ep for ep in eps if words and ep.name == words[0]]
    for ep in chosen or eps:
        try:
            ep.load()(sub)
        except ImportError as exc:  # a broken or missing optional command must not break the rest
            from guard.siblings import message, shadowing

            top = ep.value.split(".", 1)[0].split(":", 1)[0]
            found = shadowing(top)
            _unavailable(sub, ep.name, ImportError(message(top, found)) if found else exc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    UsageParser.words = argv
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command_parser(parser, argv).error(f"unrecognized arguments: {' '.join(unknown)}")
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
    except (UtilityGuardError, OSError) as exc:  # anything else is a bug: a traceback
        print(f"utilityguard: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("utilityguard: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
