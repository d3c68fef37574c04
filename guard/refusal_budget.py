"""A follow-up budget the proxy holds: ``C_R`` adjusted online (``serve --refusal-budget``).

The operator gives the budget as a rate of answerable requests (``--refusal-budget 0.05``: at
most 5% of the answerable requests refused). The proxy does not know which requests were
answerable when it decides, so it estimates: a refused request (the guard's refusal or the
model's own) with answerability ``alpha`` counts ``alpha`` unnecessary refusals, and every
request ``alpha`` answerable ones. Over a sliding window of the last ``window`` decisions the
estimated rate is ``sum(alpha over refused) / sum(alpha)``; every ``window // 4`` decisions
``C_R`` takes one step of dual ascent on the budget's multiplier,

    C_R <- clip(C_R + clip(gain * (rate - budget) / budget, -max_step, max_step),
                c_r_min, c_r_max)

— a rate over the budget raises the price of a refusal (the guard answers more), one under
it lowers the price. The fixed point is the offline ``C_R*`` of the same traffic
(``utilityguard budget``).

**An attack surface.** A client that floods requests the guard refuses pushes the rate up and
with it ``C_R``, and so the answers to other clients' costly questions. Three bounds hold
whatever the traffic: ``C_R`` never leaves ``[c_r_min, c_r_max]``; it moves at most
``max_step`` per update; and each client key's influence on the estimate is capped by its
share of the window: the keys' answerable masses ``sum(alpha)`` are water-filled so that no
key weighs more than ``key_share`` of the window (with fewer than ``1 / key_share`` keys
present, every key weighs the same, ``1 / K``). Capping an honest key biases the estimate
(it becomes a mean of per-key rates, not the pooled rate), so choose ``key_share`` above
``1 / K`` for the ``K`` keys a window usually holds: no honest key is then capped. The
window must hold several requests of each key for the per-key rates to mean anything:
with 10 keys and a flood, a 40-decision window let noise carry C_R to its bound in
simulation, a 100-decision one did not.
A key holding weight ``s`` moves the estimated rate by at most ``s``, so with the
other traffic's rate ``r`` the estimate stays within ``(1 - s) r + s``: the key can push
``C_R`` no further than the price at which the other traffic alone meets the smaller budget
``(budget - s) / (1 - s)`` (tested against the offline solver). Keys are identified by a hash
of the proxy key (or of the client's Authorization header when the proxy has no keys); the
key itself is never kept. With one key, or none, there is nobody else to protect and only
the bounds apply.

The controller lives in one proxy process (each ``--workers`` process holds its own).
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError

#: How many keys a window can tell apart (a request beyond that shares the overflow key).
MAX_KEYS = 10_000


@dataclass(frozen=True)
class BudgetConfig:
    """The operator's budget and bounds (validated: the messages name the flag)."""

    rate: float
    c_r_min: float = 0.0
    c_r_max: float = 64.0
    window: int = 200
    max_step: float = 0.5
    gain: float = 1.0
    key_share: float = 0.1

    def __post_init__(self) -> None:
        if not 0.0 < self.rate < 1.0:
            raise ConfigError(f"--refusal-budget must be a rate in (0, 1), got {self.rate}")
        if not (0.0 <= self.c_r_min <= self.c_r_max < float("inf")):
            raise ConfigError(f"need 0 <= --c-r-min <= --c-r-max < inf, got {self.c_r_min} "
                              f"and {self.c_r_max}")
        if self.window < 8:
            raise ConfigError(f"--budget-window must be at least 8 decisions, got {self.window}")
        if not (0.0 < self.max_step < float("inf")) or not (0.0 < self.gain < float("inf")):
            raise ConfigError("--budget-max-step and the gain must be finite numbers > 0")
        if not 0.0 < self.key_share <= 1.0:
            raise ConfigError(f"--budget-key-share must be in (0, 1], got {self.key_share}")


def key_id(secret: bytes | str | None) -> str:
    """A short, non-reversible name for a client key (``"anonymous"`` without one).

    Examples
    --------
    >>> key_id(None), len(key_id(b"sk-123"))
    ('anonymous', 12)
    """
    if not secret:
        return "anonymous"
    raw = secret.encode() if isinstance(secret, str) else secret
    return hashlib.sha256(b"utilityguard-budget:" + raw).hexdigest()[:12]


