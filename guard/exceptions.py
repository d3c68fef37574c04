"""The guard's errors: configuration, confidence, calibration, upstream and client-request
failures. All derive from :class:`policies.exceptions.UtilityGuardError`, the one root of the
distribution, whose module docstring draws the whole hierarchy.

The ``Upstream*`` family is defined with the one OpenAI-compatible chat client,
:mod:`cost_models.upstream` (the consequence judges use it too, and ``cost_models`` may not
import ``guard``), and re-exported here: httpx errors are translated into it in exactly that one
place. Every ``UpstreamError`` and
``ClientRequestError`` reaching the proxy is rendered in the OpenAI error envelope by
:mod:`guard.proxy.errors`.
"""

from __future__ import annotations

from cost_models.upstream import (
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
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
    "RecordError",
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


class RecordError(InvalidValueError):
    """A response record that cannot be read; the message names the file, row and field."""


class ConfidenceError(InvalidValueError):
    """A confidence signal is malformed (not a number, outside its range, unknown name)."""


class CalibrationError(InvalidValueError):
    """A calibrator cannot be fitted or used (too few records, one class, not fitted)."""


class UpstreamPoolExhausted(UpstreamTimeout):
    """No pooled connection to the upstream became free within the pool timeout."""


class UpstreamTooLarge(UpstreamError):
    """The upstream's reply is larger than the configured limit."""


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
