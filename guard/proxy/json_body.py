"""Encoding the JSON bodies the proxy sends: the one place it chooses how.

``json.dumps`` of a large body is the proxy's costliest step after pricing: a 175 kB
conversation took about 9 ms to encode with the standard library on the project's machine,
0.4 ms with ``orjson`` (docs/performance.md). With the ``fast-json`` extra installed
(``pip install 'utilityguard[fast-json]'``) :func:`dumps` encodes with ``orjson`` whenever the
result is the same JSON as the standard library's: ``orjson`` writes ``null`` for NaN and
infinities, which ``json`` writes as ``NaN`` / ``Infinity``, so an output that contains
``null`` anywhere is encoded again with ``json``; anything ``orjson`` refuses (integers beyond
64 bits, lone surrogates, non-string keys) goes to ``json`` too. The bytes may differ
(compact separators, UTF-8 instead of ``\\u`` escapes); the JSON value never does. Parsing
stays with the standard library (``orjson.loads`` turns integers beyond 64 bits into floats).
"""

from __future__ import annotations

import json
from typing import Any

_orjson: Any
try:  # the fast-json extra
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on what is installed
    _orjson = None

__all__ = ["dumps", "fast"]


def fast() -> bool:
    """Whether ``orjson`` is available (the ``fast-json`` extra)."""
    return _orjson is not None


def dumps(obj: Any) -> bytes:
    """``obj`` as JSON bytes, the same JSON value as ``json.dumps(obj).encode()``.

    >>> import json
    >>> json.loads(dumps({"a": [1, 2.5, "é"]}))
    {'a': [1, 2.5, 'é']}
    >>> dumps({"p": float("nan")})  # NaN is not JSON: written as the standard library does
    b'{"p": NaN}'
    """
    if _orjson is not None:
        try:
            out: bytes = _orjson.dumps(obj)
        except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            if b"null" not in out:  # no NaN / infinity was turned into null
                return out
    return json.dumps(obj).encode()
