"""The README card of a request detector folder, from what ``asking train`` measured."""

from __future__ import annotations

from typing import Any

from benchmarks.asking import HISTORY_GRID, IN_A_SYSTEM_PROMPT, STRICT_SHARE


def _kept_line(group: str, share: float) -> str:
    """One group's line: read strictly a group keeps :data:`STRICT_SHARE` of its price, the
    others 90%; the whole-text group is measured, not constrained."""
    if group.endswith("read strictly"):
        return (f"  - {group} (its system text read as asking nothing as a whole, the worst "
                f"case a client can write): {share:.1%} keep at least {STRICT_SHARE:.0%} of "
                "their price")
    note = " (measured, not constrained)" if group == IN_A_SYSTEM_PROMPT else ""
    return f"  - {group}: {share:.1%} keep at least 90% of their price{note}"


def detector_card(meta: dict[str, Any]) -> str:
    th = [*meta.get("thresholds", [0, 0, 0]), 0.5][:4]
    kept = meta.get("train_costly_kept", {})
    kept_lines = "\n".join(_kept_line(k, v) for k, v in kept.items())
    all_th = meta.get("thresholds", [])
    strict_price = (f"at or above {all_th[4]} (the cost model's raw price)" if len(all_th) > 4
                    else "never (off)")
    return f"""# Request detector — model card

`P(asks | text)`: does a sentence (or a whole text) ask for information or an action, or for
nothing (a persona, a rule, a greeting, thanks, assistant boilerplate, a tool description)?
The guard prices only what asks (`guard/asking.py`, docs/concepts.md "What is priced").

- **Model:** logistic regression (C = {meta.get('C')}, balanced classes) on the cost model's
  features (affix TF-IDF + wordllama embeddings), shared code with the answerability model
  (`cost_models/text_classifier.py`). Data-only artifact (`.npz` + JSON sidecar with its sha256);
  loading runs no code.
- **Training data:** the training split of `cost_models/data/asking/corpus.jsonl` (sha256
  `{meta.get('corpus_sha256')}`; the published CC0 prompts labelled by reading, the
  writers' training files: the corpus card says which) and every seed question
  ({meta.get('units')} units, of which {meta.get('asking_units')} ask). Sentences are cut as
  the runtime cuts them; a seed sentence weighs more the costlier its question.
- **Thresholds** (sentence, text, strict) = ({th[0]}, {th[1]}, {th[2]}): a sentence below
  {th[0]} asks for nothing; in a text of several sentences whose own `P(asks)` is below
  {th[1]}, a sentence asks only at {th[2]} or more, or when it is priced {strict_price}
  (a doubted sentence the cost model prices high: a costly question diluted in a persona).
  Chosen out of fold ({meta.get('folds')} folds
  grouped by unit) on the training split alone: the thresholds that leave the most training
  non-request texts priced below the seed set's 25th-percentile cost
  ({meta.get('seed_p25_cost', 0):.3f}) while at least 99% of each group of costly training
  requests keeps 90% of its price:
{kept_lines}
  - training non-request texts priced below the 25th percentile: \
{meta.get('train_non_request_below_p25', 0):.1%} (out of fold; the held-out figure is in
    docs/results.md, `utilityguard asking eval`)
- **Earlier turns** (history) = {th[3]}: a sentence of an earlier turn (the user's before the
  last, the model's own) below {th[3]} asks for nothing. Chosen after the others, out of fold:
  the largest value of {', '.join(str(h) for h in HISTORY_GRID)} under which at least 99% of
  the costly seed questions sent as an earlier user turn keep 90% of their price
  ({meta.get('train_costly_in_history_kept', 0):.1%}); training social lines sent as an
  earlier turn then priced below the 25th percentile:
  {meta.get('train_harmless_history_below_p25', 0):.1%}.
- **Out-of-fold AUC:** {meta.get('oof_auc', 0):.3f}.
- **Command:** `{meta.get('command')}`

## Limits

English only: a sentence that is not readable English never reaches the detector (it is
priced at the ceiling, `unreadable_price`). Short fragments carry few features; a sentence
made only of pleasantries is left out by a closed vocabulary (`guard/pleasantries.py`) before
the detector is asked. A hostile client can still try to dress a costly request as a rule:
the thresholds were chosen to keep dressed requests' prices, and the hostile-client suites
measure it (docs/security.md). License: MIT (the corpus's sources: its README).
"""
