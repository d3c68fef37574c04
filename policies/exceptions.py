"""The one exception root of utilityguard, and the map of every error class below it.

Every error the distribution raises on purpose derives from :class:`UtilityGuardError`, so a
caller can catch them all with one ``except``, and the ``utilityguard`` command line prints any
of them as one line (``utilityguard: error: ...``, exit code 2). An exception that does not
derive from it is a bug and is shown as one (a traceback).

::

    UtilityGuardError                         policies.exceptions (this module)
    ├── InvalidValueError (ValueError)        a value outside what is allowed; the message
    │   │                                     names the argument (policies, cost_models, ...)
    │   ├── ConfigError                       guard.exceptions: a Guard / decorator / command
    │   │                                     set up wrongly
    │   ├── ConfidenceError                   guard.exceptions: a confidence that cannot be used
    │   ├── RecordError                       guard.exceptions: a response record that cannot
    │   │                                     be read (file, row and field in the message)
    │   ├── CalibrationError                  guard.exceptions: too few / one-class records,
    │   │                                     an unfitted calibrator
    │   ├── ArtifactError                     cost_models.persistence: a missing, modified or
    │   │                                     foreign-version artifact
    │   ├── DatasetError                      cost_models.datasets: a dataset that cannot be
    │   │                                     read or mapped
    │   └── BenchError                        benchmarks.bench.data: bench inputs that cannot
    │                                         be used
    ├── CLIError                              guard.cli: a command-line usage error
    ├── EmbeddingsUnavailable                 cost_models.embeddings: wordllama not installed
    ├── JudgeError (RuntimeError)             cost_models.annotation.judges: no valid judgment
    ├── CollectError (RuntimeError)           benchmarks.collect: the upstream failed an item
    ├── AuditStoreError                       guard.proxy.audit.store: the audit database
    │   │                                     refused (not an audit log, rejected rows)
    │   └── AuditStoreUnavailable             the audit database cannot be reached now
    ├── UpstreamError                         cost_models.upstream (re-exported by
    │   │                                     guard.exceptions): the upstream model failed
    │   ├── UpstreamTimeout                   no reply in time (or past the total deadline)
    │   │   └── UpstreamPoolExhausted         guard.exceptions: no free pooled connection
    │   ├── UpstreamTooLarge                  guard.exceptions: a reply over the size limit
    │   ├── UpstreamUnavailable               connection refused / reset, DNS, TLS
    │   ├── UnusableReply                     a 2xx reply that cannot be used (retried)
    │   └── UpstreamStatusError               the upstream answered with an HTTP error status
    └── ClientRequestError                    guard.exceptions: the proxy rejects a request
        ├── InvalidRequestError               400: not JSON, not a chat completion, bad header
        ├── AuthenticationError               401: missing or wrong proxy API key
        ├── PermissionDeniedError             403: an override the client was not granted
        ├── ClientDisconnected                499: the client left; the upstream call stopped
        └── PayloadTooLargeError              413: the body exceeds the configured limit

The value errors also derive from :class:`ValueError`, so code that validates arguments the
standard way handles them.
"""

from __future__ import annotations

__all__ = ["InvalidValueError", "UtilityGuardError"]


class UtilityGuardError(Exception):
    """Base class of every error utilityguard raises on purpose."""


class InvalidValueError(UtilityGuardError, ValueError):
    """A value outside what is allowed; the message names the argument and what is allowed."""
