"""The gateway's routes: ``utilityguard serve --config FILE``, one route per model.

A route maps a request's ``model`` to an upstream, the key sent to it, a policy, ``C_R``,
a mode, a confidence signal and limits: calibration is per model. The file is YAML,
validated by :class:`GatewayConfig`; a bad file is one :class:`~guard.exceptions.ConfigError`
line naming the field (``FILE: routes[1].c_r: ...``).

.. code-block:: yaml

   routes:
     - model: small-model            # an exact id, or a glob such as "gpt-4o*"
       upstream: http://127.0.0.1:8080/v1
       api_key_env: SMALL_KEY        # the upstream key, read from the environment
       policy: smollm2               # a shipped name or a folder
       c_r: 1
     - model: "big-*"
       upstream: https://example.invalid/v1
       c_r: 8

A request's model picks the route (:class:`RouteTable`): exact ids first, then globs in
file order; no match is a 404. What a route leaves out is the process's setting (its flag or
environment variable), except the upstream key: a route sends the key named by its own
``api_key_env`` or none (never another route's, or ``--upstream-api-key``, to a host it was
not meant for). The flags alone (``--upstream`` ...) are a one-route config matching every
model (:data:`ANY_MODEL`).

Examples
--------
>>> table = RouteTable([("gpt-4o*", "glob"), ("gpt-4o-mini", "exact"), ("*", "rest")])
>>> table.match("gpt-4o-mini"), table.match("gpt-4o-2024"), table.match("other")
('exact', 'glob', 'rest')
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from guard.decision_config import check_c_r, check_mode
from guard.decision_records import Mode
from guard.exceptions import ClientRequestError, ConfigError
from guard.settings import ConfidenceKind, Settings
from utilityguard_base.bounds import problem

T = TypeVar("T")
#: The model pattern of the one route the flags describe: every model.
ANY_MODEL = "*"
#: The largest config file read (a config is a few kilobytes).
MAX_CONFIG_BYTES = 1 << 20
_GLOB_CHARS = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` is a glob (``*``, ``?`` or ``[``) rather than an exact model id."""
    return not _GLOB_CHARS.isdisjoint(pattern)


class RouteConfig(BaseModel):
    """One route of the file: which models, where they go, and how they are guarded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, max_length=256,
                       description="an exact model id, or a glob such as 'gpt-4o*'")
    upstream: str = Field(description="the upstream's base URL, with its /v1")
    api_key_env: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="the environment variable holding the key sent upstream (default: none)")
    policy: str | None = Field(default=None, description="a shipped policy name or a folder")
    c_r: float | None = None
    mode: Mode | None = None
    confidence: ConfidenceKind | None = None
    cost_model: Path | None = None
    calibrator: Path | None = None
    no_confidence: str | None = None
    connect_timeout: float | None = Field(default=None, gt=0)
    read_timeout: float | None = Field(default=None, gt=0)
    request_timeout: float | None = Field(default=None, gt=0)
    max_connections: int | None = Field(default=None, ge=1)
    max_keepalive: int | None = Field(default=None, ge=0)
    max_upstream_bytes: int | None = Field(default=None, ge=1)
    #: this route's follow-up budget (serve --refusal-budget, per route; docs/budget.md)
    refusal_budget: float | None = Field(default=None, gt=0, lt=1)
    c_r_min: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    c_r_max: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    #: how this route prices a request (serve --trusted-prompts, ...; docs/security.md): the
    #: system prompts its application sends itself, and its ceilings and caps
    trusted_prompts: list[str] | None = None
    #: a JSON file of the tool definitions this route's application sends (serve
    #: --trusted-tools; a relative path is read from the process's working directory)
    trusted_tools: Path | None = None
    unreadable_price: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    upstream_price: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_segments: int | None = Field(default=None, ge=1)
    max_text_chars: int | None = Field(default=None, ge=1)

    @field_validator("upstream")
    @classmethod
    def _check_upstream(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http:// or https:// URL; got {value!r}")
        return value

    @field_validator("c_r", mode="before")
    @classmethod
    def _check_c_r(cls, value: Any) -> float | None:
        return None if value is None else check_c_r(value)

    @field_validator("mode", mode="before")
    @classmethod
    def _check_mode(cls, value: Any) -> Mode | None:
        return None if value is None else check_mode(value)

    def upstream_key(self) -> SecretStr | None:
        """The key from ``api_key_env`` (:class:`ConfigError` when it is not set)."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ConfigError(f"api_key_env: the environment variable {self.api_key_env} "
                              "is not set")
        return SecretStr(key)


class GatewayConfig(BaseModel):
    """The whole file: its routes (at least one; no model pattern twice)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    routes: list[RouteConfig] = Field(min_length=1, max_length=1000)

    @field_validator("routes")
    @classmethod
    def _distinct(cls, routes: list[RouteConfig]) -> list[RouteConfig]:
        seen: set[str] = set()
        for route in routes:
            if route.model in seen:
                raise ValueError(f"model {route.model!r} is routed twice")
            seen.add(route.model)
        return routes


def _where(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "config"


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """The gateway config in the YAML file ``path`` (safe-loaded: data, nothing executes);
    :class:`ConfigError` ``"FILE: routes[1].c_r: ..."`` for a bad one."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{name}: cannot read the config: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{name}: the config is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = " ".join(str(exc).split())
        raise ConfigError(f"{name}: not valid YAML: {first}") from None
    try:
        return GatewayConfig.model_validate(data if data is not None else {})
    except ValidationError as exc:
        e = exc.errors()[0]
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        msg = problem(e)
        raise ConfigError(f"{name}: {_where(e['loc'])}: {msg}{more}") from None


def route_settings(base: Settings, route: RouteConfig) -> Settings:
    """The settings of one route: ``base`` (the process's flags and environment) with what
    the route sets; the upstream key is the route's own (``api_key_env``) or none."""
    data: dict[str, Any] = {k: getattr(base, k) for k in base.model_fields_set}
    data.update(route.model_dump(exclude={"model", "api_key_env"}, exclude_none=True))
    data["upstream_api_key"] = route.upstream_key()
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        msg = problem(e)
        raise ConfigError(f"{_where(e['loc'])}: {msg}") from None


class RouteTable(Generic[T]):
    """Which route serves a model: exact ids first, then globs in the given order."""

    def __init__(self, routes: Sequence[tuple[str, T]]) -> None:
        self._exact = {p: r for p, r in routes if not is_glob(p)}
        self._globs = [r for p, r in routes if is_glob(p)]
        # every glob in one regex: alternatives are tried in order, the first match wins
        self._glob_re = re.compile("|".join(
            f"(?P<g{i}>{fnmatch.translate(p)})"
            for i, p in enumerate(p for p, _ in routes if is_glob(p)))) if self._globs else None
        self.patterns = tuple(p for p, _ in routes)
        self.routes = tuple(r for _, r in routes)

    def match(self, model: str) -> T | None:
        """The route of ``model``, or ``None`` when no route serves it."""
        found = self._exact.get(model)
        if found is not None or self._glob_re is None:
            return found
        m = self._glob_re.match(model)
        return None if m is None or m.lastgroup is None else self._globs[int(m.lastgroup[1:])]

    def models(self) -> list[str]:
        """The model ids and patterns served, in file order (what ``/v1/models`` lists)."""
        return list(self.patterns)


class UnknownModelError(ClientRequestError):
    """HTTP 404: no route serves the request's model."""

    status = 404
    default_code = "model_not_found"
