"""Best-Worst Scaling tuple construction (UtilityBench Appendix A.3).

Coarse consequence groups (``low`` / ``medium`` / ``high``) come in; ``ratio x N`` four-item
tuples come out (``ratio = 1.25`` in the paper): 45% drawn inside one group, 35% spanning
different groups, 20% drawn at random. Items are chosen least-used first (ties broken at
random), and a final repair pass guarantees every item appears in at least ``min_per_item``
tuples. A tuple's ``kind`` says what it holds after the repair (which may swap an item of
another group into a within-group tuple, making it an across-group one); a within or across
tuple that the groups cannot supply (no group of four, or only one group) is drawn at random
and labelled ``random``. The same ``seed`` gives the same tuples.

The items inside each tuple are shuffled (by a generator of their own, seeded from ``seed``,
so the tuples' members do not depend on it): the construction picks items in an order that
follows their groups and usage, and judges lean to the first positions. ``shuffle=False``
keeps the construction order, which is how tuples were written before (the seed set's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from utilityguard_base.exceptions import InvalidValueError

TUPLE_SIZE = 4
MIX = {"within": 0.45, "across": 0.35, "random": 0.20}


@dataclass(frozen=True)
class BWSTuple:
    """One four-item tuple to judge."""

    tuple_id: str
    items: tuple[str, ...]
    kind: str  # "within" | "across" | "random"

    def to_dict(self) -> dict[str, object]:
        return {"tuple_id": self.tuple_id, "items": list(self.items), "kind": self.kind}


class _Picker:
    """Least-used-first sampling without replacement inside one tuple."""

    def __init__(self, n: int, rng: np.random.Generator) -> None:
        self.counts = np.zeros(n, dtype=np.int64)
        self.rng = rng

    def pick(self, pool: np.ndarray, k: int, exclude: Sequence[int] = ()) -> list[int]:
        cand = pool[~np.isin(pool, np.asarray(exclude, dtype=np.int64))]
        if cand.shape[0] < k:
            raise InvalidValueError(f"need {k} items to draw from, only {cand.shape[0]} available")
        noise = self.rng.random(cand.shape[0])
        order = np.lexsort((noise, self.counts[cand]))
        chosen = [int(i) for i in cand[order[:k]]]
        self.counts[chosen] += 1
        return chosen


def _checked_labels(ids: list[str], groups: Mapping[str, str] | Sequence[str], ratio: float,
                    min_per_item: int) -> list[str]:
    """The group of each item, once the arguments of :func:`build_tuples` are checked."""
    n = len(ids)
    if len(set(ids)) != n:
        raise InvalidValueError("item_ids must be unique")
    if n < TUPLE_SIZE:
        raise InvalidValueError(f"need at least {TUPLE_SIZE} items, got {n}")
    if ratio <= 0:
        raise InvalidValueError("ratio must be > 0")
    labels = [groups[i] for i in ids] if isinstance(groups, Mapping) else list(groups)
    if len(labels) != n:
        raise InvalidValueError("groups must give one group per item")
    if min_per_item * n > TUPLE_SIZE * round(ratio * n):
        raise InvalidValueError(
            f"{round(ratio * n)} tuples cannot hold every item {min_per_item} times; raise ratio"
        )
    return labels


def build_tuples(
    item_ids: Sequence[str],
    groups: Mapping[str, str] | Sequence[str],
    *,
    ratio: float = 1.25,
    min_per_item: int = 3,
    seed: int = 20260713,
    shuffle: bool = True,
    prefix: str = "t",
) -> list[BWSTuple]:
    """Build ``round(ratio * N)`` BWS tuples over ``item_ids``.

    Parameters
    ----------
    item_ids : sequence of str
        Unique item ids, ``N >= 4``.
    groups : mapping id -> group, or a sequence aligned with ``item_ids``
        Coarse consequence group per item (any labels; usually low/medium/high).
    ratio : float
        Tuples per item (the paper uses 1.25).
    min_per_item : int
        Every item appears in at least this many tuples.
    seed : int
        Seed of the generator; equal seeds give equal tuples.
    shuffle : bool
        Shuffle the items inside each tuple (default); ``False`` keeps the construction order.
    prefix : str
        Tuple ids are ``prefix`` + a zero-padded number (``t0001``...); tuples added to an
        existing set need a prefix of their own.
    """
    ids = list(item_ids)
    n = len(ids)
    labels = _checked_labels(ids, groups, ratio, min_per_item)
    rng = np.random.default_rng(seed)
    names = sorted(set(labels))
    pools = {g: np.array([i for i, lab in enumerate(labels) if lab == g]) for g in names}
    everyone = np.arange(n)
    picker = _Picker(n, rng)
    total = round(ratio * n)
    n_within = round(MIX["within"] * total)
    n_across = round(MIX["across"] * total)
    kinds = ["within"] * n_within + ["across"] * n_across
    kinds += ["random"] * (total - len(kinds))

    big = [g for g in names if pools[g].shape[0] >= TUPLE_SIZE]
    weights = np.array([pools[g].shape[0] for g in big], dtype=float)
    raw: list[tuple[list[int], str]] = []
    for kind in kinds:
        if kind == "within" and big:
            g = big[int(rng.choice(len(big), p=weights / weights.sum()))]
            chosen = picker.pick(pools[g], TUPLE_SIZE)
        elif kind == "across" and len(names) > 1:
            chosen = []
            order = list(rng.permutation(len(names)))
            slots = [names[order[j % len(order)]] for j in range(TUPLE_SIZE)]
            for g in slots:
                pool = pools[g] if np.setdiff1d(pools[g], chosen).shape[0] else everyone
                chosen += picker.pick(pool, 1, exclude=chosen)
        else:
            chosen = [int(i) for i in rng.choice(n, TUPLE_SIZE, replace=False)]
            picker.counts[chosen] += 1
            kind = "random"  # also when the groups cannot supply a within / across tuple
        raw.append((chosen, kind))
    _repair(raw, picker.counts, min_per_item, rng)
    for k, (members, kind) in enumerate(raw):
        if kind != "random":  # label by what the tuple holds after the repair's swaps
            raw[k] = (members, "within" if len({labels[i] for i in members}) == 1 else "across")
    shuffled = rng.permutation(len(raw)).tolist()  # judges should not see the kinds in blocks
    if shuffle:  # positions must not follow the construction order (own stream: same members)
        within = np.random.default_rng([seed, 1])
        raw = [([int(i) for i in within.permutation(m)], kind) for m, kind in raw]
    width = len(str(len(raw)))
    return [
        BWSTuple(f"{prefix}{k + 1:0{width}d}", tuple(ids[i] for i in raw[j][0]), raw[j][1])
        for k, j in enumerate(shuffled)
    ]


def _repair(
    raw: list[tuple[list[int], str]], counts: np.ndarray, min_per_item: int,
    rng: np.random.Generator,
) -> None:
    """Swap under-used items into tuples in place of the most-used ones."""
    for item in np.flatnonzero(counts < min_per_item):
        while counts[item] < min_per_item:
            slots = [
                (t, s)
                for t, (members, _) in enumerate(raw)
                if item not in members
                for s, other in enumerate(members)
                if counts[other] > min_per_item
            ]
            if not slots:
                raise InvalidValueError("cannot satisfy min_per_item; raise ratio")
            best = max(counts[raw[t][0][s]] for t, s in slots)
            top = [(t, s) for t, s in slots if counts[raw[t][0][s]] == best]
            t, s = top[int(rng.integers(len(top)))]
            counts[raw[t][0][s]] -= 1
            raw[t][0][s] = int(item)
            counts[item] += 1
