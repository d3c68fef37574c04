"""The guard's errors: configuration, confidence, calibration, upstream and client-request
failures. All derive from :class:`policies.exceptions.UtilityGuardError`, the one root of the
distribution, whose module docstring draws the whole hierarchy.

Upstream (httpx) errors are translated into the ``Upstream*`` family in exactly one place, the
proxy's upstream client; nothing else catches httpx exceptions. Every ``UpstreamError`` and
``ClientRequestError`` reaching the proxy is rendered in the OpenAI error envelope by
:mod:`guard.proxy.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping

from policies.exceptions import InvalidValueError, UtilityGuardError

__all__ = [
    "AuthenticationError",
    "CalibrationError",
    "ClientDisconnected",
    "ClientRequestError",
    "ConfidenceError",
    "ConfigError",
    "InvalidRequestError",
    "InvalidValueError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "UpstreamError",
    "UpstreamPoolExhausted",
    "UpstreamStatusError",
    "UpstreamTimeout",
    "UpstreamTooLarge",
    "UpstreamUnavailable",
    "UtilityGuardError",
]


class ConfigError(InvalidValueError):
    """The guard, the decorator or a command was configured with values it cannot use."""


class ConfidenceError(InvalidValueError):
    """A confidence signal is malformed (not a number, outside its range, unknown name)."""


class CalibrationError(InvalidValueError):
    """A calibrator cannot be fitted or used (too few records, one class, not fitted)."""


class UpstreamError(UtilityGuardError):
    """The upstream model endpoint failed; the proxy renders it as a 502/504 error."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer within the configured timeout (or the total deadline)."""


class UpstreamPoolExhausted(UpstreamTimeout):
    """No pooled connection to the upstream became free within the pool timeout."""


class UpstreamTooLarge(UpstreamError):
    """The upstream's reply is larger than the configured limit."""


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


class ClientDisconnected(ClientRequestError):
    """HTTP 499 (nginx's "client closed request"): the client left before the reply; the
    upstream call was cancelled. Nobody reads the response; it is counted and logged."""

    status = 499
    default_code = "client_disconnected"


class PermissionDeniedError(ClientRequestError):
    """HTTP 403: the request uses a guard override the operator has not granted it."""

    status = 403
    error_type = "permission_error"
    default_code = "override_not_allowed"


class PayloadTooLargeError(ClientRequestError):
    """HTTP 413: the request body is larger than the configured limit."""

    status = 413
    default_code = "request_too_large"
