"""Select the fourth gold sample (issue 22): a test set for the rules changed after the third.

This script only SELECTS records and writes them, without any grade, for readers
(``python tests/benchmarks/data/select_gold_fresh2.py > gold_fresh2_sample.jsonl``). The third
sample (``gold_fresh.jsonl``) was scored once and then used to change the rules, so it cannot
measure them any more; this one is read by readers who graded none of the earlier samples,
committed with their grades before any rule change, and scored only after the last one. With a
fixed seed it draws, per model, records of every style — SmolLM2-135M: 40 per growth style and
40 of the original styles; Gemma 3 270M: 28 per growth style and 28 of the original styles —
half answerable and half refusal-required in every stratum, none already in an earlier gold
file. Every record is ``split: "test"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_gold_heldout import STYLES, write_test_sample

HERE = Path(__file__).resolve().parent
EARLIER = (HERE / "gold_grades.jsonl", HERE / "gold_heldout.jsonl", HERE / "gold_fresh.jsonl")
# (model file, style) -> records; "original" is every style of the original 1,216
QUOTA = {**{("smollm2", s): 40 for s in STYLES}, ("smollm2", "original"): 40,
         **{("gemma3_270m", s): 28 for s in STYLES}, ("gemma3_270m", "original"): 28}
SEED = 2212


def main() -> None:
    write_test_sample(QUOTA, EARLIER, SEED)


if __name__ == "__main__":
    main()
