"""``benchmarks.grading.learned_probe``: the classifier's confident flips are counted against
the reading, on samples built so that the rules miss a kind of decline the reading sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.grading.learned_probe import main, probe


def _rec(k: int, kind: str) -> dict[str, Any]:
    base = {"id": f"x-{k}", "model": "m", "answer_type": "text", "domain": "science",
            "question": "What colour is the sky on a clear day?"}
    if kind == "answer":  # answered and right, by the rules and the reading
        return {**base, "answerable": True, "reference": ["blue"],
                "response": f"The sky is blue, reply {k}.", "answered": True, "correct": True}
    # an unanswerable item's reply that declines in words no rule reads (made-up words);
    # the rules grade it answered (and so wrong), the reading as an abstention
    return {**base, "answerable": False, "reference": [],
            "response": f"Zorblat quennix vimmerfold, case {k}.", "answered": False,
            "correct": None}


def test_confident_flips_fix_a_decline_the_rules_miss() -> None:
    samples = {f"s{j}": [_rec(100 * j + k, "answer" if k % 2 else "decline")
                         for k in range(40)] for j in range(3)}
    rows = probe(samples, margins=(0.2,))
    assert [r.sample for r in rows] == ["s0", "s1", "s2"]
    for r in rows:
        assert r.records == 40
        assert r.rules == 20  # the 20 answers agree; the rules miss every decline
        assert r.flips == 20 and r.flips_right == 20 and r.flipped == 40


def test_missing_sample_is_a_clear_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(tmp_path)]) == 2
    assert "no gold sample" in capsys.readouterr().err
