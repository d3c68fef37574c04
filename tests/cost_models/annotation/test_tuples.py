"""Best-Worst Scaling tuples: counts, the 45/35/20 mix, coverage, groups, determinism."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cost_models.annotation.tuples import MIX, TUPLE_SIZE, BWSTuple, build_tuples


def _data(n: int, seed: int = 0, p: tuple[float, ...] = (0.55, 0.3, 0.15)) -> tuple[
        list[str], list[str]]:
    rng = np.random.default_rng(seed)
    ids = [f"item-{k:04d}" for k in range(n)]
    groups = [str(g) for g in rng.choice(["low", "medium", "high"], size=n, p=list(p))]
    return ids, groups


def _groups_of(t: BWSTuple, ids: list[str], groups: list[str]) -> set[str]:
    label = dict(zip(ids, groups, strict=True))
    return {label[i] for i in t.items}


@pytest.mark.parametrize(
    ("n", "ratio"),
    [
        pytest.param(12, 1.25, id="n12"),
        pytest.param(40, 1.25, id="n40"),
        pytest.param(101, 1.25, id="n101-rounds"),
        pytest.param(600, 1.25, id="n600"),
        pytest.param(50, 2.0, id="ratio2"),
    ],
)
def test_tuple_count_is_ratio_times_n(n: int, ratio: float) -> None:
    ids, groups = _data(n)
    tuples = build_tuples(ids, groups, ratio=ratio)
    assert len(tuples) == round(ratio * n)
    assert len({t.tuple_id for t in tuples}) == len(tuples)


@pytest.mark.parametrize("n", [pytest.param(12, id="n12"), pytest.param(40, id="n40"),
                               pytest.param(333, id="n333"), pytest.param(600, id="n600")])
def test_every_tuple_has_four_distinct_known_items(n: int) -> None:
    ids, groups = _data(n, seed=n)
    for t in build_tuples(ids, groups, seed=n):
        assert len(t.items) == TUPLE_SIZE
        assert len(set(t.items)) == TUPLE_SIZE
        assert set(t.items) <= set(ids)


@pytest.mark.parametrize("seed", range(5))
def test_every_item_appears_at_least_three_times(seed: int) -> None:
    ids, groups = _data(97, seed=seed)
    counts = Counter(i for t in build_tuples(ids, groups, seed=seed) for i in t.items)
    assert set(counts) == set(ids)
    assert min(counts.values()) >= 3


def test_min_per_item_can_be_raised() -> None:
    ids, groups = _data(40)
    counts = Counter(i for t in build_tuples(ids, groups, ratio=2.0, min_per_item=6)
                     for i in t.items)
    assert min(counts[i] for i in ids) >= 6


def test_mix_is_45_35_20_on_balanced_groups() -> None:
    ids, groups = _data(800, p=(0.4, 0.35, 0.25))
    tuples = build_tuples(ids, groups)
    kinds = Counter(t.kind for t in tuples)
    total = len(tuples)
    assert set(kinds) == set(MIX)
    for kind, share in MIX.items():
        # the repair pass may turn a few within-group tuples into across-group ones
        assert kinds[kind] / total == pytest.approx(share, abs=0.02), kinds


@pytest.mark.parametrize(
    ("n", "p"),
    [
        pytest.param(12, (0.5, 0.25, 0.25), id="n12-small-groups"),
        pytest.param(41, (0.6, 0.25, 0.15), id="n41-skewed"),
        pytest.param(200, (0.6, 0.25, 0.15), id="n200-skewed"),
        pytest.param(300, (0.34, 0.33, 0.33), id="n300-balanced"),
    ],
)
@pytest.mark.parametrize("seed", range(8))
def test_kinds_describe_the_groups_in_each_tuple(
    n: int, p: tuple[float, ...], seed: int
) -> None:
    ids, groups = _data(n, seed=seed, p=p)
    for t in build_tuples(ids, groups, seed=seed):
        spanned = _groups_of(t, ids, groups)
        if t.kind == "within":
            assert len(spanned) == 1, t
        elif t.kind == "across":
            assert len(spanned) >= 2, t
        else:
            assert t.kind == "random"


def test_one_group_gives_no_across_tuples() -> None:
    ids = [f"i{k}" for k in range(20)]
    tuples = build_tuples(ids, ["low"] * 20)
    assert {t.kind for t in tuples} <= {"within", "random"}


def test_no_group_of_four_gives_no_within_tuples() -> None:
    ids = [f"i{k}" for k in range(12)]
    groups = [f"g{k // 3}" for k in range(12)]  # four groups of three
    tuples = build_tuples(ids, groups)
    assert "within" not in {t.kind for t in tuples}


def test_groups_may_be_a_mapping() -> None:
    ids, groups = _data(30)
    as_map = dict(zip(reversed(ids), reversed(groups), strict=True))
    assert build_tuples(ids, as_map, seed=3) == build_tuples(ids, groups, seed=3)


def test_same_seed_same_tuples_other_seed_other_tuples() -> None:
    ids, groups = _data(120)
    first = build_tuples(ids, groups, seed=11)
    assert build_tuples(ids, groups, seed=11) == first
    other = build_tuples(ids, groups, seed=12)
    assert [t.items for t in other] != [t.items for t in first]


def test_to_dict_is_the_jsonl_row() -> None:
    ids, groups = _data(12)
    t = build_tuples(ids, groups)[0]
    assert t.to_dict() == {"tuple_id": t.tuple_id, "items": list(t.items), "kind": t.kind}


@pytest.mark.parametrize(
    ("ids", "groups", "kwargs", "match"),
    [
        pytest.param(["a", "b", "c"], ["x"] * 3, {}, "at least 4 items", id="too-few"),
        pytest.param(["a", "a", "b", "c", "d"], ["x"] * 5, {}, "unique", id="duplicate-ids"),
        pytest.param(list("abcdef"), ["x"] * 5, {}, "one group per item", id="short-groups"),
        pytest.param(list("abcdef"), ["x"] * 6, {"ratio": 0}, "ratio must be > 0",
                     id="zero-ratio"),
        pytest.param(list("abcdefgh"), ["x"] * 8, {"ratio": 0.5}, "raise ratio",
                     id="ratio-too-small"),
    ],
)
def test_bad_input_raises(ids: list[str], groups: list[str], kwargs: dict[str, float],
                          match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_tuples(ids, groups, **kwargs)  # type: ignore[arg-type]


def test_mapping_without_an_item_raises() -> None:
    with pytest.raises(KeyError):
        build_tuples(list("abcde"), {"a": "x", "b": "x", "c": "x", "d": "x"})


def test_shuffle_changes_positions_not_members() -> None:
    ids, groups = _data(400)
    kept = build_tuples(ids, groups, shuffle=False)
    shuffled = build_tuples(ids, groups)
    assert [t.tuple_id for t in kept] == [t.tuple_id for t in shuffled]
    assert [sorted(t.items) for t in kept] == [sorted(t.items) for t in shuffled]
    assert [t.kind for t in kept] == [t.kind for t in shuffled]
    moved = sum(a.items != b.items for a, b in zip(kept, shuffled, strict=True))
    assert moved > 0.9 * len(kept)  # 23 of 24 orders differ from a given one
    assert build_tuples(ids, groups) == shuffled  # still deterministic


def test_shuffled_positions_do_not_follow_the_construction_order() -> None:
    """The item picked first (position 0 without shuffling) lands on each position about
    equally often after shuffling (chi-square against equal shares)."""
    from scipy.stats import chisquare

    ids, groups = _data(800)
    kept = build_tuples(ids, groups, shuffle=False)
    shuffled = build_tuples(ids, groups)
    where = Counter(b.items.index(a.items[0]) for a, b in zip(kept, shuffled, strict=True))
    counts = [where[k] for k in range(TUPLE_SIZE)]
    assert min(counts) > 0.8 * len(kept) / TUPLE_SIZE
    assert chisquare(counts).pvalue > 1e-3
