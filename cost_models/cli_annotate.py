"""``utilityguard annotate tuples|link|judge|fit|duplicates``: the paper's consequence-annotation
pipeline, and near-duplicate candidates for reading."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cost_models.annotation.diagnostics import (
    exposure_report,
    judge_agreement,
    judgments_per_item,
    position_balance,
    split_half_reliability,
)
from cost_models.annotation.duplicates import candidate_pairs, merge_duplicates, read_aliases
from cost_models.annotation.fit import (
    Judgment,
    fit_bradley_terry,
    heldout_nll,
    scale_l2,
    select_l2,
)
from cost_models.annotation.judges import EscalationPanel, Judge, LLMJudge, items_of, parse_reply
from cost_models.annotation.linking import cost_anchors, frequent_winners, most_shares
from cost_models.annotation.tuples import TUPLE_SIZE, BWSTuple, build_tuples
from cost_models.datasets import CANDIDATES, read_rows
from utilityguard_base.exceptions import InvalidValueError, JudgeError
from utilityguard_base.jsonl import append_jsonl, write_jsonl

if TYPE_CHECKING:
    from utilityguard_base.progress import Bar


def register(sub: Any) -> None:
    p = sub.add_parser("annotate", help="consequence costs by Best-Worst Scaling + Bradley-Terry",
                       description="Build BWS tuples, judge them, fit consequence costs "
                                   "(UtilityBench Appendix A.3-A.4).")
    s = p.add_subparsers(dest="step", metavar="STEP", required=True)
    _add_tuples(s)
    _add_link(s)
    _add_judge(s)
    _add_fit(s)
    _add_duplicates(s)



def _add_tuples(s: Any) -> None:
    """``annotate tuples``."""
    t = s.add_parser("tuples", help="build 1.25 x N four-item tuples from coarse groups")
    t.add_argument("--data", required=True, help="items (.jsonl/.csv/.parquet) with a group field")
    t.add_argument("--group-field", default="group", help="coarse group column (default: group)")
    t.add_argument("--ratio", type=float, default=1.25, help="tuples per item (1.25)")
    t.add_argument("--seed", type=int, default=20260713, help="random seed (20260713)")
    t.add_argument("--no-shuffle", action="store_true",
                   help="keep the construction order inside each tuple (how tuples were made "
                        "before shuffling, e.g. the seed set's) instead of shuffling positions")
    t.add_argument("--min-per-item", type=int, default=3,
                   help="every item is in at least this many tuples (3)")
    t.add_argument("--prefix", default="t",
                   help="tuple ids are PREFIX0001...; tuples added to an existing set need a "
                        "prefix of their own (default: t)")
    t.add_argument("--anchors", metavar="ITEMS",
                   help="already-costed items (with a cost column, e.g. the seed set's "
                        "items.jsonl): a share of them, spread evenly over the cost scale, is "
                        "mixed into the tuples so new and old items share one scale")
    t.add_argument("--anchor-share", type=float, default=0.2,
                   help="anchors per new item (0.2)")
    t.add_argument("--out", type=Path, required=True, help="tuples JSONL to write")
    t.set_defaults(func=run_tuples)


def _add_link(s: Any) -> None:
    """``annotate link``."""
    lk = s.add_parser(
        "link", help="linking tuples among the items the judges always chose as 'most'",
        description="Items chosen 'most' in at least --min-share of their judgments get a cost "
                    "that follows how often they were shown, not how they compare with each "
                    "other. This builds tuples among those items only (they meet each other "
                    "and the higher-stakes items), every one of them in at least "
                    "--min-per-item new tuples. Judge them, then fit on all tuples.")
    lk.add_argument("--tuples", type=Path, required=True, help="the judged tuples")
    lk.add_argument("--judgments", type=Path, nargs="+", required=True)
    lk.add_argument("--data", required=True, help="the items, with a group field")
    lk.add_argument("--merge", type=Path,
                    help="near-duplicates (id, duplicate_of) pooled before counting, as in fit")
    lk.add_argument("--group-field", default="group", help="coarse group column (group)")
    lk.add_argument("--min-share", type=float, default=0.67,
                    help="share of 'most' choices that makes an item a frequent winner (0.67)")
    lk.add_argument("--ratio", type=float, default=1.25, help="tuples per selected item (1.25)")
    lk.add_argument("--min-per-item", type=int, default=4,
                    help="new tuples per selected item, at least (4)")
    lk.add_argument("--prefix", default="tl", help="tuple id prefix (tl)")
    lk.add_argument("--seed", type=int, default=20261130, help="random seed (20261130)")
    lk.add_argument("--out", type=Path, required=True, help="linking tuples JSONL to write")
    lk.set_defaults(func=run_link)


def _add_judge(s: Any) -> None:
    """``annotate judge``."""
    j = s.add_parser("judge", help="judge tuples with LLM judges or replay recorded judgments",
                     description="Judge every tuple; judgments are appended to --out and a "
                                 "rerun continues where it stopped. With two or more --judge-model "
                                 "the paper's escalation is used (two judges, a third on "
                                 "disagreement, --high-model judges when there is no majority).")
    j.add_argument("--tuples", type=Path, required=True)
    j.add_argument("--data", required=True, help="the items the tuples refer to")
    j.add_argument("--out", type=Path, required=True, help="judgments JSONL (appended)")
    j.add_argument("--upstream", help="OpenAI-compatible base URL for LLM judges")
    j.add_argument("--judge-model", action="append", default=[], help="lower-cost pool model")
    j.add_argument("--high-model", action="append", default=[], help="higher-cost pool model")
    j.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable with the upstream key (never written anywhere)")
    j.add_argument("--replay", type=Path, help="replay judgments recorded in this JSONL instead")
    j.add_argument("--replies", type=Path,
                   help="recorded raw judge replies (JSONL: tuple_id, judge, reply — the text "
                        "each judge returned, 'BEST: n' / 'WORST: n' over the items as "
                        "numbered in the tuple) parsed with the LLM judge's own parser; every "
                        "reply of a tuple becomes one judgment")
    j.add_argument("--seed", type=int, default=0)
    j.set_defaults(func=run_judge)


def _add_fit(s: Any) -> None:
    """``annotate fit``."""
    f = s.add_parser("fit", help="fit Bradley-Terry and write items with costs")
    f.add_argument("--tuples", type=Path, required=True)
    f.add_argument("--judgments", type=Path, nargs="+", required=True)
    f.add_argument("--data", required=True, help="the items (cost column not needed)")
    f.add_argument("--l2", default="paper-scale",
                   help="prior strength: 'paper-scale' (default) = the value whose costs have "
                        "UtilityBench's published mean 5.1217 at median 2; 'auto' = best "
                        "held-out likelihood; or a number >= 0")
    f.add_argument("--out", type=Path, required=True, help="items JSONL with the fitted cost")
    f.add_argument("--report", type=Path, help="diagnostics JSON (default: next to --out)")
    f.add_argument("--merge", type=Path,
                   help="JSONL of confirmed duplicates (id, duplicate_of): each removed copy's "
                        "tuples and judgments count for the copy kept, and the removed copy is "
                        "left out of --out")
    f.set_defaults(func=run_fit)


def _add_duplicates(s: Any) -> None:
    """``annotate duplicates``."""
    d = s.add_parser("duplicates", help="list near-duplicate candidate pairs to read",
                     description="Every pair of questions whose word TF-IDF cosine or wordllama "
                                 "embedding cosine reaches its threshold, most similar first, "
                                 "as JSONL. Candidates only: read each pair to decide.")
    d.add_argument("--data", required=True, help="items with id and question")
    d.add_argument("--tfidf-min", type=float, default=0.28, help="TF-IDF cosine (0.28)")
    d.add_argument("--embed-min", type=float, default=0.60,
                   help="wordllama embedding cosine (0.60); < 0 to skip")
    d.add_argument("--across", default="domain",
                   help="only pairs whose values of this field differ ('' for all pairs)")
    d.add_argument("--out", type=Path, required=True, help="candidate pairs JSONL")
    d.set_defaults(func=run_duplicates)


def _progress(label: str) -> Bar:
    from utilityguard_base.progress import progress_bar

    return progress_bar(label, eta=True)


def read_tuples(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n, row in enumerate(read_rows(path), start=1):
        try:
            out[str(row["tuple_id"])] = [str(i) for i in row["items"]]
        except (KeyError, TypeError):
            raise InvalidValueError(f"{path}, line {n}: a tuple needs tuple_id and items") from None
    return out


def _column(rows: Sequence[dict[str, Any]], field: str) -> str | None:
    """The column the dataset loader would map to ``field`` (by its name candidates)."""
    found = list(dict.fromkeys(k for r in rows[:50] for k in r))
    lower = {c.lower(): c for c in found}
    for name in CANDIDATES[field]:
        if name in found:
            return name
        if name.lower() in lower:
            return lower[name.lower()]
    return None


def read_items(data: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of an item file and their ids, mapped like the dataset loader maps them (the id
    column by its name candidates, else the row number); no cost or answerability needed."""
    rows = read_rows(data)
    if not rows:
        raise InvalidValueError(f"{data}: no items")
    col = _column(rows, "id")
    ids = [str(r[col]) if col and r.get(col) is not None else str(n)
           for n, r in enumerate(rows, start=1)]
    return rows, ids


