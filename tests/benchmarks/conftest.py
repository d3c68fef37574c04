"""Synthetic bench inputs: a UtilityBench-shaped dataset, graded response records whose
logprob signal carries real information about correctness, and a small trained cost model.

The generator is deterministic (fixed seeds). Costs are log-normal with median about 2 and a
domain effect the cost model can learn from the question text, plus a few very costly items;
half the items are answerable. Correct answers have high token log-probabilities, wrong ones
low, so calibration and the guard have something to work with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from cost_models import CostRegressor, save_model
from cost_models.datasets import DatasetItem, load_utilitybench
from cost_models.persistence import sha256_rows

if TYPE_CHECKING:
    from benchmarks.bench.result import BenchResult

DOMAINS = {
    # domain: (log-cost offset, topic words)
    "medicine": (0.8, ["dose", "ibuprofen", "fever", "insulin", "allergy", "infant", "tablet",
                       "pregnancy", "antibiotic", "blood pressure"]),
    "programming": (0.0, ["python", "regex", "segfault", "compiler", "list", "thread", "socket",
                          "database index", "unicode", "recursion"]),
    "geography": (-0.8, ["river", "capital", "mountain", "island", "desert", "border",
                         "lake", "volcano", "coastline", "glacier"]),
}
OPENERS = ["What is", "How does", "Explain why", "Tell me about", "Which", "When should",
           "Is it true that", "Describe"]
FILLER = ["quickly", "in detail", "for a beginner", "today", "exactly", "in one word",
          "with an example", "please"]


def make_items(n: int = 120, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` dataset items (dicts in the item contract of docs/design.md), domains round robin, half
    answerable, log-normal costs (median about 2) with a few high-cost items."""
    rng = np.random.default_rng(seed)
    names = list(DOMAINS)
    items = []
    for i in range(n):
        dom = names[i % len(names)]
        offset, words = DOMAINS[dom]
        w1, w2 = rng.choice(words, size=2, replace=False)
        q = (f"{rng.choice(OPENERS)} the {w1} and the {w2} matter in case {i} "
             f"({rng.choice(FILLER)})?")
        cost = float(np.exp(np.log(2.0) + offset + rng.normal(0.0, 0.5)))
        if i % 29 == 7:  # a few very costly errors
            cost = float(rng.uniform(30.0, 60.0))
        items.append({
            "id": f"{dom[:3]}-{i:04d}", "question": q, "answerable": bool(i % 2 == 0),
            "cost": round(cost, 6), "domain": dom, "source": f"src-{dom}-{i % 4}",
            "reference": ["42"], "answer_type": "number",
        })
    return items


def make_responses(items: Sequence[dict[str, Any]], seed: int = 1) -> list[dict[str, Any]]:
    """One graded response record per item. The model answers most items; an answer to an
    answerable item is right 60% of the time; right answers have high log-probabilities."""
    rng = np.random.default_rng(seed)
    out = []
    for it in items:
        answered = bool(rng.random() < (0.9 if it["answerable"] else 0.75))
        if not answered:
            correct = None
            mean = float(rng.normal(-0.5, 0.2))
        else:
            correct = bool(it["answerable"] and rng.random() < 0.6)
            mean = float(rng.normal(-0.15, 0.08) if correct else rng.normal(-0.9, 0.35))
        mean = min(mean, -1e-3)
        low10 = mean * 2.5 - float(rng.exponential(0.2))
        out.append({
            "id": it["id"], "response": "42" if correct else ("I cannot answer." if not answered
                                                             else "41"),
            "answered": answered, "correct": correct, "model": "synthetic-1",
            "confidence": {"verbal": None, "logprob_mean": mean, "logprob_low10": low10,
                           "consistency": None},
        })
    return out


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def train_cost_model(items: Sequence[DatasetItem | dict[str, Any]], directory: Path,
                     *, data_hash: bool = True) -> Path:
    """A small affix-ridge cost model fitted on ``items``; its sidecar records the
    training-data hash of exactly those rows when ``data_hash``."""
    rows = [it.model_dump() if isinstance(it, DatasetItem) else dict(it) for it in items]
    texts = [r["question"] for r in rows]
    cost = np.array([r["cost"] for r in rows], dtype=np.float64)
    model = CostRegressor(cv=3).fit(texts, cost)
    meta: dict[str, Any] = {"kind": model.kind, "ridge": model.ridge, "n_train": len(rows)}
    if data_hash:
        meta["training_data_sha256"] = sha256_rows(
            [(t, float(c)) for t, c in zip(texts, cost, strict=True)])
    save_model(model, directory, meta)
    return directory


