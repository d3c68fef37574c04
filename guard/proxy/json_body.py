"""Encoding the JSON bodies the proxy sends: the one place it chooses how.

``json.dumps`` of a large body is the proxy's costliest step after pricing: a 175 kB
conversation took about 9 ms to encode with the standard library on the project's machine,
0.4 ms with ``orjson`` (docs/performance.md). With the ``fast-json`` extra installed
(``pip install 'utilityguard[fast-json]'``) :func:`dumps` encodes with ``orjson`` whenever the
result is the same JSON as the standard library's. ``orjson`` writes ``null`` for NaN and
infinities, which ``json`` writes as ``NaN`` / ``Infinity``; most chat completions hold a
``null`` of their own (``"refusal": null``, ``"bytes": null``), so an output holding ``null``
is checked rather than encoded again: it is decoded with ``orjson`` and compared with ``obj``
(``==``, in C). A NaN or infinity turned into ``null`` decodes as ``None``, which no float
equals, so such an output goes to ``json``. Anything ``orjson`` refuses (integers beyond 64
bits, lone surrogates, non-string keys, nesting deeper than 254) goes to ``json`` too. The
bytes may differ (compact separators, UTF-8 instead of ``\\u`` escapes); the JSON value
never does for the types the proxy encodes, those ``json.loads`` makes (dict, list, str, int,
float, bool, None; ``tests/guard/proxy/test_json_body.py`` checks it on hostile values).
Parsing stays with the standard library (``orjson.loads`` turns integers beyond 64 bits into
floats): here ``orjson.loads`` only reads back what ``orjson`` itself wrote, whose integers
fit 64 bits.
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
            # no null: no NaN / infinity was turned into one; with one, a NaN or infinity
            # would decode as None, which compares unequal to every float
            if b"null" not in out or _orjson.loads(out) == obj:
                return out
        except (TypeError, ValueError):  # orjson's encode and decode errors subclass these
            pass
    return json.dumps(obj).encode()
