"""A real PostgreSQL server for the audit tests, started on 127.0.0.1 by the tests themselves.

One server per session (:class:`benchmarks.perf.pg_server.PostgresServer`: ``initdb`` and
``pg_ctl`` in a temporary directory, a free port); each test gets its own fresh database.
Where no server can start, the tests are skipped with the reason printed (``-ra``) — unless
``UTILITYGUARD_TEST_REQUIRE_SERVICES=1`` (set by ``.ci/run``), where that is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from benchmarks.perf.pg_server import PostgresServer, unavailable_reason

REQUIRED = os.environ.get("UTILITYGUARD_TEST_REQUIRE_SERVICES") == "1"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (skipped, with the reason, where it cannot start)."""
    reason = unavailable_reason()
    server = None
    if reason is None:
        try:
            server = PostgresServer().__enter__()
        except (RuntimeError, OSError) as exc:
            reason = f"PostgreSQL did not start: {exc}"
    if server is None:
        if REQUIRED:
            pytest.fail(f"{reason} (UTILITYGUARD_TEST_REQUIRE_SERVICES=1)")
        pytest.skip(reason or "PostgreSQL unavailable")
    yield server
    server.close()


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """A fresh, empty database on the session's server (the server is running)."""
    if not postgres.running:
        postgres.start()
    return postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
