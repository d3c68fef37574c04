"""The proxy's settings: one pydantic-settings class, the only reader of the environment.

Every field can be set, in increasing priority, by its default, a ``.env`` file in the working
directory, an environment variable ``UTILITYGUARD_<FIELD>`` (``UTILITYGUARD_UPSTREAM``,
``UTILITYGUARD_C_R``, ``UTILITYGUARD_AUDIT_PATH``, ...) and keyword arguments (what
``utilityguard serve`` does with its flags). A few fields also accept another spelling:
``UTILITYGUARD_API_KEY`` / ``UTILITYGUARD_CLIENT_API_KEYS`` for ``api_keys``,
``UTILITYGUARD_MAX_BODY_SIZE`` / ``UTILITYGUARD_MAX_REQUEST_BYTES`` for ``max_body_bytes``,
``UTILITYGUARD_TIMEOUT`` / ``UTILITYGUARD_UPSTREAM_TIMEOUT`` for ``read_timeout``.

Secrets (``upstream_api_key``, ``api_keys``) are :class:`pydantic.SecretStr`: their ``repr``
and ``str`` are masked, so a logged or printed ``Settings`` never shows them. ``api_keys`` is
read from a JSON list (``'["k1", "k2"]'``) or a comma-separated string (``k1,k2``).

Examples
--------
>>> s = Settings(_env_file=None, upstream="http://127.0.0.1:8080/v1/", api_keys="k1, k2")
>>> s.upstream, s.port, s.confidence, s.mode, len(s.api_keys)
('http://127.0.0.1:8080/v1', 8787, 'logprobs', 'enforce', 2)
>>> s.api_keys[0]
SecretStr('**********')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from guard.refusal import DEFAULT_REFUSAL_TEXT

ConfidenceKind = Literal["logprobs", "verbal", "consistency", "caller"]
#: The confidence sources ``--confidence`` accepts.
CONFIDENCE_KINDS: tuple[str, ...] = ("logprobs", "verbal", "consistency", "caller")

_Prob = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
PREFIX = "UTILITYGUARD_"


def _env(*names: str) -> AliasChoices:
    """Environment names of a field: ``UTILITYGUARD_<NAME>`` for each of ``names`` (the
    first is the field's own; the others are accepted spellings)."""
    return AliasChoices(*(PREFIX + n.upper() for n in names))


class Settings(BaseSettings):
    """Configuration of the guard proxy (``utilityguard serve``).

    Attributes
    ----------
    upstream : str or None
        Base URL of the OpenAI-compatible upstream, including its ``/v1``
        (``http://127.0.0.1:8080/v1``); requests go to ``{upstream}/chat/completions``.
        Required to serve.
    upstream_api_key : SecretStr or None
        Sent upstream as ``Authorization: Bearer ...`` instead of the client's header.
    host, port : str, int
        Where the proxy listens (default ``127.0.0.1:8787``).
    confidence : {"logprobs", "verbal", "consistency", "caller"}
        Where ``p`` comes from: token logprobs, a stated confidence, agreement of sampled
        replies, or the request header ``x-utilityguard-confidence``.
    c_r : float
        Price of an unnecessary refusal ``C_R >= 0`` (default 2).
    mode : {"enforce", "shadow"}
        ``shadow`` delivers every reply unchanged and only records the decision.
    cost_model, calibrator : Path or None
        Directories of a saved cost model (default: the shipped one) and calibrator (default:
        none, ``p`` is uncalibrated).
    trust_artifacts : bool
        Load artifacts whose sha256 / scikit-learn version do not match (your own only).
    refusal_text : str
        What a refused reply says (default ``"I cannot answer."``).
    no_confidence : {"refuse", "answer"} or float
        The policy when no probability can be had; a float is a prior ``p``.
    max_body_bytes : int
        Larger request bodies are rejected with HTTP 413 (default 1 MiB).
    api_keys : list of SecretStr
        Keys clients must present as ``Authorization: Bearer <key>``; empty = no auth.
    connect_timeout, read_timeout : float
        Upstream timeouts in seconds; a timeout is answered with HTTP 504.
    max_connections, max_keepalive : int
        Upstream connection pool limits.
    audit_path : Path or None
        SQLite audit log of every decision; ``None`` = no audit log.
    audit_queries : bool
        Store the query text in the audit log (default false).
    audit_queue_size : int
        Decisions waiting to be written; beyond it records are dropped and counted.
    consistency_samples : int
        Samples for ``confidence="consistency"`` (``n >= 2``).
    """

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_file=".env", env_file_encoding="utf-8", extra="ignore",
        validate_default=True, populate_by_name=True,
    )

    upstream: str | None = None
    upstream_api_key: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8787, ge=0, le=65535)
    confidence: ConfidenceKind = "logprobs"
    c_r: float = Field(default=2.0, ge=0.0, allow_inf_nan=False)
    mode: Literal["enforce", "shadow"] = "enforce"
    cost_model: Path | None = None
    calibrator: Path | None = None
    trust_artifacts: bool = False
    refusal_text: str = Field(default=DEFAULT_REFUSAL_TEXT, min_length=1)
    no_confidence: Literal["refuse", "answer"] | _Prob = "refuse"
    max_body_bytes: int = Field(default=1024 * 1024, ge=1, validation_alias=_env(
        "max_body_bytes", "max_body_size", "max_request_bytes"))
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list, validation_alias=_env("api_keys", "api_key", "client_api_keys"))
    connect_timeout: float = Field(default=5.0, gt=0.0)
    read_timeout: float = Field(default=120.0, gt=0.0, validation_alias=_env(
        "read_timeout", "timeout", "upstream_timeout"))
    max_connections: int = Field(default=100, ge=1)
    max_keepalive: int = Field(default=50, ge=0)
    audit_path: Path | None = None
    audit_queries: bool = False
    audit_queue_size: int = Field(default=10_000, ge=1)
    consistency_samples: int = Field(default=5, ge=2)

    @field_validator("upstream")
    @classmethod
    def _check_upstream(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"upstream must be an http:// or https:// URL; got {value!r}")
        return value

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [k.strip() for k in text.split(",") if k.strip()]
        return value

    @field_validator("api_keys")
    @classmethod
    def _no_empty_keys(cls, value: list[SecretStr]) -> list[SecretStr]:
        if any(not k.get_secret_value() for k in value):
            raise ValueError("api_keys must not contain an empty key")
        return value

    @field_validator("audit_path", "cost_model", "calibrator", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value
