"""The soak benchmark's short CI path: a few seconds of mixed load through
``utilityguard serve --workers 2``, SIGTERM while requests are in flight, and nothing lost:
every response that carried a decision is a row of the audit log."""

from __future__ import annotations

from benchmarks.perf.soak import soak


def test_nothing_is_lost_from_the_audit_log_on_sigterm() -> None:
    report = soak(3.0, 16)
    assert report.requests > 50, report.summary()
    assert report.decisions > 0, report.summary()
    assert report.audit_rows == report.decisions, report.summary()
    assert report.unexpected == 0, report.summary()
    assert report.rss_start_kb > 0 and report.rss_end_kb > 0
    assert len(report.worker_cpu_s) == 2
