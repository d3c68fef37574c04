"""A follow-up budget the proxy holds: ``C_R`` adjusted online (``serve --refusal-budget``).

The operator gives the budget as a rate of answerable requests (``--refusal-budget 0.05``: at
most 5% of the answerable requests refused). The proxy does not know which requests were
answerable when it decides, so it estimates: a refusal the client received (the guard's, in
enforce mode) of a request with answerability ``alpha`` counts ``alpha`` unnecessary refusals,
and every request ``alpha`` answerable ones. Over a window of the last ``window`` counted
decisions the estimated rate is ``sum(alpha over refused) / sum(alpha)``; once ``window // 4``
new decisions have arrived since the last step, ``C_R`` takes one step of dual ascent on the
budget's multiplier,

    C_R <- clip(C_R + clip(gain * (rate - budget) / budget, -bound, bound),
                c_r_min, c_r_max)

— a rate over the budget raises the price of a refusal (the guard answers more), one under
it lowers the price. The fixed point is the offline ``C_R*`` of the same traffic
(``utilityguard budget``).

**What is counted** is what was delivered: a refusal the client received. The model's own
refusal (``passthrough_refusal``) is delivered whole, in the model's words, and may carry an
answer after a refusing first line, so it counts as answered; a shadow-mode decision (the
reply is delivered whatever the decision) is not counted at all.

**An attack surface, and its bounds.** A client that floods requests the guard refuses pushes
the rate up and with it ``C_R``, and so the answers to other clients' costly questions. The
bounds hold whatever the traffic:

* ``C_R`` never leaves ``[c_r_min, c_r_max]``;
* one step moves it at most ``bound = min(max_step, max_rate * t / 60)``, ``t`` the seconds
  since the previous step (at most 60): ``C_R`` moves at most ``max_rate`` per minute however
  fast requests arrive;
* each client key's weight in the estimate is at most ``key_share`` of the window's, and
  ``key_share`` must be below the budget (:class:`BudgetConfig` refuses it otherwise). The
  keys' answerable masses ``sum(alpha)`` are water-filled to a common cap; with fewer than
  ``1 / key_share`` keys in the window every key weighs ``key_share`` and the weight no key
  holds counts as refusing nothing (:func:`key_weights`). A key holding weight ``s`` moves
  the estimate by at most ``s``: with the other traffic's rate ``r`` it stays within
  ``(1 - s) r + s``, so one key can push ``C_R`` no further than the price at which the other
  traffic alone meets the smaller budget ``(budget - s) / (1 - s)`` — still positive, since
  ``s < budget``. ``m`` keys acting together hold ``m * s``.

What the cap costs: an honest key's rate is capped too, so the estimate becomes a mean of
per-key rates rather than the pooled rate, and with fewer than ``1 / key_share`` keys it
falls short of the true rate: ``C_R`` then settles lower than the budget asks, and the guard
refuses more than the budget allows (the safe side). The budget is held exactly only when the
window holds at least ``1 / key_share`` keys, each with several requests.

Keys are the proxy keys' ids (:func:`guard.proxy.auth.key_id`), never the keys; the proxy
requires proxy keys for a budget (without them every client would be one key).

**Shared.** The controller reads its window and its last step from a :class:`Ledger`: the
proxy's is the audit store (:mod:`guard.proxy.budget_ledger`), so every worker and replica
counts the fleet's decisions and follows the fleet's one ``C_R``; :class:`LocalLedger` keeps
them in memory (one process).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from guard.decision_records import DecisionRecord
from guard.exceptions import ConfigError

#: The default largest share of the window one key may weigh: a tenth of the budget, at most
#: 0.1 (ten keys acting together are needed to hold the estimate at the budget by themselves).
DEFAULT_SHARE_OF_BUDGET = 0.1
DEFAULT_MAX_KEY_SHARE = 0.1
#: The key of a request without a proxy key.
ANONYMOUS = "anonymous"


def default_key_share(rate: float) -> float:
    """The ``--budget-key-share`` a budget of ``rate`` gets when none is given.

    >>> round(default_key_share(0.05), 6), round(default_key_share(0.3), 6)
    (0.005, 0.03)
    """
    return min(DEFAULT_MAX_KEY_SHARE, DEFAULT_SHARE_OF_BUDGET * rate)


@dataclass(frozen=True)
class BudgetConfig:
    """The operator's budget and bounds (validated: the messages name the flag).

    ``key_share`` ``None`` is :func:`default_key_share` of ``rate``; ``max_rate`` is the
    largest change of ``C_R`` per minute."""

    rate: float
    c_r_min: float = 0.0
    c_r_max: float = 64.0
    window: int = 200
    max_step: float = 0.5
    gain: float = 1.0
    key_share: float | None = None
    max_rate: float = 6.0

    def __post_init__(self) -> None:
        if not 0.0 < self.rate < 1.0:
            raise ConfigError(f"--refusal-budget must be a rate in (0, 1), got {self.rate}")
        if self.key_share is None:
            object.__setattr__(self, "key_share", default_key_share(self.rate))
        if not (0.0 <= self.c_r_min <= self.c_r_max < float("inf")):
            raise ConfigError(f"need 0 <= --c-r-min <= --c-r-max < inf, got {self.c_r_min} "
                              f"and {self.c_r_max}")
        if self.window < 8:
            raise ConfigError(f"--budget-window must be at least 8 decisions, got {self.window}")
        if not (0.0 < self.max_step < float("inf")) or not (0.0 < self.gain < float("inf")):
            raise ConfigError("--budget-max-step and the gain must be finite numbers > 0")
        if not 0.0 < self.max_rate < float("inf"):
            raise ConfigError(f"--budget-max-rate must be a finite number > 0, got "
                              f"{self.max_rate}")
        if not 0.0 < self.share < self.rate:
            raise ConfigError(
                f"--budget-key-share must be in (0, --refusal-budget) = (0, {self.rate:g}), got "
                f"{self.share:g}: a key weighing as much as the budget could hold the "
                "estimate over it on its own, whatever every other client does")

    @property
    def share(self) -> float:
        """``key_share``, resolved."""
        return float(self.key_share if self.key_share is not None else 0.0)


@dataclass(frozen=True)
class Seen:
    """One counted decision: its ledger id (grows with time), the key that made it, its
    ``alpha`` and whether the client received a refusal."""

    id: int
    key: str
    alpha: float
    refused: bool


@dataclass(frozen=True)
class Step:
    """One step of the controller: step ``seq`` set ``c_r`` at ``ts`` (Unix time) from the
    ``estimate`` over ``decisions`` decisions of ``keys`` keys, the newest with id
    ``last_id``."""

    seq: int
    c_r: float
    ts: float
    estimate: float | None
    last_id: int
    decisions: int = 0
    keys: int = 0


class Ledger(Protocol):
    """Where the controller's decisions and steps live (one process, or the fleet)."""

    def window(self, n: int) -> list[Seen]:
        """The newest ``n`` counted decisions, newest first."""
        ...

    def latest(self) -> Step | None:
        """The last step taken (``None`` before the first)."""
        ...

    def claim(self, step: Step) -> bool:
        """Record ``step`` unless a step with its ``seq`` exists; whether it was recorded."""
        ...


