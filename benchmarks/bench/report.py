"""Bench outputs: the terminal table, ``results.json``, ``report.md`` and PNG plots."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.bench.result import BenchResult, shown_path

COLUMNS = (("utility_auc", "UtilityAUC"), ("mean_utility", "Mean U"),
           ("answer_rate", "Answer rate"), ("ans_acc", "Ans. Acc"), ("ref_acc", "Ref. Acc"),
           ("policy_consistency", "Consistency"), ("normalized_regret", "Norm. regret"),
           ("aurc", "AURC"), ("ece10", "ECE-10"), ("brier", "Brier"))


def fmt(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{digits}f}"


def _cell(res: dict[str, Any], key: str) -> str:
    ci = res.get(f"{key}_ci")
    return fmt(res[key]) + (f" [{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" if ci else "")


def terminal_table(results: BenchResult) -> Table:
    t = Table(title=f"utilityguard bench — {results.responses.model} on "
                    f"{results.n} items, C_R = {results.c_r:g} (95% bootstrap CI)")
    # never truncate a policy name (rich shrinks columns to 80 characters off a terminal)
    t.add_column("policy", no_wrap=True,
                 min_width=max((len(n) for n in results.policies), default=6))
    for _, label in COLUMNS[:5]:
        t.add_column(label, justify="right")
    for name, res in results.policies.items():
        t.add_row(name, *[_cell(res, key) for key, _ in COLUMNS[:5]])
    return t


def _model_label(results: BenchResult) -> str:
    """The model's name and how many items it was scored on (models may cover different
    parts of a dataset)."""
    return f"{results.responses.model} ({results.n} items)"


def models_table(runs: list[BenchResult]) -> Table:
    """One table for several models, a row per model and policy (the paper's Table 1 shape:
    the raw model, the guard and the baselines on each model's own responses)."""
    first = runs[0]
    t = Table(title=f"utilityguard bench — {len(runs)} models, C_R = {first.c_r:g} "
                    "(95% bootstrap CI)")
    t.add_column("model", no_wrap=True)
    t.add_column("policy", no_wrap=True)
    for _, label in COLUMNS[:5]:
        t.add_column(label, justify="right")
    for k, results in enumerate(runs):
        model = _model_label(results)
        for j, (name, res) in enumerate(results.policies.items()):
            t.add_row(model if j == 0 else "", name, *[_cell(res, key) for key, _ in COLUMNS[:5]],
                      end_section=j == len(results.policies) - 1 and k < len(runs) - 1)
    return t


def models_markdown(runs: list[BenchResult]) -> str:
    """:func:`models_table` as Markdown (UtilityAUC with its interval, then the point values)."""
    head = "| model | policy | " + " | ".join(label for _, label in COLUMNS[:5]) + " |"
    sep = "|" + " --- |" * 7
    rows = [f"| {_model_label(r)} | `{name}` | {_cell(res, 'utility_auc')} | "
            + " | ".join(fmt(res[k]) for k, _ in COLUMNS[1:5]) + " |"
            for r in runs for name, res in r.policies.items()]
    return "\n".join([head, sep, *rows])


def models_frontier_markdown(runs: list[BenchResult]) -> str:
    """Each model's frontier at the paper's prices: the budget each fixed ``C_R`` implies."""
    rows = [f"| {p['c_r']:g} | {_model_label(r)} | {p['refusals_per_request']:.4f} | "
            f"{p['rate_of_answerable']:.4f} | {p['welfare_per_request']:.4f} | "
            f"{p.get('realised_unnecessary_refusal_rate', float('nan')):.4f} |"
            for k in range(max((len(r.frontier.get("paper", [])) for r in runs), default=0))
            for r in runs if r.frontier and k < len(r.frontier["paper"])
            for p in [r.frontier["paper"][k]]]
    head = ("| C_R | model | R per request | R / answerable | P per request | "
            "realised unnecessary-refusal rate |")
    return "\n".join([head, "|" + " --- |" * 6, *rows])


def print_table(results: BenchResult, console: Console | None = None) -> None:
    (console or Console()).print(terminal_table(results))


def markdown_table(results: BenchResult) -> str:
    head = "| policy | " + " | ".join(label for _, label in COLUMNS) + " |"
    sep = "|" + " --- |" * (len(COLUMNS) + 1)
    rows = [f"| `{name}` | " + " | ".join(fmt(res[k]) for k, _ in COLUMNS) + " |"
            for name, res in results.policies.items()]
    return "\n".join([head, sep, *rows])


def _signed(v: Any, digits: int = 3) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.{digits}f}"


