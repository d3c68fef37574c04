"""Refitting a policy from the proxy's own traffic: decisions labelled through
``POST /v1/feedback`` (``utilityguard fit --from-audit DB``).

* the calibrator, from the labelled answers (``correct``; an answer to a query labelled
  unanswerable counts as incorrect) and the confidence signal each decision recorded;
* the answerability model, from ``answerable`` labels, when the query text was recorded
  (``serve --audit-queries``);
* the cost model, from ``cost`` labels, when the query text was recorded.

Each part needs ``min_labels`` labels with both outcomes present; a part without enough is
taken from the base policy (``--base``) or left at the runtime's default (``alpha = 1``, the
shipped cost model), and the card says which. Without enough labels for the calibrator the
refit is refused, naming how many it has and how many it needs.

The card records the labels' provenance: how many labels each labeller key sent
(``label_provenance``, by :func:`guard.proxy.labels.key_id`; ``"no-auth"`` for a proxy
without keys) and how many were sent by the key that made the decision they label.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

from cost_models.answerability import AnswerabilityModel
from cost_models.regressor import CostRegressor
from guard.calibration import Calibrator, cross_val_probability, raw_probability
from guard.calibration.scoring import brier, ece
from guard.exceptions import ConfigError
from guard.policy.artifact import Policy
from guard.policy.fit import confidence_kind
from guard.proxy.feedback import labelled_decisions

MIN_PER_CLASS = 3


def _enough(n: int, pos: int, need: int) -> bool:
    return n >= need and min(pos, n - pos) >= MIN_PER_CLASS


def label_provenance(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many of the labels each labeller key sent, and how many came from the key that
    made the decision they label."""
    by_key = Counter(str(r.get("label_key_id") or "no-auth") for r in rows)
    own = sum(1 for r in rows if r.get("label_key_id") == r.get("key_id"))
    return {"by_key": dict(by_key.most_common()), "by_deciding_key": own,
            "by_other_keys": len(rows) - own}


def fit_from_audit(db: str | os.PathLike[str], *, c_r: float, name: str,
                   signal: str | None = None, base: Policy | None = None,
                   min_labels: int = 50) -> tuple[Policy, dict[str, Any]]:
    """A policy refit from the labelled decisions in ``db``, and its card fields."""
    rows = labelled_decisions(db)
    if signal is None:
        seen = Counter(r["signal"] for r in rows if r["signal"] not in (None, "caller"))
        signal = seen.most_common(1)[0][0] if seen else (base.signal if base else "logprob_mean")
    cal_rows = [r for r in rows if r["decision"] != "passthrough_refusal"
                and r["signal"] == signal and r["signal_value"] is not None
                and r["label_correct"] is not None]
    y = np.array([bool(r["label_correct"]) and r["label_answerable"] is not False
                  for r in cal_rows], dtype=bool)
    x = np.array([float(r["signal_value"]) for r in cal_rows], dtype=np.float64)
    if not _enough(len(cal_rows), int(y.sum()), min_labels):
        raise ConfigError(
            f"{db}: {len(cal_rows)} labelled answers with a {signal} value ({int(y.sum())} "
            f"correct, {len(cal_rows) - int(y.sum())} incorrect); refitting the calibrator "
            f"needs at least {min_labels}, with at least {MIN_PER_CLASS} correct and "
            f"{MIN_PER_CLASS} incorrect. Send more labels to POST /v1/feedback (or lower "
            "--min-labels)")
    calibrator = Calibrator(method="auto", signal=signal).fit(x, y)
    oof = cross_val_probability(Calibrator(method="auto", signal=signal), x, y)
    raw = np.asarray(raw_probability(signal, x), dtype=np.float64)
    parts: dict[str, str] = {"calibrator": f"refit from {len(cal_rows)} labelled answers "
                                           f"(method {calibrator.method_})"}

    ans_rows = [r for r in rows if r["query"] and r["label_answerable"] is not None]
    ya = np.array([bool(r["label_answerable"]) for r in ans_rows], dtype=bool)
    answerability: AnswerabilityModel | None = base.answerability if base else None
    alpha_constant = base.alpha_constant if base else None
    alpha_scale = base.alpha_scale if base else None  # fitted for the base's classifier
    if _enough(len(ans_rows), int(ya.sum()), min_labels):
        answerability = AnswerabilityModel().fit([r["query"] for r in ans_rows], ya)
        alpha_constant, alpha_scale = None, None
        parts["answerability"] = f"refit from {len(ans_rows)} answerable labels with query text"
    else:
        parts["answerability"] = (
            f"kept from {base.label}" if base else "none: alpha = 1 (the paper's rule)"
        ) + f" ({len(ans_rows)} answerable labels with query text; {min_labels} needed)"

    cost_rows = [r for r in rows if r["query"] and r["label_cost"] is not None]
    cost_model = base.cost_model if base else None
    cost_ref = base.cost_model_ref if base else None
    scale = base.cost_scale if base else None  # fitted for the base's cost model
    if len(cost_rows) >= min_labels:
        cost_model = CostRegressor().fit([r["query"] for r in cost_rows],
                                         [float(r["label_cost"]) for r in cost_rows])
        cost_ref, scale = None, None
        parts["cost_model"] = f"refit from {len(cost_rows)} cost labels with query text"
    else:
        parts["cost_model"] = (f"kept from {base.label}" if base else "the shipped default") + (
            f" ({len(cost_rows)} cost labels with query text; {min_labels} needed)")
    policy = Policy(name=name, c_r=float(c_r), signal=signal, confidence=confidence_kind(signal),
                    calibrator=calibrator, answerability=answerability,
                    alpha_constant=alpha_constant, cost_model=cost_model,
                    cost_model_ref=cost_ref, cost_scale=scale, alpha_scale=alpha_scale)
    card = {
        "training": {"data": f"labelled decisions of the audit log {db}", "n": len(rows),
                     "parts": parts, "label_provenance": label_provenance(rows),
                     "policies_that_decided": sorted({str(r["policy"]) for r in rows})},
        "evaluation": {"protocol": "out-of-fold calibration on the labelled answers",
                       "c_r": c_r, "n": len(cal_rows), "calibration": {
                           "signal": signal, "n": len(cal_rows),
                           "ece_before": ece(raw, y), "ece_after": ece(oof, y),
                           "brier_before": brier(raw, y), "brier_after": brier(oof, y)}},
    }
    return policy, card
