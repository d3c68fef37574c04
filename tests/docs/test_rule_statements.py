"""The rule the guard applies is the one the docs state (issue 38): the README's "Reading the
decision" table, docs/concepts.md's statement of the rule, the audit report's legend and
``serve --help`` write the threshold with ``alpha`` (``policies.decision.THRESHOLD``), and
that formula, read as written, is :func:`policies.answer_threshold`."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from policies import answer_threshold
from policies.decision import PAPER_THRESHOLD, THRESHOLD
from tests.docs.blocks import ROOT


def _evaluate(formula: str, cost: float, c_r: float, alpha: float) -> float:
    """The formula as written (``alpha (1 + C_R)`` is a product)."""
    code = re.sub(r"(\w|\))\s+\(", r"\1 * (", formula)
    return float(eval(code, {}, {"L": cost, "C_R": c_r, "alpha": alpha}))


def test_the_written_formulas_are_the_code() -> None:
    rng = np.random.default_rng(38)
    for _ in range(200):
        cost, c_r, alpha = rng.lognormal(1, 1.5), rng.uniform(0, 10), rng.uniform(0, 1)
        assert _evaluate(THRESHOLD, cost, c_r, alpha) == pytest.approx(
            answer_threshold(cost, c_r, alpha=alpha), abs=1e-12)
        assert _evaluate(PAPER_THRESHOLD, cost, c_r, 1.0) == pytest.approx(
            answer_threshold(cost, c_r, alpha=1.0), abs=1e-12)


def test_the_readme_table_states_the_rule_with_alpha() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Reading the decision", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in table.splitlines() if line.startswith("| `threshold`"))
    assert THRESHOLD in row
    assert any(line.startswith("| `alpha`") and PAPER_THRESHOLD in line
               for line in table.splitlines())


def test_concepts_states_the_rule_with_alpha() -> None:
    rule = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8").split(
        "## The rule", 1)[1].split("\n## ", 1)[0]
    assert THRESHOLD in rule and PAPER_THRESHOLD in rule


def test_the_audit_legend_states_the_rule_with_alpha() -> None:
    from html import escape

    from guard.proxy.audit.page import render

    row = {"request_id": "r1", "ts": 0.0, "decision": "refuse", "mode": "enforce", "p": 0.5,
           "threshold": 0.7, "cost": 8.0, "policy": None, "alpha": 0.9, "c_r": 2.0}
    page = render([row], {}, "test")
    assert escape(f"threshold {THRESHOLD}") in page
    assert escape(PAPER_THRESHOLD) in page
    assert escape("(L - C_R)/(1 + L)") not in page


def test_serve_help_states_the_rule_with_alpha() -> None:
    done = subprocess.run([sys.executable, "-m", "guard.cli", "serve", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    assert " ".join(THRESHOLD.split()) in " ".join(done.stdout.split())
