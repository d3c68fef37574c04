"""Print the seed card's figures from the shipped files.

Run ``python cost_models/data/seed/figures.py`` from the repository root.

Counts by domain and style, cost statistics, judgments per item, the blind-repeat agreement,
exposure (tuples an item is in, after merging duplicates) against ``L`` and the Spearman
correlation between them. Everything is computed from ``items.jsonl``, ``tuples.jsonl``,
``judgments.jsonl``, ``duplicates.jsonl`` and ``fit.json``; nothing is typed in.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from statistics import median
from typing import Any

from scipy.stats import spearmanr

from cost_models.jsonl import read_jsonl

HERE = Path(__file__).resolve().parent


def _rows(name: str) -> list[dict[str, Any]]:
    return read_jsonl(HERE / name)


def appearances() -> Counter[str]:
    """Tuples each kept item is in, a removed duplicate's tuples counted for its kept copy."""
    dup = {r["id"]: r["duplicate_of"] for r in _rows("duplicates.jsonl")}

    def root(i: str) -> str:
        while i in dup:
            i = dup[i]
        return i

    out: Counter[str] = Counter()
    for t in _rows("tuples.jsonl"):
        out.update({root(i) for i in t["items"]})
    return out


def main() -> None:
    items = _rows("items.jsonl")
    growth = {r["id"] for r in _rows("questions.jsonl")[1248:]}
    fit = json.loads((HERE / "fit.json").read_text(encoding="utf-8"))
    print(f"kept items: {len(items)} ({sum(i['id'] in growth for i in items)} of the growth); "
          f"duplicates removed: {len(_rows('duplicates.jsonl'))}; tuples: {fit['n_tuples']}; "
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
    main()
