"""Text and JSON made well-formed: the one place lone surrogates and non-standard numbers go.

A JSON string may hold a lone surrogate (``"\\ud800"``): valid JSON, not valid Unicode. A
tokenizer refuses it (``TextInputSequence must be str``), an upstream may too, and UTF-8 cannot
encode it. Python's :func:`json.loads` also reads ``NaN``, ``Infinity`` and ``-Infinity``,
which are not JSON at all. :func:`well_formed` replaces every lone surrogate of a text with
U+FFFD; :func:`loads_standard` parses JSON either refusing the non-standard numbers (what a
client sends: :class:`NonStandardJSON`) or reading them as ``null`` (what an upstream sends),
and replaces lone surrogates in every string, keys included, so what is forwarded is standard
JSON. Texts and bodies without a surrogate are returned as they are (one C-level search).

Examples
--------
>>> well_formed("dose \\ud800?")
'dose \\ufffd?'
>>> loads_standard(b'{"p": NaN, "t": "\\\\ud800"}', constants="null")
{'p': None, 't': '\\ufffd'}
>>> loads_standard(b'{"p": Infinity}', constants="reject")
Traceback (most recent call last):
...
utilityguard_base.wellformed.NonStandardJSON: Infinity is not a JSON number
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

__all__ = ["NonStandardJSON", "loads_standard", "well_formed", "well_formed_value"]

#: a lone surrogate in a decoded text
SURROGATE = re.compile("[\ud800-\udfff]")
#: where raw JSON may hold one: a ``\\uD8xx``-``\\uDFxx`` escape, or UTF-8-encoded surrogate
#: bytes (``json.loads`` of bytes decodes with ``surrogatepass``)
_RAW_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_TEXT_SURROGATE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")


class NonStandardJSON(ValueError):
    """The JSON held ``NaN``, ``Infinity`` or ``-Infinity`` (not JSON numbers)."""


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (``text`` itself when it has
    none)."""
    return SURROGATE.sub("\ufffd", text) if SURROGATE.search(text) else text


def well_formed_value(value: Any) -> Any:
    """A JSON value (what :func:`json.loads` makes) with :func:`well_formed` applied to
    every string, dictionary keys included."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed(k) if isinstance(k, str) else k: well_formed_value(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [well_formed_value(v) for v in value]
    return value


def loads_standard(raw: bytes | str, *, constants: Literal["reject", "null"]) -> Any:
    """``json.loads(raw)`` made standard: ``NaN`` / ``Infinity`` / ``-Infinity`` raise
    :class:`NonStandardJSON` (``constants="reject"``) or read as ``None`` (``"null"``), and
    lone surrogates become U+FFFD. Other errors are :func:`json.loads`'s (``ValueError``,
    ``RecursionError``)."""

    def constant(name: str) -> None:
        if constants == "reject":
            raise NonStandardJSON(f"{name} is not a JSON number")
        return None

    data = json.loads(raw, parse_constant=constant)
    if isinstance(raw, bytes):  # UTF-16 / UTF-32 JSON (NUL bytes) is always walked
        found = b"\x00" in raw[:4] or _RAW_SURROGATE.search(raw) is not None
    else:
        found = _TEXT_SURROGATE.search(raw) is not None
    return well_formed_value(data) if found else data
