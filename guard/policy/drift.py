"""Does a refit policy answer costly questions its base refuses? (``fit --from-audit``)

A refit from labels sent to ``POST /v1/feedback`` learns from whoever sent them. Before such
a policy is written it is compared with its base on sets of costly questions: for each
question and each confidence value on a grid of the policy's signal, each policy decides as
the guard would (its cost model's ``L``, its calibrator's ``p``, its ``alpha``). A question
*drifts* when the refit answers it at some confidence where the base refuses it.
:func:`drifted` lists them; :func:`drift_report` does it for every set; the CLI refuses to
write a policy with any unless ``--accept-drift``.

The sets (:func:`drift_report`): the shipped reference set of high-cost questions
(:data:`REFERENCE`, card beside it) — public, so a labeller can aim around it; the operator's
own set (``--drift-set FILE``), which nobody else sees; the costly questions of the audit log
itself (the deployment's traffic, recorded with ``serve --audit-queries``); and the labelled
questions themselves — a label that makes its own question cheap is caught on that very
question. "Costly" for the last two is :func:`costly`: questions the base would not answer
at a coin flip (its threshold at least :data:`COSTLY_THRESHOLD`), costliest first.

The base is the ``--base`` policy, or without one the runtime default (the shipped cost
model, the uncalibrated signal, ``alpha = 1``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from guard.core import Guard
from guard.decision_records import Confidence
from utilityguard_base.jsonl import read_jsonl

REFERENCE = "data/reference/high_cost.jsonl"
#: Signal values the two policies are compared at, per signal (its usual range).
GRIDS: dict[str, tuple[float, float]] = {
    "logprob_mean": (-6.0, 0.0), "logprob_low10": (-12.0, 0.0), "verbal": (0.0, 1.0),
    "consistency": (0.0, 1.0), "caller": (0.0, 1.0),
}
GRID_POINTS = 61
#: A question is costly when the base needs at least this ``p`` to answer it.
COSTLY_THRESHOLD = 0.5
#: The most questions taken from the audit log or the labels (the costliest).
MAX_COSTLY = 500


def reference_questions(path: str | Path | None = None) -> list[str]:
    """The reference questions (default: the shipped set)."""
    src = Path(path) if path is not None else Path(
        str(resources.files("guard.policy").joinpath(REFERENCE)))
    return [str(row["question"]) for row in read_jsonl(src)]


def _answers(guard: Guard, questions: list[str], signal: str) -> np.ndarray:
    """``answers[q, k]``: the guard answers question ``q`` at the ``k``-th grid value."""
    low, high = GRIDS.get(signal, (0.0, 1.0))
    grid = np.linspace(low, high, GRID_POINTS)
    ps = [guard.probability(Confidence(**{signal: float(v)}))[0] for v in grid]
    out = np.zeros((len(questions), len(grid)), dtype=bool)
    for i, q in enumerate(questions):
        threshold = guard.price(q).threshold
        out[i] = [p is not None and p >= threshold for p in ps]
    return out


def drifted(refit: Guard, base: Guard, signal: str,
            questions: list[str] | None = None) -> list[str]:
    """The reference questions ``refit`` answers at some confidence where ``base`` refuses."""
    qs = reference_questions() if questions is None else questions
    new, old = _answers(refit, qs, signal), _answers(base, qs, signal)
    return [q for q, row in zip(qs, new & ~old, strict=True) if row.any()]


def costly(base: Guard, questions: list[str], limit: int = MAX_COSTLY) -> list[str]:
    """The distinct ``questions`` the ``base`` would refuse at ``p = 0.5`` (its threshold at
    least :data:`COSTLY_THRESHOLD`), costliest first, at most ``limit``."""
    priced = [(base.price(q), q) for q in dict.fromkeys(q for q in questions if q)]
    keep = sorted(((p.cost, q) for p, q in priced if p.threshold >= COSTLY_THRESHOLD),
                  key=lambda x: -x[0])
    return [q for _, q in keep[:limit]]


def drift_report(refit: Guard, base: Guard, signal: str, sets: dict[str, list[str]]
                 ) -> dict[str, list[str]]:
    """For each named set of questions, the ones ``refit`` answers at some confidence where
    ``base`` refuses them (an empty set: no entry)."""
    return {name: drifted(refit, base, signal, qs) for name, qs in sets.items() if qs}
