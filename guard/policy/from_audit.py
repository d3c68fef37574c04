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

No client steers a refit (docs/security.md):

* **never labels alone**: the answerability and cost models are fitted on the seed data
  (``--data``, default the shipped seed set) *plus* one row per labelled question (its latest
  label), so a few labels move the questions they name, not the model (the calibrator maps
  the operator's own model's signal, which no seed data holds: it is fitted on the labels,
  and its effect is what the drift check compares);
* **self-labels only when asked**: a label sent by the key that made the decision it labels
  (every label of a proxy without keys) is left out unless ``accept_self_labels``
  (``--accept-self-labels``);
* **no key dominates**: a refit whose labels come more than ``max_key_share`` from one
  labeller key is refused (``--max-key-share``; 1 accepts a single trusted labelling key).

The card records the labels' provenance: how many labels each labeller key sent
(``label_provenance``, by :func:`guard.proxy.auth.key_id`; ``"no-auth"`` for a proxy
without keys), how many were sent by the key that made the decision they label, and how many
of those were left out.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

from cost_models.answerability import AnswerabilityModel
from cost_models.datasets import DatasetItem, load_seed
from cost_models.model_io import ARTIFACT, default_model_dir
from cost_models.persistence import read_sidecar
from cost_models.regressor import CostRegressor
from guard.calibration import Calibrator, cross_val_probability, raw_probability
from guard.calibration.scoring import brier, ece
from guard.confidence.extractors import confidence_kind
from guard.exceptions import ConfigError
from guard.policy.artifact import Policy
from guard.proxy.audit.store import is_url, mask_url
from guard.proxy.feedback import labelled_decisions

MIN_PER_CLASS = 3


def shipped_recipe() -> CostRegressor:
    """An unfitted cost model of the shipped default's kind and ridge penalty (what a blended
    refit fits)."""
    side = read_sidecar(default_model_dir(), name=ARTIFACT)
    return CostRegressor(kind=str(side.get("kind", "affix-ridge")),
                         ridge=float(side.get("ridge", 0.3)))


def _enough(n: int, pos: int, need: int) -> bool:
    return n >= need and min(pos, n - pos) >= MIN_PER_CLASS


#: The largest share of a refit's labels one labeller key may have sent (``--max-key-share``).
DEFAULT_MAX_KEY_SHARE = 0.5


def is_self_label(row: dict[str, Any]) -> bool:
    """Whether a labelled decision's label came from the key that made the decision (every
    label of a proxy without keys does: both are ``None``)."""
    return bool(row.get("label_key_id") == row.get("key_id"))


def labeller(row: dict[str, Any]) -> str:
    """The labeller key's id of a labelled decision (``"no-auth"`` without keys)."""
    return str(row.get("label_key_id") or "no-auth")