def paired_md(paired: dict[str, Any] | None) -> str:
    """Markdown tables of ``reference - baseline`` with paired bootstrap intervals; a cell
    whose whole interval is above 0 is marked ``*``."""
    if not paired or not paired.get("baselines"):
        return "(no paired differences)"
    grid = paired["c_r"]
    head = "| baseline | " + " | ".join(f"C_R={c:g}" for c in grid) + " |"
    sep = "|" + " --- |" * (len(grid) + 1)
    parts = []
    for metric, label in (("utility_auc", "UtilityAUC"), ("mean_utility", "mean utility")):
        rows = []
        for name, d in paired["baselines"].items():
            cells = []
            for diff, ci in zip(d[metric]["diff"], d[metric]["ci"], strict=True):
                mark = "*" if ci and ci[0] > 0 else ""
                cells.append(_signed(diff) + (f" [{_signed(ci[0])}, {_signed(ci[1])}]{mark}"
                                              if ci else ""))
            rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
        parts.append(f"`{paired['reference']}` minus each baseline, {label}:\n\n"
                     + "\n".join([head, sep, *rows]))
    return "\n\n".join(parts)


def frontier_section(results: BenchResult) -> str:
    """The guard's frontier ``P(R_max)`` and its slope ``C_R*`` (paper prices first)."""
    if not results.frontier:
        return "(no frontier)"
    from benchmarks.bench.frontier import frontier_markdown

    return (
        "The best expected utility the guard's own estimates (out of fold: L, p, alpha) allow "
        "with at most R expected unnecessary refusals per request, `P(R)`, and its slope "
        "`C_R*(R) = P'(R)`: the price that makes the guard use exactly that follow-up "
        "budget. Rows marked `paper` are the fixed prices the paper reports: each selects "
        "one point of the curve. The last two columns are what the decisions at that price "
        "realised (answerability labels, true costs, grades).\n\n"
        + frontier_markdown(results.frontier))


def report_md(results: BenchResult, plots: list[str]) -> str:
    r, s = results.responses, results.settings
    ci_rows = "\n".join(
        f"| `{name}` | {_cell(res, 'utility_auc')} | {_cell(res, 'mean_utility')} |"
        for name, res in results.policies.items())
    sweep = results.sweep
    marks = [k for k, c in enumerate(sweep.c_r) if c in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0,
                                                               16.0, 32.0, 64.0)]
    sweep_head = "| policy | " + " | ".join(f"C_R={sweep.c_r[k]:g}" for k in marks) + " |"
    sweep_rows = "\n".join(
        f"| `{name}` | " + " | ".join(fmt(vals[k], 3) for k in marks) + " |"
        for name, vals in sweep.utility_auc.items())
    dom_rows = "\n".join(
        f"| {dom} | {d['guard']['n']} | " + " | ".join(
            fmt(d[p]["contribution"], 3) for p in ("model", "guard", "oracle")) + " |"
        for dom, d in results.domains.items())
    figs = "\n".join(f"![{p}]({p})" for p in plots)
    return f"""# utilityguard bench report

- Responses: `{shown_path(r.file)}` (sha256 `{r.sha256[:16]}...`), model `{r.model}`,
  {results.n} items: the ids the dataset and the responses share
  ({r.missing_responses} dataset items without a response,
  {r.unmatched_responses} response records for ids not in the dataset, not used).
- C_R = {results.c_r:g}; confidence signal `{s.signal}`.
- Costs for `guard`: {s.cost}.
- Probabilities: {s.probability}.
- Answerability (`alpha` of the guard's rule): {s.answerability}; ROC AUC
  {fmt(s.answerability_auc, 3)}.
- Bootstrap: {s.bootstrap} resamples of items; cross-fitting: {s.folds} folds
  ({'holding out whole sources' if s.fold_groups else 'random'}),
  seed {s.seed}.

## Policies at C_R = {results.c_r:g}

{markdown_table(results)}

95% bootstrap intervals:

| policy | UtilityAUC | mean utility |
| --- | --- | --- |
{ci_rows}

## Paired differences

The guard minus each baseline on the same items: the point difference, and its paired
bootstrap 95% interval (the same {results.paired.get('bootstrap', 0)} resamples
for both policies, differences taken resample by resample); `*` marks an interval wholly
above 0.

{paired_md(results.paired)}

## C_R sweep (UtilityAUC)

{sweep_head}
|{" --- |" * (len(marks) + 1)}
{sweep_rows}

## Budget–welfare frontier

{frontier_section(results)}

## Contribution to mean utility by domain

| domain | n | model | guard | oracle |
| --- | --- | --- | --- | --- |
{dom_rows}

{figs}
"""


def write_outputs(results: BenchResult, out: Path, *, plots: bool = True) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    made: list[str] = []
    if plots:
        from benchmarks.bench.plots import make_plots

        made = make_plots(results, out)
    (out / "results.json").write_text(json.dumps(results.to_json(), indent=2) + "\n")
    (out / "report.md").write_text(report_md(results, made))
    return made
