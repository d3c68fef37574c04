"""What a request may ask of the guard itself: the ``x-utilityguard-*`` override headers.

A client the operator grants overrides (``--allow-client-overrides``, or a key named by
``--override-api-key``) may set, per request, the cost ``L`` (``x-utilityguard-cost``), the
price of an unnecessary refusal ``C_R`` (``x-utilityguard-c-r``, the name of the response
header that reports it; the older ``x-utilityguard-refusal-cost`` is still read), the mode
(``x-utilityguard-mode``) and, unless the proxy reads ``p`` from it (``--confidence
caller``), a confidence (``x-utilityguard-confidence``). Any other client sending one gets
403 (:func:`check_overrides`); a bad value is a 400 naming the header (:func:`parse_overrides`,
each value checked by the guard's own validator, :mod:`guard.decision_config`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from guard.decision_config import check_c_r, check_cost, check_mode, check_probability
from guard.decision_records import Mode
from guard.exceptions import InvalidRequestError, PermissionDeniedError

T = TypeVar("T")
#: Request headers that override the guard per request.
COST_HEADER = "x-utilityguard-cost"
#: ``C_R``: the request header of an override and the response header of every decision.
C_R_HEADER = "x-utilityguard-c-r"
#: The older name of the ``C_R`` request header, still read.
REFUSAL_COST_HEADER = "x-utilityguard-refusal-cost"
MODE_HEADER = "x-utilityguard-mode"
CONFIDENCE_HEADER = "x-utilityguard-confidence"


@dataclass(frozen=True)
class Overrides:
    """Per-request overrides read from the ``x-utilityguard-*`` request headers."""

    cost: float | None = None
    c_r: float | None = None
    mode: Mode | None = None
    confidence: float | None = None


def _header(headers: Mapping[str, str], name: str, check: Callable[[Any, str], T],
            normalize: Callable[[str], str] = str) -> T | None:
    """The value of header ``name`` checked by the guard's own validator for that value
    (:mod:`guard.decision_config`); its error, which names the header, as a 400."""
    raw = headers.get(name)
    if raw is None:
        return None
    try:
        return check(normalize(raw), f"header {name}")
    except ValueError as exc:
        raise InvalidRequestError(str(exc), param=name, code="invalid_header") from None


def _token(raw: str) -> str:
    return raw.strip().lower()


def override_headers(headers: Mapping[str, str], *, caller_confidence: bool) -> list[str]:
    """The override headers a request sends that change what the guard enforces: mode, cost,
    ``C_R`` (either name), and the confidence header unless the proxy reads ``p`` from it
    (``--confidence caller``). Off by default: the operator grants them
    (``--allow-client-overrides`` or ``--override-api-key``).

    >>> override_headers({"x-utilityguard-mode": "shadow", "x-utilityguard-confidence": "1"},
    ...                  caller_confidence=True)
    ['x-utilityguard-mode']
    """
    names = [MODE_HEADER, COST_HEADER, C_R_HEADER, REFUSAL_COST_HEADER]
    if not caller_confidence:
        names.append(CONFIDENCE_HEADER)
    return [n for n in names if n in headers]


def check_overrides(headers: Mapping[str, str], *, allowed: bool, caller_confidence: bool
                    ) -> list[str]:
    """The override headers of a request (see :func:`override_headers`), or
    :class:`PermissionDeniedError` (403) when it sends one it is not granted."""
    used = override_headers(headers, caller_confidence=caller_confidence)
    if used and not allowed:
        raise PermissionDeniedError(
            f"this proxy does not let clients override the guard ({', '.join(used)}); the "
            "operator grants overrides with --allow-client-overrides or to named keys with "
            "--override-api-key", param=used[0])
    return used


def parse_overrides(headers: Mapping[str, str]) -> Overrides:
    """The guard overrides a request asks for; :class:`InvalidRequestError` for a bad value,
    or for ``C_R`` sent under both its names.

    Examples
    --------
    >>> parse_overrides({"x-utilityguard-cost": "8", "x-utilityguard-mode": "shadow"})
    Overrides(cost=8.0, c_r=None, mode='shadow', confidence=None)
    >>> parse_overrides({"x-utilityguard-refusal-cost": "5"}).c_r
    5.0
    """
    if C_R_HEADER in headers and REFUSAL_COST_HEADER in headers:
        raise InvalidRequestError(
            f"send C_R in one header: {C_R_HEADER} ({REFUSAL_COST_HEADER} is its older name)",
            param=REFUSAL_COST_HEADER, code="invalid_header")
    c_r_header = REFUSAL_COST_HEADER if REFUSAL_COST_HEADER in headers else C_R_HEADER
    return Overrides(
        cost=_header(headers, COST_HEADER, check_cost),
        c_r=_header(headers, c_r_header, check_c_r),
        mode=_header(headers, MODE_HEADER, check_mode, normalize=_token),
        confidence=_header(headers, CONFIDENCE_HEADER, check_probability),
    )
