"""The proxy's JSON encoder: orjson when installed, always the standard library's JSON value.

Every value is checked against ``json.dumps`` (an independent encoder): decoded, the two
outputs must be equal — including what ``orjson`` cannot write as ``json`` does (NaN,
infinities, integers beyond 64 bits, lone surrogates), which must come out as ``json``
writes it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from guard.proxy import json_body

VALUES = [
    pytest.param({"model": "m", "messages": [{"role": "user", "content": "é ü 中 🙂"}]},
                 id="unicode"),
    pytest.param({"a": None, "b": [1, 2.5, -0.0, 1e-05, 1e300]}, id="null-and-floats"),
    pytest.param({"n": 2**70, "m": -(2**64)}, id="big-ints"),
    pytest.param({"s": "\ud800 x"}, id="lone-surrogate"),
    pytest.param({"p": float("nan"), "q": float("inf"), "r": -math.inf}, id="non-finite"),
    pytest.param({"deep": [[[[{"k": "v"}]]]], "t": True, "f": False}, id="nested"),
    pytest.param({"content": "x" * 200_000}, id="large"),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b and type(a) is type(b))


@pytest.mark.parametrize("value", VALUES)
def test_the_json_value_is_the_standard_librarys(value: Any) -> None:
    want = json.loads(json.dumps(value))
    assert _same(json.loads(json_body.dumps(value)), want)


def test_non_finite_numbers_are_written_as_json_writes_them() -> None:
    assert json_body.dumps({"p": float("nan")}) == b'{"p": NaN}'


def test_orjson_encodes_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    orjson = pytest.importorskip("orjson")
    body = {"messages": [{"role": "user", "content": "é"}]}
    assert json_body.fast()
    assert json_body.dumps(body) == orjson.dumps(body)  # compact, UTF-8: orjson's bytes
    monkeypatch.setattr(json_body, "_orjson", None)  # not installed: the standard library
    assert not json_body.fast()
    assert json_body.dumps(body) == json.dumps(body).encode()
