"""The OpenAI-compatible guard proxy (``utilityguard serve``).

``create_app(settings)`` returns a FastAPI app that forwards ``/v1/chat/completions`` to an
upstream, decides per reply whether to deliver it or a refusal, and reports the decision in
``x-utilityguard-*`` response headers, Prometheus metrics and a SQLite audit log.

Modules, by role (docs/architecture.md draws them):

* the app: :mod:`~guard.proxy.app` (mounting the endpoints), :mod:`~guard.proxy.build`
  (each route's guard), :mod:`~guard.proxy.state` (:class:`~guard.proxy.state.Proxy`, the
  lifespan), :mod:`~guard.proxy.reload` (admin reload, SIGHUP), :mod:`~guard.proxy.endpoints`
  (the endpoints that are not guarded);
* the request pipeline (:mod:`~guard.proxy.pipeline`): :mod:`~guard.proxy.parse`, the price
  stage, :mod:`~guard.proxy.forward`, :mod:`~guard.proxy.decide`, :mod:`~guard.proxy.deliver`,
  the early stream :mod:`~guard.proxy.early`, one adapter per API (:mod:`~guard.proxy.chat`,
  :mod:`~guard.proxy.responses`) over :mod:`~guard.proxy.exchange`; what the guard adds to the
  upstream request (:mod:`~guard.proxy.plan`, :mod:`~guard.proxy.signal_calls`), the pooled
  upstream client (:mod:`~guard.proxy.pool`), the wire formats (:mod:`~guard.proxy.streaming`,
  :mod:`~guard.proxy.responses_stream`, :mod:`~guard.proxy.json_body`);
* around it: :mod:`~guard.proxy.routes` and :mod:`~guard.proxy.gateway` (``--config``),
  :mod:`~guard.proxy.errors` (the OpenAI error envelope), :mod:`~guard.proxy.redact`,
  :mod:`~guard.proxy.audit` (the audit log), :mod:`~guard.proxy.metrics` (Prometheus text).

The names below load on first use, so importing a light submodule (``guard.proxy.feedback``,
``guard.proxy.audit``) does not load FastAPI, Starlette or prometheus_client.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

if _TYPE_CHECKING:
    from guard.proxy.app import create_app
    from guard.proxy.audit import AuditWriter, export_jsonl
    from guard.proxy.build import build_guard
    from guard.proxy.metrics import ProxyMetrics
    from guard.proxy.state import Proxy

__all__ = ["AuditWriter", "Proxy", "ProxyMetrics", "build_guard", "create_app", "export_jsonl"]

_HOMES = {
    "AuditWriter": "guard.proxy.audit",
    "Proxy": "guard.proxy.state",
    "ProxyMetrics": "guard.proxy.metrics",
    "build_guard": "guard.proxy.build",
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
