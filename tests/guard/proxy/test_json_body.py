"""The proxy's JSON encoder: orjson when installed, always the standard library's JSON value.

Every value is checked against ``json.dumps`` (an independent encoder): decoded, the two
outputs must be equal — including what ``orjson`` cannot write as ``json`` does (NaN,
infinities, integers beyond 64 bits, lone surrogates), which must come out as ``json``
writes it. Most chat completions hold a ``null`` (``"refusal": null``); those must take the
fast path, and a ``null`` next to a NaN or infinity must not hide it.
"""

from __future__ import annotations

import json
import math
import random
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
    pytest.param({"a": None, "deep": [[[{"p": float("nan")}]]]}, id="null-beside-nan"),
    pytest.param([None, {"q": [1, -math.inf]}], id="null-beside-infinity"),
    pytest.param({"refusal": None, "n": 2**64, "s": "\udfff"}, id="null-big-int-surrogate"),
    pytest.param({"a": None, "b": [2**64 - 1, -(2**63), 2**63, -0.0, 5e-324]}, id="null-edges"),
    pytest.param({"a": None, "t": "🙂 𝄞 \U0010ffff null NaN"}, id="null-non-bmp"),
    pytest.param(json.loads('{"k": 1, "k": null, "k": NaN}'), id="duplicate-keys-last-nan"),
    pytest.param(json.loads('{"k": NaN, "k": null}'), id="duplicate-keys-last-null"),
    pytest.param(json.loads('[1e999, null, -1e999]'), id="overflowing-literals"),
    pytest.param(json.loads("[" * 250 + "null" + "]" * 250), id="nested-250"),
    pytest.param(json.loads("[" * 300 + "null, NaN" + "]" * 300), id="nested-300-nan"),
    pytest.param({"x": None, 1: "int key"}, id="null-non-string-key"),
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


def test_a_completion_holding_null_takes_the_fast_path() -> None:
    orjson = pytest.importorskip("orjson")
    body = {"id": "c", "choices": [{"message": {"content": "Paris", "refusal": None},
                                    "logprobs": {"content": [{"token": "P", "logprob": -0.1,
                                                              "bytes": None}]}}]}
    assert json_body.dumps(body) == orjson.dumps(body)


def test_a_null_beside_a_non_finite_number_is_written_by_the_standard_library() -> None:
    value = {"refusal": None, "logprob": float("-inf"), "p": [None, float("nan")]}
    assert json_body.dumps(value) == json.dumps(value).encode()


def _hostile(rng: random.Random, depth: int) -> Any:
    leaves = [None, None, True, False, 0, -1, 2**63 - 1, 2**64, -(2**70), 0.1, -0.0, 1e308,
              float("nan"), float("inf"), -math.inf, "", "null", "é", "🙂", "\ud83d", "\x00"]
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(leaves)
    if rng.random() < 0.5:
        return [_hostile(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["a", "b", "null", "🙂", ""]): _hostile(rng, depth - 1)
            for _ in range(rng.randrange(4))}


def test_random_hostile_values_keep_the_standard_librarys_json_value() -> None:
    """Seeded random trees of nulls, NaN, infinities, integers beyond 64 bits, lone
    surrogates and non-BMP text: the JSON value is always the standard library's, and a tree
    holding a non-finite number is written byte for byte as ``json`` writes it."""
    rng = random.Random(26)
    fast_bytes = 0
    for _ in range(2000):
        value = _hostile(rng, 5)
        want = json.dumps(value).encode()
        got = json_body.dumps(value)
        assert _same(json.loads(got), json.loads(want))
        if any(t in want for t in (b"NaN", b"Infinity")):
            assert got == want
        fast_bytes += got != want
    assert fast_bytes > 0 or not json_body.fast()  # the fast path was taken on some trees
