"""The refusal budget of the fleet: its window and its steps in the audit store.

Every worker and replica writes its decisions to the one audit store; a :class:`StoreLedger`
reads a route's window from there (the newest ``window`` enforce-mode decisions of the route,
whichever process made them, each with its key's id and ``alpha``) and keeps the route's
steps in the ``budget_steps`` table beside it (:data:`~guard.proxy.audit.BUDGET_STEPS`). The
next step is claimed by inserting its ``(route, seq)``: the first process to insert takes
the step, the others read it. So the fleet has one estimate, one set of per-key caps and one
``C_R`` per route, and a restarted replica starts from the fleet's ``C_R``, not the policy's.

A :class:`BudgetRunner` thread per process does the store's work off the event loop: every
:data:`REFRESH_S` seconds, and whenever a route's controller has seen enough decisions, it
reads the fleet's latest step and, when due, takes the next one
(:meth:`guard.refusal_budget.RefusalBudget.update`). A request reads only the price held in
memory. While the store cannot be reached the price stays where it was (logged).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

from guard.exceptions import AuditStoreError
from guard.proxy.audit.schema import BUDGET_STEPS, DECISIONS
from guard.proxy.audit.shared import SharedStore
from guard.refusal_budget import ANONYMOUS, RefusalBudget, Seen, Step

log = logging.getLogger(__name__)

#: Seconds between two reads of the fleet's latest step (the price a replica follows).
REFRESH_S = 1.0
#: Seconds between two warnings that the store cannot be reached.
WARN_EVERY_S = 30.0


class StoreLedger:
    """The :class:`~guard.refusal_budget.Ledger` of one route in the shared audit store."""

    def __init__(self, shared: SharedStore, route: str) -> None:
        self.shared, self.route = shared, route

    def window(self, n: int) -> list[Seen]:
        rows = self.shared.select(DECISIONS, {"route": self.route, "mode": "enforce"},
                                  columns=("key_id", "alpha", "decision"), limit=n)
        return [Seen(int(r["id"]), str(r["key_id"] or ANONYMOUS),
                     float(r["alpha"] if r["alpha"] is not None else 1.0),
                     r["decision"] == "refuse") for r in rows]

    def latest(self) -> Step | None:
        rows = self.shared.select(BUDGET_STEPS, {"route": self.route}, limit=1)
        if not rows:
            return None
        r = rows[0]
        return Step(seq=int(r["seq"]), c_r=float(r["c_r"]), ts=float(r["ts"]),
                    estimate=None if r["estimate"] is None else float(r["estimate"]),
                    last_id=int(r["last_id"]), decisions=int(r["decisions"] or 0),
                    keys=int(r["keys"] or 0))

    def claim(self, step: Step) -> bool:
        return self.shared.claim(BUDGET_STEPS, BUDGET_STEPS.row({
            "route": self.route, "seq": step.seq, "ts": step.ts, "c_r": step.c_r,
            "estimate": step.estimate, "last_id": step.last_id, "decisions": step.decisions,
            "keys": step.keys}))


class BudgetRunner:
    """One thread per process running the budgets of its routes against the store (see the
    module docstring)."""

    def __init__(self, budgets: Sequence[RefusalBudget]) -> None:
        self.budgets = list(budgets)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._warned = -WARN_EVERY_S
        for budget in self.budgets:
            budget.wake = self._wake.set

    def step_all(self) -> None:
        """Follow (and when due, take) every route's step once."""
        for budget in self.budgets:
            try:
                budget.update()
            except AuditStoreError as exc:
                now = time.monotonic()
                if now - self._warned >= WARN_EVERY_S:
                    self._warned = now
                    log.warning("refusal budget: the audit store cannot be reached (%s); "
                                "C_R stays at %.4g until it can", exc, budget.c_r)

    def start(self) -> None:
        """Read the fleet's state once, then keep following it in a thread."""
        self.step_all()
        self._thread = threading.Thread(target=self._run, name="utilityguard-budget",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(REFRESH_S)
            self._wake.clear()
            if not self._stop.is_set():
                self.step_all()

    def stop(self) -> None:
        """Stop the thread (idempotent)."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(10.0)