def read_judgments(paths: Sequence[Path]) -> list[Judgment]:
    out = []
    for path in paths:
        for n, row in enumerate(read_rows(path) if path.stat().st_size else [], start=1):
            try:
                out.append(Judgment.from_dict(row))
            except KeyError as exc:
                raise InvalidValueError(f"{path}, line {n}: missing field {exc}") from None
    return out


def _groups(rows: Sequence[dict[str, Any]], field: str, data: str) -> list[str]:
    if any(field not in r for r in rows):
        found = ", ".join(dict.fromkeys(k for r in rows[:20] for k in r))
        raise InvalidValueError(f"{data}: field {field!r} missing; fields found: {found}")
    return [str(r[field]) for r in rows]


def _write_tuples(out: Path, tuples: Sequence[BWSTuple]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(out, (t.to_dict() for t in tuples))


def run_tuples(args: argparse.Namespace) -> int:
    rows, ids = read_items(args.data)
    groups = _groups(rows, args.group_field, args.data)
    anchors: list[str] = []
    if args.anchors:
        arows, aids = read_items(args.anchors)
        col = _column(arows, "cost")
        if col is None:
            raise InvalidValueError(f"{args.anchors}: anchors need a cost column")
        if clash := sorted(set(aids) & set(ids)):
            raise InvalidValueError(f"{args.anchors}: ids also in {args.data}: "
                                    f"{', '.join(clash[:5])}")
        agroups = dict(zip(aids, _groups(arows, args.group_field, args.anchors), strict=True))
        costs = {i: float(r[col]) for r, i in zip(arows, aids, strict=True)}
        anchors = cost_anchors(costs, max(1, round(args.anchor_share * len(ids))),
                               seed=args.seed)
        ids, groups = ids + anchors, groups + [agroups[i] for i in anchors]
    tuples = build_tuples(ids, groups, ratio=args.ratio, seed=args.seed,
                          shuffle=not args.no_shuffle, min_per_item=args.min_per_item,
                          prefix=args.prefix)
    _write_tuples(args.out, tuples)
    extra = f" ({len(anchors)} of them anchors from {args.anchors})" if anchors else ""
    print(f"wrote {len(tuples)} tuples over {len(ids)} items{extra} to {args.out}")
    return 0


def run_link(args: argparse.Namespace) -> int:
    tuples = read_tuples(args.tuples)
    judgments = read_judgments(args.judgments)
    rows, ids = read_items(args.data)
    if args.merge:
        merged = read_aliases(read_rows(args.merge), str(args.merge))
        tuples, judgments = merge_duplicates(tuples, judgments, merged)
        rows = [r for r, i in zip(rows, ids, strict=True) if i not in merged]
        ids = [i for i in ids if i not in merged]
    group = dict(zip(ids, _groups(rows, args.group_field, args.data), strict=True))
    winners = frequent_winners(tuples, judgments, args.min_share, ids=ids)
    if len(winners) < TUPLE_SIZE:
        raise InvalidValueError(f"only {len(winners)} items reach --min-share "
                                f"{args.min_share}; need at least {TUPLE_SIZE}")
    shares = most_shares(tuples, judgments)
    linking = build_tuples(winners, [group[i] for i in winners], ratio=args.ratio,
                           min_per_item=args.min_per_item, seed=args.seed, prefix=args.prefix)
    _write_tuples(args.out, linking)
    shown = Counter(i for t in tuples.values() for i in t)
    always = sum(1 for i in winners if shares[i][0] == shares[i][1])
    print(f"{len(winners)} items chosen 'most' in >= {args.min_share:.0%} of their judgments "
          f"({always} always), shown {min(shown[i] for i in winners)}-"
          f"{max(shown[i] for i in winners)} times; wrote {len(linking)} linking tuples to "
          f"{args.out}")
    return 0


class _Replay:
    """Every recorded judgment of a tuple (several judges included), once."""

    def __init__(self, path: Path) -> None:
        self.recorded: dict[str, list[Judgment]] = defaultdict(list)
        for j in read_judgments([path]):
            self.recorded[j.tuple_id].append(j)

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]],
              done: Sequence[Judgment] = ()) -> list[Judgment]:
        if tuple_id not in self.recorded:
            raise JudgeError(f"replay: no recorded judgment for {tuple_id}")
        have = {(j.judge, j.best, j.worst) for j in done}
        return [j for j in self.recorded[tuple_id] if (j.judge, j.best, j.worst) not in have]


