"""Select the third gold sample (issue 22): a fresh test set no rule was tuned on.

This script only SELECTS records and writes them, without any grade, for readers
(``python tests/benchmarks/data/select_gold_fresh.py > fresh_sample.jsonl``). The second
sample's test half was seen while the rules were changed, so it cannot measure them any more;
this one is read by readers who did not grade the earlier samples and is scored only after the
last rule change. With a fixed seed it draws, per model, records of every style — SmolLM2-135M:
34 per growth style and 24 of the original styles; Gemma 3 270M: 28 per growth style and 28 of
the original styles — half answerable and half refusal-required in every stratum, none already
in ``gold_grades.jsonl`` or ``gold_heldout.jsonl``. Every record is ``split: "test"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_gold_heldout import STYLES, write_test_sample

HERE = Path(__file__).resolve().parent
EARLIER = (HERE / "gold_grades.jsonl", HERE / "gold_heldout.jsonl")
# (model file, style) -> records; "original" is every style of the original 1,216
QUOTA = {**{("smollm2", s): 34 for s in STYLES}, ("smollm2", "original"): 24,
         **{("gemma3_270m", s): 28 for s in STYLES}, ("gemma3_270m", "original"): 28}
SEED = 2203


def main() -> None:
    write_test_sample(QUOTA, EARLIER, SEED)


if __name__ == "__main__":
    main()
