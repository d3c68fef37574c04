"""Every error the guard raises, in one hierarchy.

::

    UtilityGuardError                    base of everything below
    ├── ConfigError (ValueError)         a Guard / decorator / CLI set up wrongly
    ├── ConfidenceError (ValueError)     a confidence value that cannot be used
    ├── CalibrationError (ValueError)    too few or one-class records, unfitted calibrator
    └── UpstreamError                    the upstream model could not be reached or failed
        ├── UpstreamTimeout              no reply in time
        ├── UpstreamUnavailable          connection refused / reset, DNS, TLS
        └── UpstreamStatusError          the upstream answered with an HTTP error status

The value errors also derive from :class:`ValueError`, so code that validates arguments the
standard way (and the CLI, which prints a ``ValueError`` as one line) handles them. Upstream
(httpx) errors are translated into the ``Upstream*`` family in exactly one place, the proxy's
upstream client; nothing else catches httpx exceptions.

Artifact integrity failures (a modified or foreign-version calibrator file) are raised as
:class:`cost_models.persistence.ArtifactError`, shared with the cost models.
"""

from __future__ import annotations

__all__ = [
    "CalibrationError",
    "ConfidenceError",
    "ConfigError",
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
        The (possibly truncated) response body, kept for the error message and the log.
    """

    def __init__(self, status: int, body: str = "") -> None:
        self.status = status
        self.body = body
        super().__init__(f"upstream answered HTTP {status}: {body[:200]}")