class _Replies:
    """Recorded raw replies parsed as the LLM judge parses its own: ``BEST``/``WORST`` item
    numbers over the tuple's items in their recorded order."""

    def __init__(self, path: Path) -> None:
        self.recorded: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for n, row in enumerate(read_rows(path), start=1):
            try:
                self.recorded[str(row["tuple_id"])].append((str(row["judge"]), str(row["reply"])))
            except KeyError as exc:
                raise InvalidValueError(f"{path}, line {n}: missing field {exc}") from None

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]],
              done: Sequence[Judgment] = ()) -> list[Judgment]:
        if tuple_id not in self.recorded:
            raise JudgeError(f"replies: no recorded reply for {tuple_id}")
        out = []
        have = {j.judge for j in done}
        for judge, reply in self.recorded[tuple_id]:
            if judge in have:
                continue
            try:
                best, worst = parse_reply(reply, len(items))
            except JudgeError as exc:
                raise JudgeError(f"{judge}: {exc}") from None
            out.append(Judgment(tuple_id, items[best][0], items[worst][0], judge))
        return out


class _Single:
    """One judge, one judgment per tuple (no escalation)."""

    def __init__(self, judge: Judge) -> None:
        self.judge_ = judge

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]],
              done: Sequence[Judgment] = ()) -> list[Judgment]:
        if done:
            return []
        j = self.judge_.judge(tuple_id, items)
        return [Judgment(j.tuple_id, j.best, j.worst, j.judge)]


