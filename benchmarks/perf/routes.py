"""What choosing a route costs (``serve --config``): nothing measurable next to a decision.

Side by side in one run: :meth:`guard.proxy.routes.RouteTable.match` on a table of 100 routes
(50 exact ids, 50 globs), for a model that matches no route (the worst case: every glob
tried) and for an exact id, against the guard's own per-request work before the upstream
call (``Guard.price`` of a question with the shipped cost model). Target: the worst-case
match costs under 1 % of pricing.
"""

from __future__ import annotations

from benchmarks.perf._common import PerfResult, median_times
from guard import Guard
from guard.proxy.routes import RouteTable

ROUTES = 100
CALLS = 2_000
QUESTION = "What is the maximum daily dose of acetaminophen for an adult?"


def run() -> list[PerfResult]:
    table = RouteTable([(f"model-{i}", i) for i in range(ROUTES // 2)]
                       + [(f"family-{i}-*", i) for i in range(ROUTES // 2)])
    guard = Guard()
    guard.price(QUESTION)  # loads the cost model

    def miss() -> None:
        for _ in range(CALLS):
            table.match("unrouted-model")

    def exact() -> None:
        for _ in range(CALLS):
            table.match("model-49")

    def price() -> None:
        for _ in range(CALLS // 20):
            guard.price(QUESTION)

    t = median_times({"miss": miss, "exact": exact, "price": price}, repeats=5)
    worst, hit, ref = t["miss"] / CALLS, t["exact"] / CALLS, t["price"] / (CALLS // 20)
    return [
        PerfResult("routes: choose among 100, no match (per request)", worst, "s", ref,
                   worst / ref, "< 1% of Guard.price (the guard's own work per request)",
                   worst / ref < 0.01),
        PerfResult("routes: choose among 100, exact id (per request)", hit, "s", ref,
                   hit / ref, "< 1% of Guard.price", hit / ref < 0.01),
    ]
