"""Who asks: the proxy's keys, and the ids a request's key is known by.

* :func:`check_auth` admits a request carrying one of the configured keys
  (``Authorization: Bearer <key>``, every key compared in constant time; 401 otherwise);
  :func:`key_in` tells whether a key is one of a set (the override and labeller keys).
* :func:`key_id` is the id a decision records for the proxy key that made it (the audit
  log's ``key_id``: who may label it, whose share of a refusal budget): a salted sha256
  prefix, never the key; ``None`` for a request without a proxy key (a refusal budget counts
  those under :data:`guard.refusal_budget.ANONYMOUS`).
* :func:`credential` is what a decision is bound to for ``GET /v1/decisions/{id}`` (the
  audit log's ``owner``): a salted digest of the token the ``Authorization`` header carries,
  however it is spelled (:func:`bearer_token`), also when the proxy has no keys.

Both digests use constant salts, so that they match across workers, replicas and restarts.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence

from guard.exceptions import AuthenticationError

#: Salt of :func:`key_id`.
KEY_ID_SALT = b"utilityguard-key-id:"
#: Salt of :func:`credential`.
OWNER_SALT = b"utilityguard-decision-owner:"


def check_auth(headers: Mapping[str, str], keys: Sequence[bytes]) -> bytes | None:
    """Require ``Authorization: Bearer <key>`` matching one of ``keys``, and return the key
    (``None`` when no keys are configured: everything passes). Every key is compared in
    constant time.

    >>> check_auth({"authorization": "Bearer sk-1"}, [b"sk-1", b"sk-2"])
    b'sk-1'
    >>> check_auth({}, [])
    """
    if not keys:
        return None
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    given = token.strip().encode() if scheme.lower() == "bearer" else b""
    matched: bytes | None = None
    for key in keys:
        if hmac.compare_digest(given, key):
            matched = key
    if matched is None:
        raise AuthenticationError(
            "missing or invalid API key for the utilityguard proxy; send "
            "'Authorization: Bearer <key>' with one of its configured keys",
            code="invalid_api_key")
    return matched


def key_in(key: bytes | None, keys: Sequence[bytes]) -> bool:
    """``key`` is one of ``keys`` (each compared in constant time)."""
    found = False
    for k in keys:
        found |= key is not None and hmac.compare_digest(key, k)
    return found


def key_id(key: bytes | None) -> str | None:
    """The id a decision records for the proxy key that made it (``None`` without one).

    >>> key_id(b"sk-1") == key_id(b"sk-1") != key_id(b"sk-2"), key_id(None)
    (True, None)
    """
    if key is None:
        return None
    return hashlib.sha256(KEY_ID_SALT + key).hexdigest()[:16]


def bearer_token(value: str) -> str:
    """The credential an ``Authorization`` header carries, spelled one way: the token of
    ``Bearer <token>`` (scheme in any case, spaces around it ignored), else the whole value
    with its scheme lower-cased and its spaces collapsed.

    >>> bearer_token("Bearer sk-1") == bearer_token("bearer  sk-1 ") == "sk-1"
    True
    >>> bearer_token("Basic dXNlcjpwdw==")
    'basic dXNlcjpwdw=='
    """
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() == "bearer":
        return rest.strip()
    return " ".join([scheme.lower(), *rest.split()])


def credential(headers: Mapping[str, str]) -> str:
    """A digest of the credential of the request's ``Authorization`` header (``""`` when it
    has none): what a decision is bound to. A salted digest, so no key is held in the store or
    the audit log."""
    value = headers.get("authorization", "")
    token = bearer_token(value) if value else ""
    if not token:
        return ""
    return hashlib.sha256(OWNER_SALT + token.encode("utf-8", "replace")).hexdigest()[:32]
