"""The OpenAI-compatible guard proxy (``utilityguard serve``).

``create_app(settings)`` returns a FastAPI app that forwards ``/v1/chat/completions`` to an
upstream, decides per reply whether to deliver it or a refusal, and reports the decision in
``x-utilityguard-*`` response headers, Prometheus metrics and a SQLite audit log.

Modules: :mod:`~guard.proxy.app` (the app and its lifespan), :mod:`~guard.proxy.chat` (the
chat completion flow), :mod:`~guard.proxy.parse` (reading requests),
:mod:`~guard.proxy.streaming` (SSE), :mod:`~guard.proxy.upstream` (the upstream client),
:mod:`~guard.proxy.errors` (the OpenAI error envelope), :mod:`~guard.proxy.audit` (the audit
log), :mod:`~guard.proxy.metrics` (Prometheus text).

The names below load on first use, so importing a light submodule (``guard.proxy.feedback``,
``guard.proxy.audit``) does not load FastAPI, Starlette or prometheus_client.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from guard.proxy.app import Proxy, build_guard, create_app
    from guard.proxy.audit import AuditWriter, export_jsonl
    from guard.proxy.metrics import ProxyMetrics

__all__ = ["AuditWriter", "Proxy", "ProxyMetrics", "build_guard", "create_app", "export_jsonl"]

_HOMES = {
    "AuditWriter": "guard.proxy.audit",
    "Proxy": "guard.proxy.app",
    "ProxyMetrics": "guard.proxy.metrics",
    "build_guard": "guard.proxy.app",
    "create_app": "guard.proxy.app",
    "export_jsonl": "guard.proxy.audit",
}


def __getattr__(name: str) -> _Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'guard.proxy' has no attribute {name!r}")
    value = getattr(_importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