@dataclass(frozen=True)
class BenchFiles:
    """A synthetic dataset, its responses and a cost model trained on other questions."""

    data: Path
    responses: Path
    cost_model: Path
    items: list[DatasetItem]
    item_rows: list[dict[str, Any]]
    response_rows: list[dict[str, Any]]


@pytest.fixture(scope="session")
def bench_files(tmp_path_factory: pytest.TempPathFactory) -> BenchFiles:
    """120 items in 3 domains with informative responses; the cost model is trained on a
    different synthetic draw (a foreign model: the bench uses it as is)."""
    d = tmp_path_factory.mktemp("bench")
    rows = make_items(120, seed=0)
    data = write_jsonl(d / "items.jsonl", rows)
    resp_rows = make_responses(rows, seed=1)
    responses = write_jsonl(d / "responses.jsonl", resp_rows)
    other = make_items(90, seed=5)
    for r in other:  # other questions, same kind of text
        r["question"] = r["question"].replace("case", "situation")
    model = train_cost_model(other, d / "cost_model")
    return BenchFiles(data, responses, model, load_utilitybench(data), rows, resp_rows)


@pytest.fixture(scope="session")
def bench_results(bench_files: BenchFiles) -> BenchResult:
    """One bench run on the synthetic data (shared by the read-only tests)."""
    from benchmarks.bench.run import run_bench

    return run_bench(bench_files.items, bench_files.responses, c_r=2.0,
                     cost_model=bench_files.cost_model, n_boot=50, seed=0)


@pytest.fixture
def write_rows(tmp_path: Path) -> Callable[[str, Sequence[dict[str, Any]]], Path]:
    """Write rows as JSONL under the test's tmp dir."""
    def write(name: str, rows: Sequence[dict[str, Any]]) -> Path:
        return write_jsonl(tmp_path / name, rows)

    return write


@dataclass(frozen=True)
class Synth:
    """The generator functions, for tests (conftest is not importable under
    ``--import-mode=importlib``)."""

    make_items: Callable[..., list[dict[str, Any]]]
    make_responses: Callable[..., list[dict[str, Any]]]
    write_jsonl: Callable[[Path, Sequence[dict[str, Any]]], Path]
    train_cost_model: Callable[..., Path]


@pytest.fixture(scope="session")
def synth() -> Synth:
    return Synth(make_items, make_responses, write_jsonl, train_cost_model)


# --- local HTTP servers -------------------------------------------------------------------------

@pytest.fixture
def serve_app() -> Any:
    """Start ASGI apps with uvicorn on 127.0.0.1 (a free port each, in a thread); returns
    ``start(app) -> base URL ending in /v1``. Every server stops when the test ends."""
    import socket
    import threading
    import time

    import uvicorn

    started: list[tuple[Any, threading.Thread, socket.socket]] = []

    def start(app: Any) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(app, log_level="warning", lifespan="off", ws="none", http="h11")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        started.append((server, thread, sock))
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.01)
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"

    yield start
    for server, thread, sock in started:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive()


def crossfit(files: BenchFiles, data: Any, folds: Any, *, c_r: float = 2.0,
             refit_with: CostRegressor | None = None) -> Any:
    """The bench's cross-fitted guard (a policy per training fold, held-out items decided by
    its Guard) on ``data``: the files' foreign cost model as is, or a refit of
    ``refit_with``'s settings per fold."""
    from benchmarks.bench.crossfit import crossfit_guard
    from cost_models import load_model

    groups = [it.source for it in files.items if it.id in set(data.ids)]
    model = refit_with if refit_with is not None else load_model(files.cost_model)
    return crossfit_guard(data, "logprob_mean", folds, groups, c_r, cost_model=model,
                          refit=refit_with is not None)
