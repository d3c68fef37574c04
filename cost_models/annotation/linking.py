"""Linking tuples: put items on one cost scale with the items they were never compared with.

Two uses (the seed set's growth, see its card):

- :func:`frequent_winners` — the items the judges chose as "most" consequential in at least
  ``min_share`` of the judgments they were in. Bradley-Terry cannot tell how far above its
  tuple-mates such an item is: its cost follows how often it was shown (exposure), not how
  its harm compares with the other top items. Tuples built among these items only (with
  ``build_tuples``) make them meet each other and the higher-stakes items, and balance their
  exposure (every one of them gets at least ``min_per_item`` more appearances).
- :func:`cost_anchors` — already-costed items spread evenly over the cost scale, mixed into
  the tuples of new items so new and old items are judged together and the fit keeps one
  scale.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from cost_models.annotation.fit import Judgment
from utilityguard_base.exceptions import InvalidValueError


def most_shares(tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment]
                ) -> dict[str, tuple[int, int]]:
    """Per item: ``(times chosen "most", judgments of tuples holding it)``.

    >>> most_shares({"t1": ["a", "b", "c", "d"]}, [Judgment("t1", "a", "d")])["a"]
    (1, 1)
    """
    shown: Counter[str] = Counter()
    most: Counter[str] = Counter()
    for j in judgments:
        if j.tuple_id not in tuples:
            raise InvalidValueError(f"judgment of unknown tuple {j.tuple_id!r}")
        shown.update(tuples[j.tuple_id])
        most[j.best] += 1
    return {i: (most[i], n) for i, n in shown.items()}


def frequent_winners(tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment],
                     min_share: float, *, ids: Sequence[str] | None = None) -> list[str]:
    """Items chosen "most" in at least ``min_share`` of their judgments (sorted ids), among
    ``ids`` when given."""
    if not 0 < min_share <= 1:
        raise InvalidValueError(f"min_share must be in (0, 1], got {min_share}")
    shares = most_shares(tuples, judgments)
    keep = set(ids) if ids is not None else None
    return sorted(i for i, (m, n) in shares.items()
                  if n and m / n >= min_share and (keep is None or i in keep))


def cost_anchors(costs: Mapping[str, float], k: int, *, seed: int, bins: int = 10
                 ) -> list[str]:
    """``k`` ids drawn evenly from ``bins`` cost quantile bins (the remainder from the top
    bins down), at random inside a bin; sorted by cost.

    >>> c = {f"i{n}": float(n) for n in range(100)}
    >>> a = cost_anchors(c, 10, seed=0)
    >>> sorted(int(x[1:]) // 10 for x in a)  # one per decile
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    if not 0 < k <= len(costs):
        raise InvalidValueError(f"need 1..{len(costs)} anchors, asked for {k}")
    if bins < 1:
        raise InvalidValueError("bins must be >= 1")
    ids = sorted(costs, key=lambda i: (costs[i], i))
    chunks = np.array_split(np.arange(len(ids)), min(bins, len(ids)))
    per = [k // len(chunks)] * len(chunks)
    for b in range(k - sum(per)):
        per[len(chunks) - 1 - b] += 1
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    for chunk, n in zip(chunks, per, strict=True):
        pick = rng.choice(chunk, size=min(n, chunk.shape[0]), replace=False)
        chosen += [ids[int(j)] for j in pick]
    return sorted(chosen, key=lambda i: (costs[i], i))
