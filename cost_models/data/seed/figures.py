"""Print the seed card's figures from the shipped files.

Run ``python cost_models/data/seed/figures.py`` from the repository root.

Counts by domain and style, cost statistics, judgments per item, the blind-repeat agreement,
exposure (tuples an item is in, after merging duplicates) against ``L`` and the Spearman
correlation between them. Everything is computed from ``items.jsonl``, ``tuples.jsonl``,
``judgments.jsonl``, ``duplicates.jsonl`` and ``fit.json``; nothing is typed in.

``python cost_models/data/seed/figures.py --before REV`` adds the comparison with the files at
git revision REV (the fit before a top-up): Spearman(``L``, appearances) before and after,
mean appearances per cost decile, how the top and bottom deciles moved, the positions the
judges of each tuple prefix chose (chi-square against equal shares), and each blind repeat
judge's agreement with the first judgments of the tuples it repeated.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
from scipy.stats import chisquare, spearmanr

from utilityguard_base.jsonl import parse_jsonl, read_jsonl

HERE = Path(__file__).resolve().parent


def seed_rows(name: str, rev: str | None = None) -> list[dict[str, Any]]:
    """The JSONL file ``name`` of this folder, or as it was at git revision ``rev``."""
    if rev is None:
        return read_jsonl(HERE / name)
    path = (HERE / name).relative_to(HERE.parents[2]).as_posix()
    text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=HERE, check=True,
                          capture_output=True, text=True).stdout
    return parse_jsonl(text, f"{rev}:{path}")


def appearances(rev: str | None = None) -> Counter[str]:
    """Tuples each kept item is in, a removed duplicate's tuples counted for its kept copy."""
    dup = {r["id"]: r["duplicate_of"] for r in seed_rows("duplicates.jsonl", rev)}

    def root(i: str) -> str:
        while i in dup:
            i = dup[i]
        return i

    out: Counter[str] = Counter()
    for t in seed_rows("tuples.jsonl", rev):
        out.update({root(i) for i in t["items"]})
    return out


def _deciles(cost: dict[str, float]) -> dict[str, int]:
    """Each item's cost decile, 0 (cheapest) to 9."""
    cuts = np.quantile(list(cost.values()), np.linspace(0.1, 0.9, 9))
    return {i: int(np.searchsorted(cuts, c, side="right")) for i, c in cost.items()}


def compare(rev: str) -> None:
    """Exposure and costs now against the files at ``rev``."""
    before = {i["id"]: i["cost"] for i in seed_rows("items.jsonl", rev)}
    after = {i["id"]: i["cost"] for i in seed_rows("items.jsonl")}
    ids = sorted(after)
    seen_b, seen_a = appearances(rev), appearances()
    print(f"\nagainst {rev}: Spearman(L, appearances) before "
          f"{spearmanr([before[i] for i in ids], [seen_b[i] for i in ids])[0]:.3f}, after "
          f"{spearmanr([after[i] for i in ids], [seen_a[i] for i in ids])[0]:.3f}; "
          f"Spearman(L before, L after) "
          f"{spearmanr([before[i] for i in ids], [after[i] for i in ids])[0]:.3f}")
    dec_b, dec_a = _deciles(before), _deciles(after)
    print("\n| cost decile (before) | mean appearances before | after |\n| --- | --- | --- |")
    for d in range(10):
        grp = [i for i in ids if dec_b[i] == d]
        print(f"| {d + 1} | {np.mean([seen_b[i] for i in grp]):.2f} | "
              f"{np.mean([seen_a[i] for i in grp]):.2f} |")
    for name, d in (("top", 9), ("bottom", 0)):
        was = {i for i in ids if dec_b[i] == d}
        now = {i for i in ids if dec_a[i] == d}
        cut_b = (min if d else max)(before[i] for i in was)
        cut_a = (min if d else max)(after[i] for i in now)
        moved = Counter(dec_a[i] + 1 for i in was - now)
        print(f"{name} decile: cut {cut_b:.3f} -> {cut_a:.3f}; {len(was & now)} of {len(was)} "
              f"stay; the others went to deciles {dict(sorted(moved.items()))}")
    moved_by = Counter(abs(dec_a[i] - dec_b[i]) for i in ids)
    print("items by deciles moved:", dict(sorted(moved_by.items())))
    _positions_and_repeats(rev)


