"""One bound on how long an awaited piece of work may take, for every deadline of the proxy.

:func:`bounded` awaits the work in the caller's own task (``asyncio.timeout`` on Python 3.11
and later: no task is made for it, which ``asyncio.wait_for`` does, a cost on every upstream
exchange); on Python 3.10 it is ``asyncio.wait_for``. Past the bound the work is cancelled and
:class:`TimeoutError` raised (``asyncio.TimeoutError``, the same class since 3.11).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def bounded(work: Awaitable[T], seconds: float | None) -> T:
    """``await work`` for at most ``seconds`` (``None``: without a bound).

    >>> asyncio.run(bounded(asyncio.sleep(0, result="done"), 1.0))
    'done'
    >>> try:
    ...     asyncio.run(bounded(asyncio.sleep(10), 0.01))
    ... except asyncio.TimeoutError:
    ...     print("timed out")
    timed out
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, seconds)  # pragma: no cover - Python 3.10