def capped_weights(counts: Mapping[str, float], share: float) -> dict[str, float]:
    """Per key, the weight its requests carry: ``min(n_k, t)`` with ``t`` chosen so that no
    key holds more than ``share`` of the total weight (every key the same weight when there
    are too few keys for that). ``n_k`` is the key's answerable mass ``sum(alpha)``.

    Examples
    --------
    >>> w = capped_weights({"flood": 900, "a": 50, "b": 50}, 0.5)
    >>> w["flood"] / sum(w.values())
    0.5
    >>> capped_weights({"a": 10, "b": 30}, 0.1)  # two keys: each weighs the same
    {'a': 10.0, 'b': 10.0}
    """
    n = np.array(list(counts.values()), dtype=np.float64)
    if n.size == 0:
        return {}
    if n.max() <= share * n.sum():  # nobody over the share: the plain pooled rate
        t = float(n.max())
    elif n.size * share <= 1.0:
        t = float(n.min())
    else:  # f(t) = share * sum(min(n, t)) - t: positive at 0+, negative at max(n)
        lo, hi = 0.0, float(n.max())
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if share * np.minimum(n, mid).sum() >= mid else (lo, mid)
        t = lo
    return {k: float(min(c, t)) for k, c in counts.items()}


class RefusalBudget:
    """The online controller of ``C_R`` (see the module docstring); thread-safe."""

    def __init__(self, config: BudgetConfig, c_r: float) -> None:
        self.config = config
        self._c_r = float(np.clip(c_r, config.c_r_min, config.c_r_max))
        self._seen: deque[tuple[str, float, bool]] = deque(maxlen=config.window)
        self._since = 0
        self._lock = threading.Lock()
        self.updates = 0
        self.estimate: float | None = None

    @property
    def c_r(self) -> float:
        """The price the next decision uses."""
        return self._c_r

    def observe(self, record: DecisionRecord, key: str = "anonymous") -> None:
        """Count one decision of a client ``key`` (a :func:`key_id`); every ``window // 4``
        decisions, once the window is full, step ``C_R``."""
        refused = record.decision != "answer"
        with self._lock:
            keys = {k for k, _, _ in self._seen}
            if key not in keys and len(keys) >= MAX_KEYS:
                key = "overflow"
            self._seen.append((key, record.alpha, refused))
            self._since += 1
            if len(self._seen) == self.config.window and \
                    self._since >= max(1, self.config.window // 4):
                self._since = 0
                self._step()

    def window_rate(self) -> float | None:
        """The estimated unnecessary-refusal rate over the window: each key's own rate
        ``sum(alpha over refused) / sum(alpha)``, averaged with weights ``sum(alpha)`` capped
        so that no key holds more than ``key_share`` of the total (None while nothing
        answerable was seen)."""
        answerable: dict[str, float] = {}
        refused: dict[str, float] = {}
        for key, alpha, ref in self._seen:
            answerable[key] = answerable.get(key, 0.0) + alpha
            refused[key] = refused.get(key, 0.0) + (alpha if ref else 0.0)
        mass = {k: v for k, v in answerable.items() if v > 0}
        w = capped_weights(mass, self.config.key_share)
        total = sum(w.values())
        if total <= 0:
            return None
        return sum(w[k] * refused[k] / mass[k] for k in mass) / total

    def _step(self) -> None:
        cfg = self.config
        rate = self.window_rate()
        self.estimate = rate
        if rate is None:
            return
        step = float(np.clip(cfg.gain * (rate - cfg.rate) / cfg.rate, -cfg.max_step,
                             cfg.max_step))
        self._c_r = float(np.clip(self._c_r + step, cfg.c_r_min, cfg.c_r_max))
        self.updates += 1

    def metrics_text(self) -> str:
        """The controller's gauges in the Prometheus text format (this process's)."""
        est = "NaN" if self.estimate is None else repr(self.estimate)
        p = "utilityguard_refusal_budget"
        return (f"# HELP {p}_c_r The C_R the refusal budget controller sets now.\n"
                f"# TYPE {p}_c_r gauge\n{p}_c_r {self._c_r!r}\n"
                f"# HELP {p}_target The budget: a rate of answerable requests.\n"
                f"# TYPE {p}_target gauge\n{p}_target {self.config.rate!r}\n"
                f"# HELP {p}_estimated_rate Estimated unnecessary-refusal rate over the "
                "window (key shares capped).\n"
                f"# TYPE {p}_estimated_rate gauge\n{p}_estimated_rate {est}\n"
                f"# HELP {p}_updates_total Steps the controller took.\n"
                f"# TYPE {p}_updates_total counter\n{p}_updates_total {self.updates}\n")
