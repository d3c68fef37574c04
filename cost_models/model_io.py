"""Saving, loading and describing cost models (artifact + JSON sidecar + README card)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from cost_models.data_io import ridge_of
from cost_models.persistence import load_artifact, read_sidecar, save_artifact
from cost_models.regressor import CostRegressor
from utilityguard_base.exceptions import ArtifactError

ARTIFACT = "cost_model"
DEFAULT_DIR = "data/default_model"


def default_model_dir() -> Path:
    return Path(str(resources.files("cost_models").joinpath(DEFAULT_DIR)))


def save_model(model: CostRegressor, directory: str | os.PathLike[str],
               metadata: dict[str, Any]) -> Path:
    """Write the artifact, its sidecar and a README model card."""
    side = save_artifact(model, directory, name=ARTIFACT, metadata=metadata)
    (Path(directory) / "README.md").write_text(model_card(read_sidecar(directory, name=ARTIFACT)))
    return side


def load_model(directory: str | os.PathLike[str], *, trust: bool = False) -> CostRegressor:
    """Load a cost model after checking its sha256 and scikit-learn version."""
    model = load_artifact(directory, name=ARTIFACT, trust=trust, rebuild=CostRegressor.from_data)
    if not isinstance(model, CostRegressor):
        raise ArtifactError(f"{directory}: the artifact is not a CostRegressor")
    return model


def load_default(*, trust: bool = False) -> CostRegressor:
    """The shipped default cost model (trained on the seed set; see its README).

    >>> m = load_default()
    >>> bool((m.predict(["What is 2 + 2?"]) > 0).all())
    True
    """
    return load_model(default_model_dir(), trust=trust)


def _f(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def model_card(meta: dict[str, Any]) -> str:
    """A README for a model directory, from its sidecar."""
    sel = meta.get("cv", {}).get("selected", {})
    rows = "\n".join(
        f"| {s['kind']} | {ridge_of(s)} | {_f(s['spearman'])} | {_f(s['mae_log'])} | "
        f"{_f(s.get('decision_agreement'))} | {_f(s.get('decision_regret'))} | "
        f"{_f(s.get('decision_agreement_median'))} | {_f(s.get('decision_regret_median'))} | "
        f"{s.get('seconds')} |"
        for s in [sel, *meta.get("cv", {}).get("alternatives", [])] if s
    )
    cv_meta = meta.get("cv", {})
    searched = cv_meta.get("ridge_search", cv_meta.get("alpha_search", []))  # older name
    search = ", ".join(f"{ridge_of(s)}: {_f(s['mae_log'])}" for s in searched)
    v = meta.get("versions", {})
    cv = meta.get("cv", {})
    if "scheme" not in cv:
        heading, how = "not recorded", ("This artifact predates the record of its CV scheme: "
                                         "whether its folds held out whole sources is unknown.")
    elif cv.get("grouped"):
        heading, how = cv["scheme"], ("Each fold holds out whole "
                                      f"`{meta.get('group_col')}` values, so scores are for "
                                      "unseen sources.")
    else:
        heading, how = cv["scheme"], ("The folds are NOT grouped: items of one source can sit "
                                      "in both the training and the test folds, so these scores "
                                      "are optimistic for sources the model has never seen.")
    return f"""# Cost model — model card

A consequence-cost regressor: question text -> `E[L | x] = exp(mu + s^2/2)`, where `mu` is
the predicted mean of `log L` and `s^2 = {_f(meta.get('residual_var'))}` the out-of-fold
residual variance (log-normal mean correction; docs/design.md).

- **Kind:** `{meta.get('kind')}` (ridge penalty {meta.get('ridge', meta.get('alpha'))}), trained on
  {meta.get('n_train')} items of `{meta.get('data')}`.
- **Training data:** {meta.get('data_description', 'see the data source')}
- **Paraphrases:** {meta.get('paraphrases') or 'none'} (other phrasings of training
  questions at their questions' costs, trained on and never scored; `--paraphrases`)
- **Training-data hash (sha256 of the rows):** `{meta.get('training_data_sha256')}`
- **Artifact sha256:** `{meta.get('sha256')}`; scikit-learn {v.get('scikit-learn')},
  numpy {v.get('numpy')}, Python {v.get('python')}. Loading checks both and refuses a
  mismatch; the artifact is data (`.npz` + JSON parameters), loading runs no code from
  it; `--trust` skips the check for files you made.
- **Command:** `{meta.get('command')}`

## Cross-validation ({meta.get('cv_folds')} folds): {heading}

{how} `decision agreement`:
share of (item, p) pairs, p in 0..1 step 0.01, where the rule at C_R = {meta.get('c_r')} decides
the same with the predicted `E[L]` as with the true `L`; `decision regret`: the mean
expected-utility loss of those decisions against deciding with the true `L`. The same two
for the median `exp(mu)` show why the guard uses the mean: the median agrees more often, the
mean loses less utility (costly errors dominate). Nested CV: every outer fold refits the full
model including its own `s^2`; the alternatives were scored on `log L` only.

| kind | ridge | Spearman (log L) | MAE (log L) | agreement E[L] | regret E[L] | \
agreement median | regret median | seconds |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
{rows}

Ridge-penalty search (MAE of log L): {search}.

## Intended use and limits

Predicts how costly a wrong answer to a query would be, relative to the training scale
(median 2). Trained on {meta.get('n_train')} items; expect errors on domains and phrasings
far from the training data. These are not UtilityBench's published costs unless the
training data says so. License: MIT.
"""
