"""``/metrics`` of ``serve --workers 2`` is the sum over both workers (prometheus_client's
multiprocess mode), counters and histograms alike, checked on a real serve process: the
per-worker values (read from each worker's own file) are both non-zero and add up to what
one scrape of either worker reports, and to what the client sent."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import httpx
import openai
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

CHAT = 'utilityguard_requests_total{endpoint="chat_completions",status="200"}'


def samples(text: str) -> dict[str, float]:
    """``{'name{labels}': value}`` of every sample of an exposition text (labels sorted)."""
    return {x.name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(x.labels.items())) + "}"
            if x.labels else x.name: x.value
            for f in text_string_to_metric_families(text) for x in f.samples}


def per_worker(directory: Path, tmp: Path) -> dict[str, dict[str, float]]:
    """Each worker's own samples: its counter and histogram files collected alone."""
    out: dict[str, dict[str, float]] = {}
    for f in directory.glob("counter_*.db"):
        pid = f.stem.split("_")[1]
        alone = tmp / pid
        alone.mkdir(parents=True, exist_ok=True)
        for kind in ("counter", "histogram"):
            if (directory / f"{kind}_{pid}.db").exists():
                shutil.copy(directory / f"{kind}_{pid}.db", alone)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        out[pid] = samples(generate_latest(registry).decode())
    return out


def test_metrics_add_up_across_two_workers(upstream: Any, serve_process: Any,
                                           tmp_path: Path) -> None:
    metrics_dir = tmp_path / "metrics"
    env = {k: v for k, v in os.environ.items() if not k.startswith("UTILITYGUARD_")}
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    served = serve_process(["--upstream", upstream[1].url + "/v1", "--log-level", "warning",
                            "--workers", "2"], env=env, timeout=120)
    sent = 0

    def burst(k: int) -> None:  # a new connection per request: the kernel picks a worker
        for i in range(10):
            with openai.OpenAI(base_url=served.url + "/v1", api_key="k", max_retries=0,
                               timeout=30) as c:
                q = "dose unsure" if i % 5 == 0 else "sure"
                c.chat.completions.create(model="m", messages=[{"role": "user", "content": q}],
                                          stream=(k + i) % 2 == 1)

    workers: dict[str, dict[str, float]] = {}
    for _ in range(20):  # until both workers have served some (at most 1600 requests)
        threads = [threading.Thread(target=burst, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        sent += 80
        workers = {pid: w for pid, w in per_worker(metrics_dir, tmp_path / f"w{sent}").items()
                   if w.get(CHAT, 0) > 0}  # (the supervisor's own file holds zeros)
        if len(workers) == 2:
            break
    assert len(workers) == 2, workers
    scrapes = [samples(httpx.get(served.url + "/metrics", headers={"connection": "close"},
                                 timeout=10).text) for _ in range(6)]
    served.stop()
    a, b = workers.values()
    for s in scrapes:  # whichever worker answered the scrape reports the sum of both
        assert s[CHAT] == sent == a[CHAT] + b[CHAT]
        assert sum(v for k, v in s.items() if k.startswith("utilityguard_decisions_total")
                   ) == sent
        assert s['utilityguard_decisions_total{decision="refuse",mode="enforce"}'] == sent / 5
        for stream in ("false", "true"):
            count = f'utilityguard_added_latency_seconds_count{{stream="{stream}"}}'
            inf = f'utilityguard_added_latency_seconds_bucket{{le="+Inf",stream="{stream}"}}'
            total = f'utilityguard_added_latency_seconds_sum{{stream="{stream}"}}'
            # a worker that served no request of this kind has no sample of it (flaky before:
            # one worker served only streams in a CI run of 2026-12-04)
            assert s[count] == s[inf] == sent / 2 == a.get(count, 0) + b.get(count, 0)
            assert s[total] > 0
            assert abs(s[total] - (a.get(total, 0) + b.get(total, 0))) < 1e-9
        # the scrapes themselves are counted too; at least the earlier ones
        assert s['utilityguard_request_duration_seconds_count{endpoint="chat_completions"}'
                 ] == sent
    assert metrics_dir.is_dir()  # the operator's directory is kept
