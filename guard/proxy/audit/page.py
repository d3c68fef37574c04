"""``audit report``: one self-contained HTML page of plots about an audit log.

:func:`write_report` reads the decisions (and the feedback labels, when the log has any) from
a SQLite path or a PostgreSQL URL (:func:`~guard.proxy.audit.store.read_rows`) and writes
``DIR/index.html``: a summary table and inline SVG figures (:mod:`guard.proxy.audit.svg`) —
decisions over time, answer rate by predicted-cost band, the distribution of ``p`` against the
thresholds, refusals by policy version, where the text that set each price sits (with how
to trust an application's own prompt or tools when they priced refusals), and, where feedback
exists, the accuracy of delivered
answers and the realised utility of the guard against always-answer and always-refuse (the
paper's utility, :func:`policies.utility.response_utility`). The page loads nothing from the
network: no script, no stylesheet, no font, no image file.

Realised utility, per labelled decision (a label with ``correct`` set, or ``answerable``
false): the label's ``cost`` when given, else the predicted one; the decision's ``C_R``;
``answerable`` from the label (true when unknown). The guard "answered" when the reply was
delivered: an ``answer`` decision, or any decision in shadow mode except the model's own
refusal.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from guard.asking import TRUSTABLE_ROLES
from guard.decision_records import NO_TEXT_PRICED, PRICED_BY_NAMES
from guard.exceptions import AuditStoreError
from guard.proxy.audit.schema import DECISIONS, FEEDBACK
from guard.proxy.audit.store import read_rows
from guard.proxy.audit.svg import bar_chart, histogram, scatter
from policies.decision import PAPER_THRESHOLD, THRESHOLD
from policies.utility import response_utility

#: Upper edges of the predicted-cost bands (the last band is open).
COST_BANDS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)
MAX_POINTS = 2000  # scatter points drawn (evenly spaced over the log)
_OUTCOMES = ("answer", "refuse", "passthrough_refusal")


def latest_labels(target: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The latest feedback label of each request id (empty when the log has none)."""
    try:
        rows = read_rows(target, FEEDBACK)
    except AuditStoreError:
        return {}
    return {r["request_id"]: r for r in rows}


def delivered_answer(row: dict[str, Any]) -> bool:
    """True when the client received the model's reply (see the module docstring)."""
    if row["decision"] == "passthrough_refusal":
        return False
    return bool(row["decision"] == "answer" or row["mode"] == "shadow")


def _band(cost: float) -> str:
    lo = 0.0
    for hi in COST_BANDS:
        if cost < hi:
            return f"{lo:g}-{hi:g}"
        lo = hi
    return f">= {lo:g}"


def _figure(fig_id: str, caption: str, svg: str) -> str:
    return (f'<figure id="{fig_id}" class="plot">{svg}<figcaption>{escape(caption)}'
            "</figcaption></figure>")


def _over_time(rows: Sequence[dict[str, Any]], bins: int) -> str:
    t0, t1 = rows[0]["ts"], rows[-1]["ts"]
    width = max((t1 - t0) / bins, 1e-9)
    counts = {o: [0.0] * bins for o in _OUTCOMES}
    for r in rows:
        counts[r["decision"]][min(int((r["ts"] - t0) / width), bins - 1)] += 1
    fmt = "%H:%M:%S" if t1 - t0 < 86400 else "%m-%d %H:%M"
    labels = [time.strftime(fmt, time.gmtime(t0 + i * width)) for i in range(bins)]
    svg = bar_chart(labels, counts, title="Decisions over time", ylabel="decisions",
                    xlabel=f"start of each interval of {width:.3g} s (UTC)", stacked=True)
    return _figure("fig-decisions-over-time", "Decisions per time interval, by outcome.", svg)


def _by_cost(rows: Sequence[dict[str, Any]]) -> str:
    seen: Counter[str] = Counter()
    answered: Counter[str] = Counter()
    order = [_band(c) for c in (0.0, *COST_BANDS)]
    for r in rows:
        band = _band(r["cost"])
        seen[band] += 1
        answered[band] += r["decision"] == "answer"
    bands = [b for b in order if seen[b]]
    svg = bar_chart(bands, {"answer rate": [answered[b] / seen[b] for b in bands]},
                    title="Answer rate by predicted cost L", ylabel="share answered",
                    xlabel="predicted cost band", ylim=(0.0, 1.05),
                    labels=[f"n={seen[b]}" for b in bands])
    return _figure("fig-answer-rate-by-cost", "Share of decisions that delivered the answer, "
                   "per band of the predicted cost of a wrong answer.", svg)


