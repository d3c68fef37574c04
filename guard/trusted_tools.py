"""The tool definitions an operator declares as its application's own (``serve --trusted-tools``).

An application with tools sends its tool definitions on every request, whatever is asked; the
guard reads a tool definition as what a client wrote (a client can hide a request in one:
docs/security.md), so a tool's costly lines ("Look up the maximum daily dose of a drug") price
every request it rides on. An operator who declares the definitions its application sends
(:func:`load_trusted_tools`, a JSON file) has them left out of the price, while a tool a client
writes — or the operator's with one text changed, added or moved — is priced as before.

A tool is recognized by :func:`tool_key`: the sha256 of every text the model reads in it (as
:func:`guard.request_walk.walk` reads a request), each exactly as sent and with where it sits
in the tool. So a definition matches whatever the order of its keys, and in the chat form
(``{"type": "function", "function": {...}}``) as in the Responses and legacy ``functions`` forms
(``{"type": "function", "name": ...}``). Numbers and booleans (``strict``) are not part of it:
no tool's number is priced, trusted or not. A name is keyed as the words the walk reads in it
(``get_dose`` and ``get-dose`` are one). The texts are keyed as sent, not as the guard reads them
(:func:`guard.reading.normalized`): a red team hid a dosing question in invisible tag
characters appended to a trusted tool's description, which normalizing removes, and a model
reads (``tests/guard/data/tool_definitions/redteam_T.jsonl``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any

from guard.exceptions import ConfigError
from guard.request_walk import BUILT_IN_TOOLS, RequestText, walk

#: The largest trusted-tools file read (bytes).
MAX_TOOLS_BYTES = 8 * 1024 * 1024
#: The most tool definitions one file may declare.
MAX_TOOLS = 10_000
#: The path prefix of a tool's fields in the chat form, left out of :func:`tool_key` (the
#: Responses and ``functions`` forms put the same fields at the top of the tool).
_CHAT_PREFIX = ".function"


def tool_key(texts: Sequence[RequestText]) -> str:
    """The key of one tool definition: the sha256 (hex) of its texts, each exactly as sent
    (not normalized: an invisible character is part of it) with its path inside the tool (the
    chat form's ``.function`` left out), sorted.

    >>> a = walk({"tools": [{"type": "function", "function": {"name": "get_dose",
    ...     "description": "Look up a dose."}}]}).texts
    >>> b = walk({"tools": [{"description": "Look up a dose.", "type": "function",
    ...     "name": "get_dose"}]}).texts
    >>> c = walk({"tools": [{"type": "function", "function": {"name": "get_dose",
    ...     "description": "Look up a lethal dose."}}]}).texts
    >>> tool_key(a) == tool_key(b), tool_key(a) == tool_key(c)
    (True, False)
    """
    pairs = []
    for t in texts:
        where = t.where[len(t.unit):] if t.unit and t.where.startswith(t.unit) else t.where
        if where == _CHAT_PREFIX or where.startswith((_CHAT_PREFIX + ".", _CHAT_PREFIX + "<")):
            where = where[len(_CHAT_PREFIX):]
        pairs.append([where, t.text])
    pairs.sort()
    canonical = json.dumps(pairs, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def tool_keys(tools: Sequence[Any]) -> frozenset[str]:
    """The :func:`tool_key` of each tool definition of ``tools`` (a list of JSON objects, as
    an application sends them in ``tools`` or ``functions``); :class:`ConfigError` for one
    that is not an object or holds no text the model reads. A built-in tool of the Responses
    API that holds none (``{"type": "file_search", ...}``: its settings are not text) is passed
    over: there is nothing of it to trust.

    >>> len(tool_keys([{"type": "function", "function": {"name": "get_weather"}}]))
    1
    """
    if len(tools) > MAX_TOOLS:
        raise ConfigError(f"more than {MAX_TOOLS} trusted tool definitions")
    keys: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise ConfigError(f"tools[{i}] is not a tool definition (a JSON object); got "
                              f"{type(tool).__name__}")
        texts = [t for t in walk({"tools": [tool]}).texts if t.role == "tools"]
        if not texts and tool.get("type") in BUILT_IN_TOOLS:
            continue
        if not texts:
            raise ConfigError(f"tools[{i}] holds no text the model reads (no name, no "
                              "description)")
        keys.add(tool_key(texts))
    return frozenset(keys)


def load_trusted_tools(path: str | os.PathLike[str]) -> frozenset[str]:
    """The keys of the tool definitions in the JSON file ``path``: a list of tool definitions,
    or a request body whose ``tools`` (or ``functions``) are the application's own;
    :class:`ConfigError` ``"FILE: ..."`` for a file that cannot be read or is not that."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_TOOLS_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read the trusted tools: {exc.strerror or exc}"
                          ) from None
    if len(raw) > MAX_TOOLS_BYTES:
        raise ConfigError(f"{name}: the trusted tools file is larger than {MAX_TOOLS_BYTES} "
                          "bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{name}: not valid JSON: {exc}") from None
    if isinstance(data, dict):
        found = [k for k in ("tools", "functions") if isinstance(data.get(k), list)]
        if not found:
            raise ConfigError(f"{name}: expected a JSON list of tool definitions, or an "
                              "object with 'tools' (a request body)")
        data = [t for k in found for t in data[k]]
    if not isinstance(data, list) or not data:
        raise ConfigError(f"{name}: expected a non-empty JSON list of tool definitions")
    try:
        return tool_keys(data)
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None
