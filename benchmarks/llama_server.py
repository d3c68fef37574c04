"""``python -m benchmarks.llama_server [llama_cpp.server flags]``: llama-cpp-python's
OpenAI-compatible server with fast top-k log-probabilities, for collecting responses.

llama-cpp-python 0.3.x builds each generated token's ``top_logprobs`` by sorting the whole
vocabulary in Python (``sorted(zip(logprobs_row, range(n_vocab)), reverse=True)``). With
Gemma 3's 262,144-entry vocabulary that sort costs ~0.3 s per token — ten times the model's own
time per token on two cores. This wrapper shadows ``zip`` in ``llama_cpp.llama`` (the module
global takes precedence over the builtin there) so that exactly that call — a 1-d numpy row
zipped with a ``range`` of its length — yields only the :data:`TOP` largest entries, already in
descending order; the server's own code then sorts and slices them as before. Replies are
unchanged for ``logprobs`` / ``top_logprobs`` up to :data:`TOP`; every other ``zip`` is the
builtin. Everything else is the stock ``python -m llama_cpp.server``.
"""

from __future__ import annotations

import builtins
import runpy
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

#: top-k entries kept per token (the server asks for at most ``logprobs`` of them)
TOP = 20
_zip = builtins.zip


def fast_zip(*args: Any, **kwargs: Any) -> Iterable[Any]:
    """``zip``, except for ``zip(row, range(len(row)))`` over a long 1-d numpy row: the
    :data:`TOP` ``(value, index)`` pairs of largest value, in descending order (ties by index).

    >>> row = np.random.default_rng(0).normal(size=1000)
    >>> stock = sorted(zip(row, range(1000)), reverse=True)[:5]  # what the server does
    >>> sorted(fast_zip(row, range(1000)), reverse=True)[:5] == stock
    True
    >>> len(fast_zip(row, range(1000))), list(fast_zip([1, 2], "ab"))
    (20, [(1, 'a'), (2, 'b')])
    """
    if (len(args) == 2 and not kwargs and isinstance(args[0], np.ndarray)
            and args[0].ndim == 1 and isinstance(args[1], range)
            and args[1] == range(args[0].shape[0]) and args[0].shape[0] > 4 * TOP):
        row = args[0]
        idx = np.argpartition(-row, TOP)[:TOP]
        idx = idx[np.lexsort((idx, -row[idx]))]
        return [(row[i], int(i)) for i in idx]
    return _zip(*args, **kwargs)


def main() -> None:
    import llama_cpp.llama as ll  # the e2e extra: pip install llama-cpp-python

    vars(ll)["zip"] = fast_zip  # the module global shadows the builtin inside llama_cpp.llama
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