def _p_vs_threshold(all_rows: Sequence[dict[str, Any]]) -> str:
    # a decision known before the reply (an early stream: every p answers) has no p
    rows = [r for r in all_rows if r["p"] is not None and r["threshold"] is not None]
    unread = len(all_rows) - len(rows)
    note = (f" {unread} decision(s) without p (decided before the reply, such as an early "
            "stream) are not drawn." if unread else "")
    if not rows:
        return f"<p id=\"no-p\">No decision has a p to draw.{note}</p>"
    hist = histogram({"p (confidence)": [r["p"] for r in rows],
                      f"threshold {THRESHOLD}": [r["threshold"] for r in rows]},
                     bins=20, lo=0.0, hi=1.0, title="Distribution of p and of the thresholds",
                     xlabel="probability (thresholds below 0 / above 1 in the end bins)")
    step = max(1, math.ceil(len(rows) / MAX_POINTS))
    groups: dict[str, list[tuple[float, float]]] = {o: [] for o in _OUTCOMES}
    for r in rows[::step]:
        groups[r["decision"]].append((r["threshold"], r["p"]))
    lo = min(0.0, *(r["threshold"] for r in rows))
    points = scatter({k: v for k, v in groups.items() if v}, title="p against its threshold",
                     xlabel="threshold", ylabel="p", xlim=(max(lo, -1.0), 1.0),
                     ylim=(0.0, 1.0), diagonal=True)
    return (_figure("fig-p-histogram", "Where p falls relative to the thresholds it is "
                    f"compared with: each decision's threshold is {THRESHOLD}, with the "
                    f"alpha = P(answerable) it used (alpha = 1: {PAPER_THRESHOLD})." + note,
                    hist) +
            _figure("fig-p-vs-threshold", "Each decision (at most 2000 drawn; thresholds "
                    "below -1 drawn at -1): above the dashed line p >= threshold.", points))


def _by_policy(rows: Sequence[dict[str, Any]]) -> str:
    seen: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for r in rows:
        name = r.get("policy") or "(no policy)"
        seen[name] += 1
        refused[name] += r["decision"] == "refuse"
    names = sorted(seen)
    svg = bar_chart(names, {"refusal rate": [refused[n] / seen[n] for n in names]},
                    title="Refusals by policy version", ylabel="share refused by the guard",
                    ylim=(0.0, 1.05), labels=[f"{refused[n]}/{seen[n]}" for n in names])
    return _figure("fig-refusals-by-policy", "Share of decisions the guard refused, per policy "
                   "version that decided.", svg)


def _priced_by(rows: Sequence[dict[str, Any]]) -> str:
    """A table of where the text that set each price sits, with the guard's refusals of each,
    and, when a system or developer prompt or a tool definition set the price of any refusal,
    how to trust it."""
    no_text, unrecorded = f"(no text: {NO_TEXT_PRICED})", "(not recorded)"
    seen: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for r in rows:
        where = r.get("priced_by")
        key = (where if where in PRICED_BY_NAMES
               else unrecorded if r.get("cost_source") == "model" else no_text)
        seen[key] += 1
        refused[key] += r["decision"] == "refuse"
    order = [k for k in (*PRICED_BY_NAMES, no_text, unrecorded) if seen[k]]
    body = "".join(
        f"<tr><td>{escape(PRICED_BY_NAMES.get(k, k))}</td><td>{seen[k]}</td>"
        f"<td>{refused[k]} ({refused[k] / seen[k]:.1%})</td></tr>" for k in order)
    html = ("<table id=\"priced-by\"><tr><th>the text that set the price</th><th>decisions"
            "</th><th>refused by the guard</th></tr>" + body + "</table>")
    prompts = sum(refused[k] for k in TRUSTABLE_ROLES)
    total = sum(refused.values())
    if prompts:
        html += (f"<p id=\"trust-hint\">{prompts} of the guard's {total} refusals "
                 f"({prompts / total:.1%}) were priced by a sentence of a system or developer "
                 "prompt: the guard reads a prompt a client sends as the client's words. If "
                 "the prompt is your application's own, declare it trusted (<code>serve "
                 "--trusted-prompts \"&lt;the prompt&gt;\"</code>, or a route's "
                 "<code>trusted_prompts</code>): "
                 "its sentences are then not priced, while a prompt a client sends still is. "
                 "<code>utilityguard decide --request FILE --trusted-prompts \"&lt;the "
                 "prompt&gt;\"</code> shows what that changes before you serve.</p>")
    tools = refused["tools"]
    if tools:
        html += (f"<p id=\"trust-tools-hint\">{tools} of the guard's {total} refusals "
                 f"({tools / total:.1%}) were priced by a tool definition: the guard reads a "
                 "tool a client sends as the client's words. If the tools are your "
                 "application's own, declare them trusted (<code>serve --trusted-tools "
                 "FILE</code>, the JSON of your tool definitions, or a route's "
                 "<code>trusted_tools</code>): they are then not priced, while a tool a client "
                 "writes still is. <code>utilityguard decide --request FILE --trusted-tools "
                 "FILE</code> shows what that changes before you serve.</p>")
    return html