class LocalLedger:
    """A :class:`Ledger` in memory (one process; thread-safe)."""

    def __init__(self, window: int) -> None:
        self._seen: deque[Seen] = deque(maxlen=window)
        self._steps: list[Step] = []
        self._next = 0
        self._lock = threading.Lock()

    def add(self, key: str, alpha: float, refused: bool) -> None:
        with self._lock:
            self._next += 1
            self._seen.appendleft(Seen(self._next, key, alpha, refused))

    def window(self, n: int) -> list[Seen]:
        with self._lock:
            return list(self._seen)[:n]

    def latest(self) -> Step | None:
        with self._lock:
            return self._steps[-1] if self._steps else None

    def claim(self, step: Step) -> bool:
        with self._lock:
            if self._steps and self._steps[-1].seq >= step.seq:
                return False
            self._steps.append(step)
            return True


def counted(record: DecisionRecord) -> bool:
    """Whether ``record`` counts toward the budget: a decision in enforce mode (in shadow
    mode every reply is delivered)."""
    return record.mode == "enforce"


def key_weights(mass: Mapping[str, float], share: float) -> tuple[dict[str, float], float]:
    """``(weights, total)``: per key, the weight its rate carries in the estimate,
    ``min(n_k, t)`` with ``n_k`` its answerable mass, and the total they are divided by, such
    that no key holds more than ``share`` of it. With enough keys (``n * share >= 1``) ``t``
    is the water level at which the capped keys hold exactly ``share`` and ``total`` the sum
    of the weights; with fewer, every key weighs the same and ``total`` is ``1 / share``
    times that: the weight no key holds counts as refusing nothing.

    Examples
    --------
    >>> w, total = key_weights({"flood": 900, "a": 50, "b": 50}, 0.5)
    >>> w["flood"] / total
    0.5
    >>> key_weights({"a": 10, "b": 30}, 0.1)  # two keys: each weighs a tenth
    ({'a': 10.0, 'b': 10.0}, 100.0)
    """
    n = np.array(list(mass.values()), dtype=np.float64)
    if n.size == 0:
        return {}, 0.0
    if n.max() <= share * n.sum():  # nobody over the share: the plain pooled rate
        t = float(n.max())
    elif n.size * share < 1.0:  # too few keys for any cap to hold: equal weights, padded
        t = float(n.min())
    else:  # f(t) = share * sum(min(n, t)) - t: positive at 0+, negative at max(n)
        lo, hi = 0.0, float(n.max())
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if share * np.minimum(n, mid).sum() >= mid else (lo, mid)
        t = lo
    weights = {k: float(min(c, t)) for k, c in mass.items()}
    return weights, max(sum(weights.values()), t / share)


