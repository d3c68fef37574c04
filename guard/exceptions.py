"""Every error the guard raises, in one hierarchy.

::

    UtilityGuardError                    base of everything below
    ├── ConfigError (ValueError)         a Guard / decorator / CLI set up wrongly
    ├── ConfidenceError (ValueError)     a confidence value that cannot be used
    ├── CalibrationError (ValueError)    too few or one-class records, unfitted calibrator
    ├── UpstreamError                    the upstream model could not be reached or failed
    │   ├── UpstreamTimeout              no reply in time
    │   ├── UpstreamUnavailable          connection refused / reset, DNS, TLS
    │   └── UpstreamStatusError          the upstream answered with an HTTP error status
    └── ClientRequestError               the proxy rejects a client's request (HTTP 4xx)
        ├── InvalidRequestError          400: not JSON, not a chat completion, a bad header
        ├── AuthenticationError          401: missing or wrong proxy API key
        └── PayloadTooLargeError         413: the body exceeds the configured limit

The value errors also derive from :class:`ValueError`, so code that validates arguments the
standard way (and the CLI, which prints a ``ValueError`` as one line) handles them. Upstream
(httpx) errors are translated into the ``Upstream*`` family in exactly one place, the proxy's
upstream client; nothing else catches httpx exceptions.

Every ``UpstreamError`` and ``ClientRequestError`` reaching the proxy is rendered in the OpenAI
error envelope by :mod:`guard.proxy.errors`.

Artifact integrity failures (a modified or foreign-version calibrator file) are raised as
:class:`cost_models.persistence.ArtifactError`, shared with the cost models.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "AuthenticationError",
    "CalibrationError",
    "ClientRequestError",
    "ConfidenceError",
    "ConfigError",
    "InvalidRequestError",
    "PayloadTooLargeError",
    "UpstreamError",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "UtilityGuardError",
]


class UtilityGuardError(Exception):
    """Base class of every utilityguard runtime error."""


class ConfigError(UtilityGuardError, ValueError):
    """The guard, the decorator or a command was configured with values it cannot use."""


class ConfidenceError(UtilityGuardError, ValueError):
    """A confidence signal is malformed (not a number, outside its range, unknown name)."""


class CalibrationError(UtilityGuardError, ValueError):
    """A calibrator cannot be fitted or used (too few records, one class, not fitted)."""


class UpstreamError(UtilityGuardError):
    """The upstream model endpoint failed; the proxy renders it as a 502/504 error."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the configured timeout."""


class UpstreamUnavailable(UpstreamError):
    """The upstream could not be reached (connection refused or reset, DNS, TLS)."""


class UpstreamStatusError(UpstreamError):
    """The upstream answered with an HTTP error status.

    Parameters
    ----------
    status : int
        The HTTP status code the upstream returned.
    body : str
        The (possibly truncated) response body, kept for the error message; a 4xx body is
        passed to the proxy's client. Never logged (it may echo a credential).
    headers : mapping of str to str, optional
        Response headers worth passing on (``retry-after``).
    """

    def __init__(self, status: int, body: str = "", headers: Mapping[str, str] | None = None
                 ) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        super().__init__(f"upstream answered HTTP {status}: {body[:200]}")


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


class PayloadTooLargeError(ClientRequestError):
    """HTTP 413: the request body is larger than the configured limit."""

    status = 413
    default_code = "request_too_large"