def run_judge(args: argparse.Namespace) -> int:
    tuples = read_tuples(args.tuples)
    rows, ids = read_items(args.data)
    qcol = _column(rows, "question")
    if qcol is None:
        found = ", ".join(dict.fromkeys(k for r in rows[:20] for k in r))
        raise InvalidValueError(f"{args.data}: no question field "
                                f"({', '.join(CANDIDATES['question'])}); fields found: {found}")
    questions = {i: str(r.get(qcol) or "") for i, r in zip(ids, rows, strict=True)}
    missing = sorted({i for m in tuples.values() for i in m} - set(questions))
    if missing:
        raise InvalidValueError(
            f"{args.tuples}: items not in {args.data}: {', '.join(missing[:5])}")
    panel: _Replay | _Replies | _Single | EscalationPanel
    clients: list[LLMJudge] = []
    if args.replay and args.replies:
        raise InvalidValueError("give --replay or --replies, not both")
    if args.replay:
        panel = _Replay(args.replay)
    elif args.replies:
        panel = _Replies(args.replies)
    elif args.upstream and args.judge_model:
        key = os.environ.get(args.api_key_env) or None
        clients = [LLMJudge(args.upstream, m, api_key=key)
                   for m in [*args.judge_model, *args.high_model]]
        pool: list[Judge] = list(clients[: len(args.judge_model)])
        high: list[Judge] = list(clients[len(args.judge_model) :])
        panel = _Single(pool[0]) if len(pool) == 1 else EscalationPanel(pool, high, seed=args.seed)
    else:
        raise InvalidValueError(
            "give --replay FILE, --replies FILE, or --upstream URL with at least one "
            "--judge-model")
    done: dict[str, list[Judgment]] = defaultdict(list)
    if args.out.exists():
        for j in read_judgments([args.out]):
            done[j.tuple_id].append(j)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    with _progress("judge") as bar, args.out.open("a", encoding="utf-8") as out:
        task = bar.add_task("judge", total=len(tuples))
        for tid, members in tuples.items():
            try:
                new = panel.judge(tid, items_of(members, questions), done.get(tid, []))
            except JudgeError as exc:
                failed.append(f"{tid}: {exc}")
                new = []
            for j in new:
                append_jsonl(out, {"tuple_id": j.tuple_id, "best": j.best, "worst": j.worst,
                                   "judge": j.judge}, durable=True)
            bar.advance(task)
    for client in clients:
        client.close()
    print(f"judgments in {args.out}; {len(failed)} tuple(s) failed")
    for line in failed[:10]:
        print(f"  {line}")
    return 1 if failed else 0


def _breakdown(items: Sequence[dict[str, Any]], ids: Sequence[str], cost: dict[str, float],
               field: str) -> dict[str, dict[str, float]]:
    """Count and median cost per value of ``field`` (empty when the items lack it)."""
    groups: dict[str, list[float]] = defaultdict(list)
    for r, i in zip(items, ids, strict=True):
        if field in r:
            groups[str(r[field]).lower()].append(cost[i])
    return {k: {"n": len(v), "median_cost": float(np.median(v))}
            for k, v in sorted(groups.items())}


