"""The command line's ``--c-r`` option, defined once for every command that takes it.

Each command adds it with :func:`add_c_r_option` (default
:data:`utilityguard_base.checks.DEFAULT_C_R`) and checks the parsed value with
:func:`checked_c_r`, whose message names the flag; the check itself is
:func:`utilityguard_base.checks.check_c_r`. ``argparse`` is the standard library's: this
module reads no file and no environment.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_c_r_option(parser, "price of an unnecessary refusal")
>>> parser.parse_args([]).c_r, parser.parse_args(["--c-r", "8"]).c_r
(2.0, 8.0)
>>> checked_c_r(-1.0)
Traceback (most recent call last):
...
utilityguard_base.exceptions.InvalidValueError: --c-r must be a finite number >= 0, got -1.0
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from utilityguard_base.checks import DEFAULT_C_R, check_c_r
from utilityguard_base.exceptions import InvalidValueError

Check = Callable[[Any, str], float]

__all__ = ["add_c_r_option", "argument", "checked_c_r"]


def add_c_r_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                   help: str = "price of an unnecessary refusal C_R",
                   default: float | None = DEFAULT_C_R) -> None:
    """Add ``--c-r`` (a float, default :data:`~utilityguard_base.checks.DEFAULT_C_R`) to
    ``parser``; the help text ends with the default. ``default=None``: not given is ``None`` (the
    command then takes another default, which ``help`` says)."""
    parser.add_argument("--c-r", type=float, default=default,
                        help=help if default is None else f"{help} (default {default:g})")


def checked_c_r(value: float) -> float:
    """``value`` of ``--c-r`` when it is a finite number ``>= 0``; a one-line
    :class:`~utilityguard_base.exceptions.InvalidValueError` naming the flag otherwise."""
    try:
        return check_c_r(value, "--c-r")
    except InvalidValueError:
        raise InvalidValueError(f"--c-r must be a finite number >= 0, got {value}") from None


def argument(check: Check, text: str) -> float:
    """``text`` of a flag checked by ``check`` (a :mod:`utilityguard_base.checks` check),
    for an argparse ``type=``: a bad value becomes argparse's one-line usage error.

    >>> from utilityguard_base.checks import check_probability
    >>> argument(check_probability, "1.7")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number in [0.0, 1.0]; got '1.7'
    """
    try:
        return check(text, "")
    except InvalidValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None