def label_provenance(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many of the labels each labeller key sent, and how many came from the key that
    made the decision they label."""
    by_key = Counter(labeller(r) for r in rows)
    own = sum(1 for r in rows if is_self_label(r))
    return {"by_key": dict(by_key.most_common()), "by_deciding_key": own,
            "by_other_keys": len(rows) - own}


def trusted_labels(rows: list[dict[str, Any]], *, accept_self_labels: bool,
                   max_key_share: float, db: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The labelled decisions a refit may learn from: self-labels left out unless accepted,
    and :class:`ConfigError` when one labeller key sent more than ``max_key_share`` of them."""
    kept = rows if accept_self_labels else [r for r in rows if not is_self_label(r)]
    if not kept:
        own = len(rows) - len(kept)
        raise ConfigError(
            f"{db}: no label to learn from: {own} of the {len(rows)} labels were sent by the "
            "key that made the decision they label (a client grading its own answers); "
            "they count only with --accept-self-labels. Labels from a labeller key "
            "(serve --feedback-api-key) count without it")
    key, n = Counter(labeller(r) for r in kept).most_common(1)[0]
    if n > max_key_share * len(kept):
        raise ConfigError(
            f"{db}: {n} of the {len(kept)} labels ({n / len(kept):.0%}) come from one key "
            f"({key}), more than --max-key-share {max_key_share:g}: one key would steer the "
            "refit. Collect labels from more keys, or pass --max-key-share 1 if that key is "
            "your own labelling team's")
    return kept


def shown(db: str | os.PathLike[str]) -> str:
    """The audit log as printed and recorded in a card: a URL's password masked."""
    return mask_url(str(db)) if is_url(db) else str(db)


def _latest_per_query(rows: list[dict[str, Any]], field: str) -> dict[str, Any]:
    """Each labelled query's latest value of ``field`` (oldest decision first in ``rows``)."""
    return {str(r["query"]): r[field] for r in rows if r["query"] and r[field] is not None}


def fit_from_audit(db: str | os.PathLike[str], *, c_r: float, name: str,
                   signal: str | None = None, base: Policy | None = None,
                   min_labels: int = 50, accept_self_labels: bool = False,
                   max_key_share: float = DEFAULT_MAX_KEY_SHARE,
                   blend: list[DatasetItem] | None = None) -> tuple[Policy, dict[str, Any]]:
    """A policy refit from the labelled decisions in ``db`` (blended with ``blend``, default
    the shipped seed set), and its card fields."""
    everything = labelled_decisions(db)
    db = shown(db)  # from here on only printed: a URL's password masked
    rows = trusted_labels(everything, accept_self_labels=accept_self_labels,
                          max_key_share=max_key_share, db=db)
    seed = load_seed() if blend is None else blend
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
        labelled = _latest_per_query(ans_rows, "label_answerable")
        answerability = AnswerabilityModel().fit(
            [it.question for it in seed] + list(labelled),
            np.array([it.answerable for it in seed] + [bool(v) for v in labelled.values()]))
        alpha_constant, alpha_scale = None, None
        parts["answerability"] = (f"refit from {len(seed)} seed items and {len(labelled)} "
                                  f"labelled questions ({len(ans_rows)} answerable labels "
                                  "with query text)")
    else:
        parts["answerability"] = (
            f"kept from {base.label}" if base else "none: alpha = 1 (the paper's rule)"
        ) + f" ({len(ans_rows)} answerable labels with query text; {min_labels} needed)"

    cost_rows = [r for r in rows if r["query"] and r["label_cost"] is not None]
    cost_model = base.cost_model if base else None
    cost_ref = base.cost_model_ref if base else None
    scale = base.cost_scale if base else None  # fitted for the base's cost model
    costed = [it for it in seed if it.cost is not None]
    if len(cost_rows) >= min_labels:
        labelled_cost = _latest_per_query(cost_rows, "label_cost")
        cost_model = shipped_recipe().fit(
            [it.question for it in costed] + list(labelled_cost),
            [float(it.cost or 0.0) for it in costed] + [float(v) for v in labelled_cost.values()])
        cost_ref, scale = None, None
        parts["cost_model"] = (f"refit from {len(costed)} seed items and {len(labelled_cost)} "
                               f"labelled questions ({len(cost_rows)} cost labels with query "
                               "text)")
    else:
        parts["cost_model"] = (f"kept from {base.label}" if base else "the shipped default") + (
            f" ({len(cost_rows)} cost labels with query text; {min_labels} needed)")
    policy = Policy(name=name, c_r=float(c_r), signal=signal, confidence=confidence_kind(signal),
                    calibrator=calibrator, answerability=answerability,
                    alpha_constant=alpha_constant, cost_model=cost_model,
                    cost_model_ref=cost_ref, cost_scale=scale, alpha_scale=alpha_scale)
    provenance = {**label_provenance(everything), "left_out": len(everything) - len(rows),
                  "self_labels_accepted": accept_self_labels, "max_key_share": max_key_share}
    card = {
        "training": {"data": f"labelled decisions of the audit log {db}, blended with "
                             f"{len(seed)} seed items", "n": len(rows),
                     "parts": parts, "label_provenance": provenance,
                     "policies_that_decided": sorted({str(r["policy"]) for r in rows})},
        "evaluation": {"protocol": "out-of-fold calibration on the labelled answers",
                       "c_r": c_r, "n": len(cal_rows), "calibration": {
                           "signal": signal, "n": len(cal_rows),
                           "ece_before": ece(raw, y), "ece_after": ece(oof, y),
                           "brier_before": brier(raw, y), "brier_after": brier(oof, y)}},
    }
    return policy, card
