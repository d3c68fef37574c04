"""Helpers shared by the tests (import as ``from tests.helpers import ...``): running the
``utilityguard`` command in-process and reading its one-line errors. Local servers (free
ports, waiting until a server answers) are in :mod:`benchmarks.perf.servers`. Headless
Chromium for the tests that render HTML (the audit report, the docs site): :func:`chromium`,
:func:`run_chromium`, and :class:`Browser` for those that click through pages."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from guard.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``utilityguard *argv`` run in this process."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    """The one line of a user error (fails on a traceback or several lines)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("utilityguard: error: ")
    return lines[0]


#: set by .ci/run: a missing service (PostgreSQL, Chromium) fails its tests instead of skipping
REQUIRE_SERVICES = os.environ.get("UTILITYGUARD_TEST_REQUIRE_SERVICES") == "1"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")


def chromium() -> str:
    """The Chromium executable; skips the test when there is none (fails under
    ``UTILITYGUARD_TEST_REQUIRE_SERVICES=1``)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        reason = "chromium is not installed (apt-get install chromium, or make services)"
        if REQUIRE_SERVICES:
            pytest.fail(reason + " (UTILITYGUARD_TEST_REQUIRE_SERVICES=1)")
        pytest.skip(reason)
    return exe


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with ``args`` (``--dump-dom URL``, ``--screenshot=PNG URL``), in a
    fresh profile, no network services of its own."""
    with tempfile.TemporaryDirectory(prefix="utilityguard-chromium-") as profile:
        return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                               *args], capture_output=True, text=True, timeout=180,
                              check=False)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a server process a test started (wait 20 s), then kill it (wait 5 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
    fd 3 carries commands to it, fd 4 its answers and events, each a JSON message ending in a
    NUL byte), for the tests that click through pages: :meth:`navigate`, :meth:`evaluate`,
    :meth:`click` (a DOM click on an element, then the page it opens), :meth:`type_text`.
    Skips the test without Chromium (fails under ``UTILITYGUARD_TEST_REQUIRE_SERVICES=1``)."""

    def __init__(self, timeout: float = 60.0) -> None:
        exe = chromium()
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="utilityguard-chromium-")
        to_browser, commands = os.pipe()
        answers, from_browser = os.pipe()

        def pipes() -> None:  # in the child, before exec: the pipes on fds 3 and 4, kept
            # across exec (copied above 10 first: a pipe may itself be fd 3 or 4)
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
            os.dup2(high[0], 3, inheritable=True)
            os.dup2(high[1], 4, inheritable=True)

        self.proc = subprocess.Popen(
            [exe, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile.name}",
             "--remote-debugging-pipe", "about:blank"],
            preexec_fn=pipes, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._out, self._in = commands, answers
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.send("Page.enable", page=True)
        self.send("Runtime.enable", page=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, RuntimeError, TimeoutError):
                self.send("Browser.close")
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, *, page: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command (to the page with ``page=True``) and return its result."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if page:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            got = self._message(deadline)
            if got.get("id") == self._id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                result: dict[str, Any] = got.get("result", {})
                return result
            self.events.append(got)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next event ``method`` of the page (those already received first)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for k, event in enumerate(self.events):
                if event.get("method") == method:
                    del self.events[: k + 1]
                    return event
            self.events.clear()
            self.events.append(self._message(deadline))

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send("Runtime.evaluate", page=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        """Open ``url`` and wait until it has loaded."""
        self.events.clear()
        self.send("Page.navigate", page=True, url=url)
        self.wait_for("Page.loadEventFired")

    def click(self, selector_js: str) -> None:
        """Click the element the JavaScript expression ``selector_js`` returns and wait until
        the page it opens has loaded."""
        self.events.clear()
        self.evaluate(f"({selector_js}).click()")
        self.wait_for("Page.loadEventFired")

    def wait_until(self, expression: str, timeout: float | None = None) -> Any:
        """Poll the expression until it is truthy; its value (``TimeoutError`` past ``timeout``)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true: {expression}")
            time.sleep(0.1)

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused element, as a keyboard would."""
        self.send("Input.insertText", page=True, text=text)
