"""A small records file to try the bench on: ``utilityguard metric EXAMPLE_FILE``.

``EXAMPLE_FILE`` holds 24 records in the merged dataset-item + response-record shape
(``id``, ``question``, ``answerable``, ``cost``, ``domain``, ``answered``, ``correct``,
``confidence.logprob_mean``). **The records are made up for illustration**: the questions,
costs, answers, grades and confidences were written by hand to show every outcome (correct and
wrong answers, necessary and unnecessary refusals, answers to refusal-required queries, a tied
score); they are not model output and not UtilityBench data. JSONL allows no header, so this
notice lives here.

The file sits in ``data/`` so that the package-data rule ``data/*`` ships it in the wheel.

Examples
--------
>>> EXAMPLE_FILE.name
'example_records.jsonl'
>>> EXAMPLE_FILE.is_file()
True
"""

import pathlib

#: Path of the illustrative records (JSONL, 24 rows).
EXAMPLE_FILE: pathlib.Path = (
    pathlib.Path(__file__).resolve().parent / "data" / "example_records.jsonl"
)

__all__ = ["EXAMPLE_FILE"]
