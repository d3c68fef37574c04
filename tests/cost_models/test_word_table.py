"""The word table of the batch featurizers: rows in order, bounded, refilled."""

from __future__ import annotations

import numpy as np
import pytest

import cost_models.word_table as word_table
from cost_models.word_table import WordTable, per_text


def test_rows_come_back_in_the_order_of_the_words() -> None:
    learned: list[str] = []

    def learn(w: str) -> list[int]:
        learned.append(w)
        return [ord(c) for c in w]  # a word of n letters: n rows

    table = WordTable(learn)
    rows, counts = table.rows(["ab", "", "c", "ab"])
    assert rows[:, 0].tolist() == [97, 98, 99, 97, 98] and counts.tolist() == [2, 0, 1, 2]
    assert sorted(learned) == ["", "ab", "c"]  # each word learned once
    table.rows(["c", "ab"])
    assert sorted(learned) == ["", "ab", "c"]
    assert per_text(counts, [2, 2]).tolist() == [2, 3]


def test_the_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_table, "CACHE_SIZE", 3)
    table = WordTable(lambda w: [len(w), 0], width=2)
    for k in range(10):
        words = [f"w{k}", f"x{k}{k}"]
        rows, _ = table.rows(words)
        np.testing.assert_array_equal(rows, [[2, 0], [3, 0]])
        assert len(table) <= 3


def test_rows_of_the_wrong_width_are_refused() -> None:
    with pytest.raises(ValueError, match="rows of 2"):
        WordTable(lambda w: [1, 2, 3], width=2).rows(["a"])