def _feedback(rows: Sequence[dict[str, Any]], labels: dict[str, dict[str, Any]]
              ) -> tuple[str, dict[str, float | int]]:
    items = []
    for r in rows:
        lab = labels.get(r["request_id"])
        if lab is None:
            continue
        answerable = lab["answerable"] is None or bool(lab["answerable"])
        if answerable and lab["correct"] is None:
            continue
        items.append((r, answerable, bool(lab["correct"]), lab["cost"] or r["cost"]))
    if not items:
        return "<p>No decision has a usable label yet (POST /v1/feedback).</p>", {}
    delivered = [it for it in items if delivered_answer(it[0])]
    acc = {"delivered answers": (sum(it[2] for it in delivered) / len(delivered)
                                 if delivered else 0.0),
           "all labelled replies": sum(it[2] for it in items) / len(items)}
    acc_svg = bar_chart(list(acc), {"accuracy": list(acc.values())},
                        title="Accuracy of delivered answers", ylabel="share correct",
                        ylim=(0.0, 1.05), labels=[f"n={len(delivered)}", f"n={len(items)}"])

    def mean_utility(answered: Sequence[bool]) -> float:
        u = [float(response_utility(a, d, c, cost, r["c_r"]))
             for (r, a, c, cost), d in zip(items, answered, strict=True)]
        return sum(u) / len(u)

    utility = {"guard": mean_utility([delivered_answer(it[0]) for it in items]),
               "always answer": mean_utility([True] * len(items)),
               "always refuse": mean_utility([False] * len(items))}
    util_svg = bar_chart(list(utility), {"mean utility": list(utility.values())},
                         title="Realised utility per decision", ylabel="mean utility",
                         labels=[f"{v:.3f}" for v in utility.values()])
    html = (_figure("fig-accuracy", f"Share correct among {len(delivered)} delivered answers "
                    f"and among all {len(items)} labelled replies.", acc_svg) +
            _figure("fig-utility", "Mean realised utility (+1 correct answer, -L wrong answer, "
                    "-C_R unnecessary refusal, +1 refusing an unanswerable query) on the "
                    "labelled decisions.", util_svg))
    return html, {"labelled decisions used": len(items),
                  **{f"accuracy of {k}": round(v, 4) for k, v in acc.items()},
                  **{f"mean utility: {k}": round(v, 4) for k, v in utility.items()}}


_STYLE = ("body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
          "figure{display:inline-block;margin:8px;padding:8px;border:1px solid #ddd}"
          "figcaption{font-size:12px;color:#555;max-width:640px}"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:left}")


def render(rows: Sequence[dict[str, Any]], labels: dict[str, dict[str, Any]], source: str, *,
           bins: int = 24) -> str:
    """The HTML page of ``rows`` (decisions, oldest first) and their ``labels``."""
    head = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"utilityguard audit report</title><style>{_STYLE}</style></head><body>"
            f"<h1>utilityguard audit report</h1><p>Source: {escape(source)}</p>")
    if not rows:
        return head + "<p id=\"empty\">The audit log holds no decision.</p></body></html>"
    outcomes = Counter(r["decision"] for r in rows)
    when = [time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(rows[i]["ts"])) for i in (0, -1)]
    summary = [("decisions", str(len(rows))), ("from", when[0]), ("to", when[1]),
               *((o, f"{outcomes[o]} ({outcomes[o] / len(rows):.1%})") for o in _OUTCOMES),
               ("shadow mode", str(sum(r["mode"] == "shadow" for r in rows))),
               ("with a feedback label", str(sum(r["request_id"] in labels for r in rows)))]
    feedback_html, figures = (_feedback(rows, labels) if labels else
                              ("<p>No feedback in this log.</p>", {}))
    summary += [(k, f"{v:g}") for k, v in figures.items()]
    table = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in summary)
    return (head + f"<table id=\"summary\">{table}</table><h2>Decisions</h2>"
            + _over_time(rows, bins) + _by_cost(rows) + _p_vs_threshold(rows)
            + _by_policy(rows) + "<h2>What set the price</h2>" + _priced_by(rows)
            + "<h2>Feedback</h2>" + feedback_html + "</body></html>")


def write_report(target: str | os.PathLike[str], out: str | os.PathLike[str], *,
                 name: str | None = None, bins: int = 24) -> Path:
    """Write ``out/index.html`` for the audit log ``target``; its path."""
    rows = list(read_rows(target, DECISIONS))
    labels = latest_labels(target) if rows else {}
    page = render(rows, labels, name or str(target), bins=bins)
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    (path / "index.html").write_text(page, encoding="utf-8")
    return path / "index.html"
