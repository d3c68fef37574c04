"""PNG plots of the bench (matplotlib, the ``bench`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.bench.result import BenchResult


def _save(plt: Any, fig: Any, ax: Any, out: Path, name: str) -> str:
    """Legend, layout, write ``out/name`` and close the figure; return ``name``."""
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def make_plots(results: BenchResult, out: Path) -> list[str]:
    """Write the plots; return their file names (empty without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    names = []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, curve in results.curves.items():
        ax.plot(curve.coverage, curve.utility, label=name, lw=1.5)
    ax.set_xlabel("coverage (share of responses delivered, by decreasing score)")
    ax.set_ylabel("mean utility U(tau)")
    ax.set_title(f"Utility curves at C_R = {results.c_r:g}")
    names.append(_save(plt, fig, ax, out, "utility_curves.png"))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    cr = results.sweep.c_r
    for name, vals in results.sweep.utility_auc.items():
        ax.plot([c if c > 0 else 0.005 for c in cr], vals, label=name, lw=1.5)
    ax.set_xscale("log")
    ax.set_xlabel("C_R (price of an unnecessary refusal; 0 drawn at 0.005)")
    ax.set_ylabel("UtilityAUC")
    ax.set_title("UtilityAUC against C_R")
    names.append(_save(plt, fig, ax, out, "utility_auc_vs_c_r.png"))

    if results.frontier:
        from benchmarks.bench.frontier import plot_frontier

        if plot_frontier({str(results.responses.model): results.frontier},
                         out / "budget_frontier.png"):
            names.append("budget_frontier.png")

    doms = list(results.domains)
    pols = ["model", "guard", "guard_oracle_cost", "always_refuse", "oracle"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / len(pols)
    for k, p in enumerate(pols):
        vals = [results.domains[d][p]["contribution"] for d in doms]
        ax.bar([i + k * width for i in range(len(doms))], vals, width, label=p)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_yscale("symlog")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(doms))], doms, rotation=30, ha="right")
    ax.set_ylabel("contribution to mean utility (symlog)")
    ax.set_title(f"Utility contribution by domain, C_R = {results.c_r:g}")
    names.append(_save(plt, fig, ax, out, "domain_contributions.png"))
    return names
