"""The policy card: ``README.md`` of a policy folder, rendered from its ``policy.json``."""

from __future__ import annotations

from typing import Any


def _f(x: Any, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, (int, float)):
        return f"{x:.{digits}f}"
    return str(x)


def _left_out(ev: dict[str, Any]) -> str:
    """A pooled policy's leave-one-model-out table."""
    rows = []
    for model, m in ev["models"].items():
        for tag, key in (("own policy", "own_policy"), ("other models' calibrator",
                                                        "left_out")):
            pol = (m.get(key) or {}).get("policies") or {}
            g, ar, orc = (pol.get(k) or {} for k in ("guard", "always_refuse", "oracle"))
            sh = m.get(key.replace("left_out", "other_models_calibrator") + "_share") or {}
            ci = sh.get("ci")
            rows.append(f"| {model} | {tag} | {_f(g.get('mean_utility'), 3)} | "
                        f"{_f(g.get('utility_auc'), 3)} | {_f(ar.get('mean_utility'), 3)} | "
                        f"{_f(orc.get('mean_utility'), 3)} | {_f(sh.get('share'), 3)}"
                        + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + " |")
    return "\n".join([
        f"Protocol: {ev.get('protocol', 'n/a')}.", "",
        "| model scored | calibrator | guard mean utility | guard UtilityAUC | always refuse | "
        "oracle | share of the oracle's gain |",
        "| --- | --- | --- | --- | --- | --- | --- |", *rows])


def _evaluation(ev: dict[str, Any]) -> str:
    if ev and "models" in ev:
        return _left_out(ev)
    if not ev:
        return "No cross-fitted evaluation was recorded (e.g. a policy refit from an audit log)."
    rows = []
    for name, m in (ev.get("policies") or {}).items():
        rows.append(f"| `{name}` | {_f(m.get('utility_auc'))} | {_f(m.get('mean_utility'))} | "
                    f"{_f(m.get('answer_rate'))} | {_f(m.get('ece10'))} |")
    cal = ev.get("calibration") or {}
    if not rows:
        return (f"Protocol: {ev.get('protocol', 'n/a')}. Calibration of `{cal.get('signal')}` on "
                f"{cal.get('n')} labelled answers, out of fold: ECE-10 "
                f"{_f(cal.get('ece_before'))} before, {_f(cal.get('ece_after'))} after; Brier "
                f"{_f(cal.get('brier_before'))} before, {_f(cal.get('brier_after'))} after.")
    return "\n".join([
        f"Protocol: {ev.get('protocol', 'n/a')}. C_R = {ev.get('c_r')}, {ev.get('n')} items.",
        "",
        "| policy | UtilityAUC | mean utility | answer rate | ECE-10 (answered) |",
        "| --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"Calibration of `{cal.get('signal')}` on the {cal.get('n')} answered replies with a "
        f"signal, out of fold: ECE-10 {_f(cal.get('ece_before'))} before (raw probability) and "
        f"{_f(cal.get('ece_after'))} after; Brier {_f(cal.get('brier_before'))} before, "
        f"{_f(cal.get('brier_after'))} after. Answerability ROC AUC out of fold: "
        f"{_f(ev.get('answerability_auc'))}.",
    ])


_POOLED = ("The calibrator is pooled over the replies of every model listed above: it maps a "
           "signal to P(correct) for a typical one of them, not for yours; the cost and "
           "answerability models read the question only. ")


