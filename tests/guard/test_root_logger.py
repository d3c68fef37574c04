"""A library leaves the root logger alone: the first ``Guard.decide`` (which loads the
embeddings, whose package calls ``logging.basicConfig(level=INFO)`` when imported) adds no
handler to the root logger and keeps its level. Run in a fresh interpreter, since the
embeddings are loaded once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import json, logging
from guard import Guard
root = logging.getLogger()
before = (len(root.handlers), root.level)
record = Guard().decide("what is the maximum dose of ibuprofen?", "400 mg",
                        confidence={"logprob_mean": -0.1})
print(json.dumps({"before": before, "after": (len(root.handlers), root.level),
                  "decision": record.decision}))
"""


def test_the_first_decision_leaves_the_root_logger_alone() -> None:
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, cwd=repo, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["decision"] in ("answer", "refuse")  # the embeddings were really used
    assert got["before"] == [0, 30]  # no handler, WARNING: Python's defaults
    assert got["after"] == got["before"]
    assert "INFO:" not in out.stderr
