"""Every error class of utilityguard, in one module, under one root.

Every error the distribution raises on purpose derives from :class:`UtilityGuardError`, so a
caller can catch them all with one ``except``, and the ``utilityguard`` command line prints any
of them as one line (``utilityguard: error: ...``, exit code 2). An exception that does not
derive from it is a bug and is shown as one (a traceback).

The classes live here, in :mod:`utilityguard_base`, the package below every other, so that
every package can raise them without importing a layer above it (``policies`` stays decision
math); :mod:`guard.exceptions` re-exports the whole tree (the public spelling, as does
:mod:`policies.exceptions`, its older home). Foreign errors (httpx's) are translated into this
tree in exactly one place, :func:`utilityguard_base.upstream.map_exceptions`. This module
imports nothing: ``import guard.exceptions`` loads neither numpy nor pydantic.

::

    UtilityGuardError
    ├── InvalidValueError (ValueError)        a value outside what is allowed; the message
    │   │                                     names the argument (policies, cost_models, ...)
    │   ├── ConfigError                       a Guard / decorator / command set up wrongly
    │   ├── ConfidenceError                   a confidence that cannot be used
    │   ├── RecordError                       a response record that cannot be read (file,
    │   │                                     row and field in the message)
    │   ├── CalibrationError                  too few / one-class records, an unfitted
    │   │                                     calibrator
    │   ├── ArtifactError                     a missing, modified or foreign-version artifact
    │   ├── DatasetError                      a dataset that cannot be read or mapped
    │   ├── BenchError                        bench inputs that cannot be used
    │   ├── FeedbackError                     an audit log with no labelled decision to refit
    │   └── GraderReplyError                   the model grader's reply that is not two valid
    │                                         lines (retried as an unusable reply)
    ├── CLIError                              a command-line usage error
    ├── EmbeddingsUnavailable                 wordllama not installed
    ├── JudgeError (RuntimeError)             a consequence judge gave no valid judgment
    ├── CollectError (RuntimeError)           the upstream failed an item in ``collect``
    ├── ServerError (RuntimeError)            a benchmark's local server exited or never
    │                                         answered
    ├── AuditStoreError                       the audit database refused (not an audit log,
    │   │                                     rejected rows)
    │   └── AuditStoreUnavailable             the audit database cannot be reached now
    ├── UpstreamError                         the upstream model failed
    │   ├── UpstreamTimeout                   no reply in time (or past the total deadline)
    │   │   └── UpstreamPoolExhausted         no free pooled connection
    │   ├── UpstreamTooLarge                  a reply over the size limit
    │   ├── UpstreamUnavailable               connection refused / reset, DNS, TLS
    │   ├── UnusableReply                     a 2xx reply that cannot be used (retried)
    │   └── UpstreamStatusError               the upstream answered with an HTTP error status
    └── ClientRequestError                    the proxy rejects a request (OpenAI envelope)
        ├── InvalidRequestError               400: not JSON, not a chat completion, bad header
        ├── AuthenticationError               401: missing or wrong proxy API key
        ├── PermissionDeniedError             403: an override the client was not granted
        ├── UnknownRequestError               404: feedback for a request id never decided
        ├── PayloadTooLargeError              413: the body exceeds the configured limit
        └── ClientDisconnected                499: the client left; the upstream call stopped

The value errors also derive from :class:`ValueError`, so code that validates arguments the
standard way handles them.

>>> issubclass(UpstreamPoolExhausted, UpstreamTimeout), issubclass(GraderReplyError, ValueError)
(True, True)
>>> UnknownRequestError("no decision with request_id 'x'").status
404
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ArtifactError",
    "AuditStoreError",
    "AuditStoreUnavailable",
    "AuthenticationError",
    "BenchError",
    "CLIError",
    "CalibrationError",
    "ClientDisconnected",
    "ClientRequestError",
    "CollectError",
    "ConfidenceError",
    "ConfigError",
    "DatasetError",
    "EmbeddingsUnavailable",
    "FeedbackError",
    "GraderReplyError",
    "InvalidRequestError",
    "InvalidValueError",
    "JudgeError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RecordError",
    "ServerError",
    "UnknownRequestError",
    "UnusableReply",
    "UpstreamError",
    "UpstreamPoolExhausted",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamTooLarge",
    "UpstreamUnavailable",
    "UtilityGuardError",
]


class UtilityGuardError(Exception):
    """Base class of every error utilityguard raises on purpose."""


# ---------------------------------------------------------------------------------------------
# Values: arguments, configuration, records, artifacts, datasets


class InvalidValueError(UtilityGuardError, ValueError):
    """A value outside what is allowed; the message names the argument and what is allowed."""


class ConfigError(InvalidValueError):
    """The guard, the decorator or a command was configured with values it cannot use."""


class ConfidenceError(InvalidValueError):
    """A confidence signal is malformed (not a number, outside its range, unknown name)."""


class RecordError(InvalidValueError):
    """A response record that cannot be read; the message names the file, row and field."""


class CalibrationError(InvalidValueError):
    """A calibrator cannot be fitted or used (too few records, one class, not fitted)."""


class ArtifactError(InvalidValueError):
    """An artifact is missing, was modified, or was made with another scikit-learn."""


class DatasetError(InvalidValueError):
    """A dataset could not be read or mapped; the message says where and why."""


class BenchError(InvalidValueError):
    """Bench inputs that cannot be used; the message names the file and the record."""


class FeedbackError(InvalidValueError):
    """An audit log that is not one, or holds no labelled decision to refit from."""


class GraderReplyError(InvalidValueError):
    """The model grader's reply is not two valid lines."""