def _positions_and_repeats(rev: str) -> None:
    """Positions chosen by the new judgments' tuple prefixes; blind repeats' agreement."""
    old = {(j["tuple_id"], j["judge"]) for j in seed_rows("judgments.jsonl", rev)}
    tuples = {t["tuple_id"]: t["items"] for t in seed_rows("tuples.jsonl")}
    new = [j for j in seed_rows("judgments.jsonl") if (j["tuple_id"], j["judge"]) not in old]
    first = [j for j in new if "repeat" not in j["judge"]]
    for kind in ("best", "worst"):
        pos = Counter(tuples[j["tuple_id"]].index(j[kind]) + 1 for j in first)
        counts = [pos[k] for k in range(1, 5)]
        print(f"new first-pass judgments ({len(first)}), {kind}: positions 1-4 {counts}, "
              f"chi-square p {chisquare(counts).pvalue:.2f}")
    by_tuple: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for j in seed_rows("judgments.jsonl"):
        by_tuple[j["tuple_id"]].append(j)
    for judge in sorted({j["judge"] for j in new if "repeat" in j["judge"]}):
        groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        for r in (j for j in new if j["judge"] == judge):
            for f in by_tuple[r["tuple_id"]]:
                if f["judge"] != judge and "repeat" not in f["judge"]:
                    groups[f["judge"].rstrip("0123456789")].append(
                        (f["best"] == r["best"], f["worst"] == r["worst"]))
        for g, pairs in sorted(groups.items()):
            b, w = np.mean([p[0] for p in pairs]), np.mean([p[1] for p in pairs])
            both = np.mean([p[0] and p[1] for p in pairs])
            print(f"{judge} vs {g}*: {len(pairs)} tuples, best {b:.1%}, worst {w:.1%}, "
                  f"both {both:.1%}")


def main() -> None:
    items = seed_rows("items.jsonl")
    growth = {r["id"] for r in seed_rows("questions.jsonl")[1248:]}
    fit = json.loads((HERE / "fit.json").read_text(encoding="utf-8"))
    print(f"kept items: {len(items)} ({sum(i['id'] in growth for i in items)} of the growth); "
          f"duplicates removed: {len(seed_rows('duplicates.jsonl'))}; tuples: {fit['n_tuples']}; "
          f"judgments: {fit['n_judgments']}")
    print("\n| domain | answerable | refusal-required | median `L` |\n| --- | --- | --- | --- |")
    for dom in sorted({i["domain"] for i in items},
                      key=lambda d: -fit["by_domain"][d]["median_cost"]):
        rows = [i for i in items if i["domain"] == dom]
        print(f"| {dom} | {sum(i['answerable'] for i in rows)} | "
              f"{sum(not i['answerable'] for i in rows)} | "
              f"{fit['by_domain'][dom]['median_cost']:.2f} |")
    styles = Counter(i["source"] for i in items if i["id"] in growth)
    mid = {s: median(i["cost"] for i in items if i["source"] == s and i["id"] in growth)
           for s in styles}
    print("\ngrowth styles (kept, median L):",
          ", ".join(f"{s} {n} ({mid[s]:.2f})" for s, n in styles.most_common()))
    c = fit["cost"]
    print(f"\nL: median {c['median']:.2f}, mean {c['mean']:.2f}, min {c['min']:.3f}, "
          f"max {c['max']:.1f}; l2 {fit['l2']:.3f}; split-half Spearman "
          f"{fit['split_half_spearman']:.3f}")
    print("judgments per item:", fit["judgments_per_item"])
    print("first pass vs blind repeat:", fit["judge_agreement"])
    seen = appearances()
    ids = [i["id"] for i in items]
    cost = {i["id"]: i["cost"] for i in items}
    rho = spearmanr([cost[i] for i in ids], [seen[i] for i in ids])[0]
    print(f"\nappearances: min {min(seen[i] for i in ids)}, items below 5: "
          f"{sum(seen[i] < 5 for i in ids)}; Spearman(L, appearances) = {rho:.3f}")
    print("\n| appearances | items | median `L` | share in the top decile | max `L` |\n"
          "| --- | --- | --- | --- | --- |")
    for row in fit["exposure"]:
        print(f"| {row['appearances']} | {row['items']} | {row['median_cost']:.2f} | "
              f"{row['top_share']:.1%} | {row['max_cost']:.1f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", metavar="REV", help="also compare with the files at git REV")
    args = ap.parse_args()
    main()
    if args.before:
        compare(args.before)
