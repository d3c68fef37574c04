"""The OpenAI-compatible guard proxy (``utilityguard serve``).

``create_app(settings)`` returns a FastAPI app that forwards ``/v1/chat/completions`` to an
upstream, decides per reply whether to deliver it or a refusal, and reports the decision in
``x-utilityguard-*`` response headers, Prometheus metrics and a SQLite audit log.

Modules: :mod:`~guard.proxy.app` (the app and its lifespan), :mod:`~guard.proxy.chat` (the
chat completion flow), :mod:`~guard.proxy.request` (reading requests),
:mod:`~guard.proxy.streaming` (SSE), :mod:`~guard.proxy.upstream` (the upstream client, where
httpx errors are translated), :mod:`~guard.proxy.errors` (the OpenAI error envelope),
:mod:`~guard.proxy.audit` (the audit log), :mod:`~guard.proxy.metrics` (Prometheus text).
"""

from guard.proxy.app import Proxy, build_guard, create_app
from guard.proxy.audit import AuditWriter, export_jsonl
from guard.proxy.metrics import ProxyMetrics

__all__ = ["AuditWriter", "Proxy", "ProxyMetrics", "build_guard", "create_app", "export_jsonl"]
