"""``--workers N``: each worker dies with the process that started it.

uvicorn's supervisor stops its workers when it is asked to, but a supervisor killed with
SIGKILL cannot ask: its workers would keep serving and hold the port (a restart then fails
with "address in use"). :func:`die_with_parent` makes the kernel send the worker SIGTERM
when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)`` through ctypes); elsewhere a daemon
thread checks the parent once a second and sends the worker SIGTERM itself. Either way the
worker shuts down as on a normal stop.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1
#: How often the fallback thread checks the parent, in seconds.
POLL_S = 1.0


def _prctl_pdeathsig() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


def die_with_parent(parent: int) -> str:
    """Arrange for SIGTERM when process ``parent`` (this one's parent) dies; how
    (``"prctl"`` or ``"thread"``)."""
    how = "prctl" if _prctl_pdeathsig() else "thread"
    if how == "thread":
        threading.Thread(target=_watch, args=(parent,), daemon=True,
                         name="utilityguard-parent-watch").start()
    if os.getppid() != parent:  # it died before the arrangement: stop now
        os.kill(os.getpid(), signal.SIGTERM)
    return how


def worker_app(settings: Any, parent: int) -> Any:
    """The app of one ``--workers N`` worker: dies with ``parent``, then
    :func:`guard.proxy.create_app`."""
    from guard.proxy import create_app

    log.debug("worker %d dies with its parent %d (%s)", os.getpid(), parent,
              die_with_parent(parent))
    return create_app(settings)