# ---------------------------------------------------------------------------------------------
# Commands, optional pieces, offline jobs


class CLIError(UtilityGuardError):
    """A user-facing error: printed as ``utilityguard: error: <message>``, exit code 2."""


class EmbeddingsUnavailable(UtilityGuardError):
    """``wordllama`` is not installed (the CLI prints it as one line)."""


class JudgeError(UtilityGuardError, RuntimeError):
    """A consequence judge could not produce a valid judgment for a tuple."""


class CollectError(UtilityGuardError, RuntimeError):
    """The upstream failed for an item after the retries, or the output file is unusable."""


class ServerError(UtilityGuardError, RuntimeError):
    """A server exited or did not answer in time; the message says which, with its log."""


# ---------------------------------------------------------------------------------------------
# The audit database


class AuditStoreError(UtilityGuardError):
    """The audit database refused an operation (not an audit log, bad rows, bad URL)."""


class AuditStoreUnavailable(AuditStoreError):
    """The audit database cannot be reached now; the same operation may succeed later."""


# ---------------------------------------------------------------------------------------------
# The upstream model endpoint (httpx errors are mapped here by utilityguard_base.upstream)


class UpstreamError(UtilityGuardError):
    """The upstream model endpoint failed; the proxy renders it as a 502/504 error.

    ``detail`` holds the upstream's own words (an error event's message), for the operator's
    log only: the proxy never sends them to a client (they may quote the answer or echo a
    credential)."""

    def __init__(self, *args: object, detail: str = "") -> None:
        super().__init__(*args)
        self.detail = detail


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the configured timeout (or the total deadline)."""


class UpstreamPoolExhausted(UpstreamTimeout):
    """No pooled connection to the upstream became free within the pool timeout."""


class UpstreamTooLarge(UpstreamError):
    """The upstream's reply is larger than the configured limit."""


class UpstreamUnavailable(UpstreamError):
    """The upstream could not be reached (connection refused or reset, DNS, TLS)."""


class UnusableReply(UpstreamError):
    """A 2xx reply the caller cannot use (e.g. a judge's reply it cannot parse); retried like a
    transient failure, within the same budget of attempts."""


class UpstreamStatusError(UpstreamError):
    """The upstream answered with an HTTP error status.

    Parameters
    ----------
    status : int
        The HTTP status code the upstream returned.
    body : str
        The (possibly truncated) response body, kept for the operator's log (its secrets
        masked); the proxy's client gets a fixed message instead (it may quote the answer or
        echo a credential).
    headers : mapping of str to str, optional
        Response headers worth passing on (``retry-after``).
    own : bool, default False
        ``body`` is the proxy's own envelope about the upstream (a configuration hint), not
        the upstream's words: the proxy passes it to the client.
    """

    def __init__(self, status: int, body: str = "", headers: Mapping[str, str] | None = None,
                 *, own: bool = False) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.own = own
        super().__init__(f"upstream answered HTTP {status}: {body[:200]}")


# ---------------------------------------------------------------------------------------------
# Requests the proxy rejects (rendered in the OpenAI error envelope by guard.proxy.errors)


class ClientRequestError(UtilityGuardError):
    """A request the proxy rejects; rendered as ``status`` in the OpenAI error envelope.

    Parameters
    ----------
    message : str
        What is wrong, for the client.
    param : str, optional
        The body field or header at fault.
    code : str, optional
        A machine-readable code (``"invalid_json"``, ``"invalid_header"``, ...).
    """

    status = 400
    error_type = "invalid_request_error"
    default_code = "invalid_request"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None
                 ) -> None:
        self.message = message
        self.param = param
        self.code = code or self.default_code
        super().__init__(message)


class InvalidRequestError(ClientRequestError):
    """HTTP 400: the body is not JSON, not a chat completion request, or a header is invalid."""


class AuthenticationError(ClientRequestError):
    """HTTP 401: proxy API keys are configured and the request carries none of them."""

    status = 401
    default_code = "invalid_api_key"


class PermissionDeniedError(ClientRequestError):
    """HTTP 403: the request uses a guard override the operator has not granted it."""

    status = 403
    error_type = "permission_error"
    default_code = "override_not_allowed"


class UnknownRequestError(ClientRequestError):
    """HTTP 404: no decision with this request id."""

    status = 404
    default_code = "unknown_request_id"


class PayloadTooLargeError(ClientRequestError):
    """HTTP 413: the request body is larger than the configured limit."""

    status = 413
    default_code = "request_too_large"


class ClientDisconnected(ClientRequestError):
    """HTTP 499 (nginx's "client closed request"): the client left before the reply; the
    upstream call was cancelled. Nobody reads the response; it is counted and logged."""

    status = 499
    default_code = "client_disconnected"
