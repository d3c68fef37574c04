"""A throwaway PostgreSQL server on 127.0.0.1 for tests and ``make perf``.

:class:`PostgresServer` runs Debian's ``initdb`` and ``pg_ctl`` (the ``postgresql`` package)
in a fresh temporary directory, on a free port, listening on 127.0.0.1 only, with
password authentication (scram-sha-256) and ``fsync`` off (a scratch database). When run as
root it runs them as the ``postgres`` system user (``initdb`` refuses root). ``stop()`` shuts
it down and deletes the directory; :meth:`restart` stops and starts it on the same port, as a
database restart in production would.

:func:`unavailable_reason` says why no server can start on this machine (``None`` when one
can), so tests can skip with the reason printed.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchmarks.perf.servers import free_port

USER = "guard"
PASSWORD = "pg-test-SECRET-5e1f"  # a throwaway server's password: tests check it never leaks
START_TIMEOUT = 60


def bindir() -> Path | None:
    """The directory of ``pg_ctl`` and ``initdb`` (newest Debian version first)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    which = shutil.which("pg_ctl")
    return Path(which).resolve().parent if which else None


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root and runuser is missing (initdb refuses root)")
    try:
        import pwd

        pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root and there is no 'postgres' user") from None
    return [runuser, "-u", "postgres", "--"]


def unavailable_reason() -> str | None:
    """Why a server cannot start here, or ``None``."""
    if bindir() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'utilityguard[postgres]')"
    try:
        _run_as()
    except RuntimeError as exc:
        return str(exc)
    return None


class PostgresServer:
    """A scratch PostgreSQL server (see the module docstring); a context manager."""

    def __init__(self) -> None:
        bins = bindir()
        if bins is None:
            raise RuntimeError("PostgreSQL is not installed")
        self.bindir = bins
        self.prefix = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="utilityguard-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.running = False

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database (with the password)."""
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        """The URL of ``database`` on this server."""
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, timeout: float = START_TIMEOUT) -> None:
        done = subprocess.run([*self.prefix, *args], capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()} {log}".strip())

    def initialise(self) -> None:
        """Create the cluster (``initdb``) with the ``guard`` superuser and its password."""
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.prefix:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER,
                  f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8", "--no-sync",
                  "--locale=C")
        pwfile.unlink()

    def start(self) -> None:
        """Start on 127.0.0.1:``port`` (sockets in the temporary directory; no fsync)."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=200"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-w", "-t", str(START_TIMEOUT), "-o", options, "start")
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: roll back open transactions, close connections)."""
        if self.running:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
                      "stop")
            self.running = False

    def restart(self) -> None:
        """Stop and start again on the same port."""
        self.stop()
        self.start()

    def create_database(self, name: str) -> str:
        """Create database ``name``; its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_of(name)

    def __enter__(self) -> PostgresServer:
        try:
            self.initialise()
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop the server if it runs and delete its directory."""
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __exit__(self, *exc: object) -> None:
        self.close()