def run_fit(args: argparse.Namespace) -> int:
    tuples = read_tuples(args.tuples)
    judgments = read_judgments(args.judgments)
    items, ids = read_items(args.data)
    merged: dict[str, str] = {}
    if args.merge:
        merged = read_aliases(read_rows(args.merge), str(args.merge))
        if missing := sorted((set(merged) | set(merged.values())) - set(ids)):
            raise InvalidValueError(
                f"{args.merge}: ids not in {args.data}: {', '.join(missing[:5])}")
        tuples, judgments = merge_duplicates(tuples, judgments, merged)
        items = [r for r, i in zip(items, ids, strict=True) if i not in merged]
        ids = [i for i in ids if i not in merged]
    if args.l2 not in ("auto", "paper-scale"):
        try:
            fixed = float(args.l2)
        except ValueError:
            fixed = -1.0
        if not fixed >= 0:  # also rejects NaN
            raise InvalidValueError(
                f"--l2 must be 'paper-scale', 'auto' or a number >= 0, got {args.l2!r}"
            )
    best_l2, l2_scores = select_l2(tuples, judgments, ids)
    if args.l2 == "auto":
        l2 = best_l2
    elif args.l2 == "paper-scale":
        l2 = scale_l2(tuples, judgments, ids)
    else:
        l2 = fixed
    fit = fit_bradley_terry(tuples, judgments, ids, l2=l2)
    best = fit_bradley_terry(tuples, judgments, ids, l2=best_l2)
    cost = dict(zip(fit.item_ids, fit.cost.tolist(), strict=False))
    eta = dict(zip(fit.item_ids, fit.eta.tolist(), strict=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out, ({**r, "cost": cost[i], "eta": eta[i]}
                           for r, i in zip(items, ids, strict=True)))
    c = fit.cost
    report = {
        "n_items": len(ids), "n_merged_duplicates": len(merged),
        "n_tuples": fit.n_tuples, "n_judgments": fit.n_judgments,
        "converged": fit.converged, "l2_rule": args.l2, "l2": l2,
        "l2_heldout_nll": {str(k): round(v, 3) for k, v in l2_scores.items()},
        "l2_heldout_nll_chosen": round(heldout_nll(tuples, judgments, ids, l2), 3),
        "l2_best_heldout": best_l2,
        "cost_at_best_heldout": {"mean": float(best.cost.mean()), "min": float(best.cost.min()),
                                 "max": float(best.cost.max())},
        "spearman_chosen_vs_best_heldout": _spearman(fit.eta, best.eta),
        "cost": {"median": float(np.median(c)), "mean": float(c.mean()),
                 "min": float(c.min()), "max": float(c.max())},
        "by_domain": _breakdown(items, ids, cost, "domain"),
        "by_answerable": _breakdown(items, ids, cost, "answerable"),
        "judgments_per_item": judgments_per_item(tuples, judgments),
        "judge_agreement": judge_agreement(judgments).to_dict(),
        "position_balance": position_balance(tuples, judgments),
        "exposure": exposure_report(tuples, cost),
        "split_half_spearman": split_half_reliability(tuples, judgments, ids, l2=l2),
    }
    rep = args.report or args.out.with_name(args.out.stem + ".fit.json")
    rep.write_text(json.dumps(_no_nan(report), indent=2, allow_nan=False) + "\n")
    print(json.dumps(report["cost"]), f"\nwrote {args.out} and {rep}")
    return 0


def run_duplicates(args: argparse.Namespace) -> int:
    rows, ids = read_items(args.data)
    col = _column(rows, "question")
    if col is None:
        raise InvalidValueError(f"{args.data}: no question column")
    if args.across and any(args.across not in r for r in rows):
        raise InvalidValueError(
            f"{args.data}: --across {args.across}: not every item has that field")
    groups = [str(r[args.across]) for r in rows] if args.across else None
    pairs = candidate_pairs([str(r[col]) for r in rows], ids, groups, tfidf_min=args.tfidf_min,
                            embed_min=args.embed_min if args.embed_min >= 0 else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out, pairs)
    print(f"{len(pairs)} candidate pair(s) in {args.out}: read each one to decide")
    return 0


def _spearman(a: Any, b: Any) -> float:
    from scipy.stats import spearmanr  # lazy: the CLI's --help stays light

    return float(spearmanr(a, b).statistic)


def _no_nan(value: Any) -> Any:
    """``value`` with NaN floats as ``None`` (undefined diagnostics, e.g. agreement without
    pairs of judgments; NaN is not valid JSON)."""
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