def window_rate(seen: Iterable[Seen], share: float) -> tuple[float | None, int]:
    """``(rate, keys)``: the estimated unnecessary-refusal rate over ``seen`` — each key's own
    rate ``sum(alpha over refused) / sum(alpha)`` weighted by :func:`key_weights` — and how
    many keys had answerable mass (``None`` while nothing answerable was seen)."""
    answerable: dict[str, float] = {}
    refused: dict[str, float] = {}
    for s in seen:
        answerable[s.key] = answerable.get(s.key, 0.0) + s.alpha
        refused[s.key] = refused.get(s.key, 0.0) + (s.alpha if s.refused else 0.0)
    mass = {k: v for k, v in answerable.items() if v > 0}
    weights, total = key_weights(mass, share)
    if total <= 0:
        return None, 0
    return sum(weights[k] * refused[k] / mass[k] for k in mass) / total, len(mass)


class RefusalBudget:
    """The online controller of ``C_R`` (see the module docstring); thread-safe.

    ``ledger``: where the window and the steps live (default a :class:`LocalLedger`, fed by
    :meth:`observe`); ``clock``: Unix time (steps of several processes are compared)."""

    def __init__(self, config: BudgetConfig, c_r: float, ledger: Ledger | None = None, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self._c_r = float(np.clip(c_r, config.c_r_min, config.c_r_max))
        self._local = LocalLedger(config.window) if ledger is None else None
        self.ledger: Ledger = self._local if self._local is not None else ledger  # type: ignore[assignment]
        self._clock = clock
        self._start = clock()
        self._since = 0
        self._lock = threading.Lock()  # the counter (held for microseconds)
        self._stepping = threading.Lock()  # a step (may wait for the store: never on a loop)
        #: the fleet's steps so far and its latest estimate
        self.updates = 0
        self.estimate: float | None = None
        self.keys = 0
        #: called when enough decisions arrived for a step (the proxy's runner thread);
        #: ``None``: :meth:`update` runs in :meth:`observe` itself
        self.wake: Callable[[], None] | None = None

    @property
    def c_r(self) -> float:
        """The price the next decision uses."""
        return self._c_r

    @property
    def due_every(self) -> int:
        """New decisions between two steps."""
        return max(1, self.config.window // 4)

    def observe(self, record: DecisionRecord, key: str = ANONYMOUS) -> None:
        """Count one decision of a client ``key`` (with a local ledger; a shared one reads the
        decision from the store), and step when ``window // 4`` arrived since the last try."""
        if not counted(record):
            return
        if self._local is not None:
            self._local.add(key, record.alpha, record.decision == "refuse")
        with self._lock:
            self._since += 1
            due = self._since >= (self.due_every if self.wake is None
                                  else max(1, self.due_every // 2))
            if due:
                self._since = 0
        if due:
            if self.wake is not None:
                self.wake()
            else:
                self.update()

    def use(self, ledger: Ledger) -> None:
        """Read the window and the steps from ``ledger`` from now on (the proxy's shared
        store, once it is open); :meth:`observe` then only counts."""
        with self._stepping:
            self.ledger, self._local = ledger, None

    def adopt(self, step: Step | None) -> None:
        """Use the price, estimate and count of ``step`` (the fleet's latest)."""
        if step is None:
            return
        cfg = self.config
        self._c_r = float(np.clip(step.c_r, cfg.c_r_min, cfg.c_r_max))
        self.estimate, self.updates, self.keys = step.estimate, step.seq, step.keys

    def update(self) -> Step | None:
        """Follow the ledger's latest step, and take the next one when the window is full and
        ``window // 4`` decisions are newer than that step; the step taken (or ``None``)."""
        cfg = self.config
        with self._stepping:
            latest = self.ledger.latest()
            self.adopt(latest)
            seen = self.ledger.window(cfg.window)
            if len(seen) < cfg.window:
                return None
            last_id = latest.last_id if latest is not None else -1
            if latest is not None and sum(s.id > last_id for s in seen) < self.due_every:
                return None
            rate, keys = window_rate(seen, cfg.share)
            if rate is None:
                return None
            now = self._clock()
            since = min(max(now - (latest.ts if latest is not None else self._start), 0.0), 60.0)
            bound = min(cfg.max_step, cfg.max_rate * since / 60.0)
            move = float(np.clip(cfg.gain * (rate - cfg.rate) / cfg.rate, -bound, bound))
            step = Step(seq=(latest.seq if latest is not None else 0) + 1,
                        c_r=float(np.clip(self._c_r + move, cfg.c_r_min, cfg.c_r_max)),
                        ts=now, estimate=rate, last_id=max(s.id for s in seen),
                        decisions=len(seen), keys=keys)
            if self.ledger.claim(step):
                self.adopt(step)
                return step
            self.adopt(self.ledger.latest())  # another process stepped first
            return None

    def window_rate(self) -> float | None:
        """The estimated rate over the ledger's current window (see :func:`window_rate`)."""
        return window_rate(self.ledger.window(self.config.window), self.config.share)[0]

    def metrics_text(self) -> str:
        """The controller's gauges in the Prometheus text format (the fleet's step, as this
        process last read it)."""
        est = "NaN" if self.estimate is None else repr(self.estimate)
        p = "utilityguard_refusal_budget"
        return (f"# HELP {p}_c_r The C_R the refusal budget controller sets now.\n"
                f"# TYPE {p}_c_r gauge\n{p}_c_r {self._c_r!r}\n"
                f"# HELP {p}_target The budget: a rate of answerable requests.\n"
                f"# TYPE {p}_target gauge\n{p}_target {self.config.rate!r}\n"
                f"# HELP {p}_key_share The largest share of the window one key weighs.\n"
                f"# TYPE {p}_key_share gauge\n{p}_key_share {self.config.share!r}\n"
                f"# HELP {p}_estimated_rate Estimated unnecessary-refusal rate over the "
                "window (key shares capped).\n"
                f"# TYPE {p}_estimated_rate gauge\n{p}_estimated_rate {est}\n"
                f"# HELP {p}_keys Client keys with answerable requests in the window.\n"
                f"# TYPE {p}_keys gauge\n{p}_keys {self.keys}\n"
                f"# HELP {p}_updates_total Steps the controller took (the fleet's).\n"
                f"# TYPE {p}_updates_total counter\n{p}_updates_total {self.updates}\n")


def shares(seen: Sequence[Seen], share: float) -> dict[str, float]:
    """Each key's share of the estimate's weight over ``seen`` (for tests and reports)."""
    mass: dict[str, float] = {}
    for s in seen:
        mass[s.key] = mass.get(s.key, 0.0) + s.alpha
    weights, total = key_weights({k: v for k, v in mass.items() if v > 0}, share)
    return {k: w / total for k, w in weights.items()} if total > 0 else {}


__all__ = ["ANONYMOUS", "BudgetConfig", "Ledger", "LocalLedger", "RefusalBudget", "Seen",
           "Step", "counted", "default_key_share", "key_weights", "shares", "window_rate"]
