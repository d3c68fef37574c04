"""Who may label a decision, and how fast (``POST /v1/feedback``; docs/security.md).

* A decision remembers which key made it as :func:`guard.proxy.auth.key_id` (a salted
  sha256 prefix of the key: the audit log never holds a key). A label is accepted from
  that key, or from a labeller key the operator names (``--feedback-api-key``); any other
  key gets the same 404 as an unknown request id, so it cannot even learn that the id exists.
* :class:`LabelRateLimit`: at most ``--feedback-rate`` labels per key per minute (a sliding
  window; 429 past it), so that one key cannot flood the log with labels.
* A ``cost`` label must lie within :data:`COST_LABEL_RANGE`, the range of the shipped cost
  scale (the seed set's costs span 0.055 to 220, median 2).
"""

from __future__ import annotations

import threading
import time
from collections import deque

from guard.exceptions import ClientRequestError

#: The smallest and the largest ``cost`` a label may carry.
COST_LABEL_RANGE = (0.05, 250.0)
#: How many keys the rate limit remembers at once (the oldest idle ones are forgotten).
MAX_TRACKED_KEYS = 10_000


class RateLimitedError(ClientRequestError):
    """HTTP 429: this key sent more labels than ``--feedback-rate`` allows."""

    status = 429
    default_code = "rate_limit_exceeded"


class LabelRateLimit:
    """At most ``per_minute`` labels per key in any 60 s (thread-safe, bounded memory)."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._seen: dict[str | None, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str | None) -> None:
        """Count one label of ``key``; :class:`RateLimitedError` past the limit."""
        now = time.monotonic()
        with self._lock:
            times = self._seen.pop(key, None) or deque()
            while times and now - times[0] >= 60.0:
                times.popleft()
            self._seen[key] = times  # most recently used last
            if len(times) >= self.per_minute:
                raise RateLimitedError(
                    f"more than {self.per_minute} labels in a minute from this key "
                    "(--feedback-rate); send again later", code="rate_limit_exceeded")
            times.append(now)
            while len(self._seen) > MAX_TRACKED_KEYS:
                self._seen.pop(next(iter(self._seen)))