def policy_card(meta: dict[str, Any], label: str) -> str:
    """The README of a policy (``meta`` is its ``policy.json``)."""
    tr = meta.get("training") or {}
    files = "\n".join(f"| `{k}` | `{v}` |" for k, v in (meta.get("files") or {}).items())
    cost = meta.get("cost_model") or {}
    cost_line = (f"the shipped default cost model, referenced by sha256 `{cost.get('sha256')}`"
                 if cost.get("source") == "shipped-default" else
                 f"a cost model saved in `{cost.get('dir')}/` (its own card is there)")
    ans = meta.get("answerability") or {}
    ans_line = (f"a text classifier ({ans.get('kind')}) in `{ans.get('model')}/`"
                if "model" in ans else f"the constant {ans.get('constant')}")
    scale = meta.get("cost_scale")
    if scale:
        cost_line += (f", its price (the costliest segment's `E[L]`) mapped to `E[L | price]` by "
                      f"the strictly increasing cost scale in `policy.json` "
                      f"({len(scale.get('log_price', []))} knots, fitted on {scale.get('n')} "
                      "out-of-fold prices: `guard.cost_scale`)")
    ascale = meta.get("alpha_scale")
    if ascale and "model" in ans:
        ans_line += (f", its `alpha` recalibrated for unseen kinds of questions by Platt scaling "
                     f"of grouped out-of-fold predictions (slope {_f(ascale.get('slope'))}, "
                     f"intercept {_f(ascale.get('intercept'))}, {ascale.get('n')} questions: "
                     "`guard.alpha_scale`)")
    v = meta.get("versions") or {}
    pooled = _POOLED if str(tr.get("model", "")).startswith("pooled") else ""
    return f"""# Policy `{label}` — card

A utilityguard decision policy: everything the guard needs to decide, fitted together.
`Guard.from_policy(...)` and `utilityguard serve --policy ...` load it; every decision names
it (`x-utilityguard-policy: {label}` and the audit log's `policy` column).

- **Rule:** answer iff the expected utility of answering, `q = p - (1 - p) L`, is at least
  that of refusing, `alpha (-C_R) + (1 - alpha)`: exactly `policies.should_answer(p, L, C_R,
  alpha=alpha)`; default `C_R = {meta.get('c_r')}`.
- **Confidence:** signal `{meta.get('signal')}` from `--confidence {meta.get('confidence')}`,
  calibrated by `calibrator/` (method `{(meta.get('calibrator') or {}).get('method')}`).
- **Answerability `alpha = P(answerable | query)`:** {ans_line}.
- **Consequence cost `L`:** {cost_line}.

## What fitted it

- Data: {tr.get('data', 'n/a')} ({tr.get('n', 'n/a')} items; sha256 of the rows
  `{tr.get('data_sha256', 'n/a')}`).
- Responses: {tr.get('responses', 'n/a')} (model `{tr.get('model', 'n/a')}`, sha256
  `{tr.get('responses_sha256', 'n/a')}`).
- Parts: {tr.get('parts', 'all fitted on the data above')}
- Command: `{meta.get('command', 'n/a')}`
- Created {meta.get('created')}; Python {v.get('python')}, scikit-learn {v.get('scikit-learn')},
  numpy {v.get('numpy')}.

## Cross-fitted evaluation (before fitting on all data)

{_evaluation(meta.get('evaluation') or {})}

## Files (sha256, checked on every load)

Every part is data (`.npz` arrays read without pickle, JSON parameters): loading runs no
code from this folder. It refuses a file whose sha256 differs from this list or from its own
sidecar, or one made with another scikit-learn (`trust=True` / `--trust` only for a policy
you made yourself). The policy's name `{label}` ends with the first 8 hex digits of
the sha256 of `policy.json`, which holds these hashes.

| file | sha256 |
| --- | --- |
{files}

## Limits

{pooled}Fitted on one question set and the replies above: `p` is calibrated for that model and that
kind of question, `alpha` learned from that set's answerable / refusal-required mix. On other
questions, check the cross-fitted figures with `--group-folds` (held-out sources). For your own
model: run the guard in shadow mode (`serve --mode shadow --audit-path DB`: it decides and
records, and delivers every reply), label a sample of its decisions (`POST /v1/feedback`), and
refit from that traffic (`utilityguard fit --from-audit`; docs/policies.md). A policy must be
refit (the command above) after the data or responses change.

License: MIT, as the data it was fitted on (the policy holds no model weights; the model whose
replies fitted it has its own license).
"""
