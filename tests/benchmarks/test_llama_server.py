"""The collection server's fast top-k: the same top logprobs as llama-cpp-python's own sort."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.llama_server import TOP, fast_zip


@pytest.mark.parametrize("k", [1, 5, TOP])
def test_the_servers_sort_and_slice_gives_the_stock_result(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(20):
        row = rng.normal(size=5000).astype(np.float32)
        row[rng.integers(0, 5000, size=3)] = row.max()  # ties at the top
        stock = sorted(zip(row, range(row.shape[0]), strict=True), reverse=True)[:k]
        fast = sorted(fast_zip(row, range(row.shape[0])), reverse=True)[:k]
        assert [(float(v), i) for v, i in fast] == [(float(v), i) for v, i in stock]


def test_every_other_zip_is_the_builtin() -> None:
    row = np.arange(100.0)
    assert list(fast_zip(row, range(50, 150))) == list(zip(row, range(50, 150), strict=True))
    assert list(fast_zip(np.arange(10.0), range(10))) == list(zip(np.arange(10.0), range(10),
                                                                  strict=True))
    assert list(fast_zip("ab", [1, 2])) == [("a", 1), ("b", 2)]
    assert len(list(fast_zip(row.reshape(10, 10), range(10)))) == 10  # 2-d: the builtin
