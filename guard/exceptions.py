"""The guard's errors: the whole tree of :mod:`utilityguard_base.exceptions`, whose docstring
draws it (every error class of the distribution lives there, so that each package can raise
them without importing a layer above it). Importing this module loads neither numpy nor
pydantic (``guard``'s ``__init__`` loads its names on first use).

Every ``UpstreamError`` and ``ClientRequestError`` reaching the proxy is rendered in the OpenAI
error envelope by :mod:`guard.proxy.errors`; httpx errors are translated into the tree in one
place, :func:`utilityguard_base.upstream.map_exceptions`.
"""

from __future__ import annotations

from utilityguard_base.exceptions import *  # noqa: F403 - the whole tree, re-exported
from utilityguard_base.exceptions import __all__ as __all__
