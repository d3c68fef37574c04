"""The guard against the raw model on the costliest questions (issue 35):
``python -m benchmarks.costly_quartile``.

The guard is cross-fitted exactly as ``utilityguard bench`` fits it (folds grouped by source
with ``--group-folds``: every fitted piece scored on sources it never saw), with the default
policy's recipe (a multi-signal calibrator of ``verbal`` and ``logprob_mean``, a cost scale).
On the items whose true cost ``L`` is in the top quartile, per model: the mean utility of the
raw model (every reply delivered) and of the guard, and their paired difference with a
bootstrap interval over those items; and how many costly errors the raw model makes there
(answers that are wrong or that should have been refusals), so that a result without costly
errors to catch says so.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench.contexts import mean_ci, utilities


def quartile(responses: Path, *, folds: int = 5, bootstrap: int = 1000, seed: int = 0,
             c_r: float = 2.0, multi: Sequence[str] = ("verbal", "logprob_mean")
             ) -> dict[str, Any]:
    """The figures of one model's responses (see the module docstring)."""
    from benchmarks.bench.crossfit import choose_signal, make_folds
    from benchmarks.bench.data import load_bench
    from benchmarks.bench.run import crossfit
    from cost_models.datasets import load_seed

    items = load_seed()
    data = load_bench(items, responses)
    source = {it.id: it.source for it in items}
    groups = [source[i] for i in data.ids]
    fold_idx = make_folds(data.n, folds, seed, data.canonical, groups)
    _, _, fit = crossfit(data, items, groups, fold_idx, c_r, None, None, None, False,
                          lambda _m: None, multi=multi, cost_scale=True)
    top = data.cost >= np.percentile(data.cost, 75)
    u_model = utilities(data, np.ones(data.n, dtype=bool), c_r)[top]
    u_guard = utilities(data, fit.answer, c_r)[top]
    diff = u_guard - u_model
    samples = np.random.default_rng(seed).integers(0, diff.size, size=(bootstrap, diff.size))
    wrong = data.answered & ~(data.answerable & data.correct)
    return {"model": data.model, "signal": choose_signal(data, None, among=list(multi)),
            "n_top_quartile": int(top.sum()),
            "cost_from": float(np.percentile(data.cost, 75)),
            "model_mean_utility": float(u_model.mean()),
            "guard_mean_utility": float(u_guard.mean()),
            "difference": float(diff.mean()),
            "difference_ci": mean_ci(diff, samples),
            "model_costly_errors": int((wrong & top).sum()),
            "guard_costly_errors": int((wrong & top & fit.answer).sum()),
            "guard_answer_rate": float(fit.answer[top].mean()),
            "model_answer_rate": float(data.answered[top].mean())}


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.bench.data import shipped_response_files

    p = argparse.ArgumentParser(prog="python -m benchmarks.costly_quartile",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--responses", type=Path, action="append", default=None,
                   help="graded response records (default: every shipped model's)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (1000)")
    args = p.parse_args(argv)
    rows = [quartile(f, bootstrap=args.bootstrap)
            for f in (args.responses or shipped_response_files())]
    print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
