"""Consequence costs: datasets, BWS + Bradley-Terry annotation, regressors, persistence.

The names below load on first use (scikit-learn takes seconds to import), so importing a
light submodule such as :mod:`cost_models.datasets` or :mod:`cost_models.persistence` does
not pay for the regressor.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cost_models.model_io import load_default, load_model, save_model
    from cost_models.regressor import CostRegressor
    from utilityguard_base.exceptions import ArtifactError

__all__ = ["ArtifactError", "CostRegressor", "load_default", "load_model", "save_model"]

_HOMES = {
    "ArtifactError": "utilityguard_base.exceptions",
    "CostRegressor": "cost_models.regressor",
    "load_default": "cost_models.model_io",
    "load_model": "cost_models.model_io",
    "save_model": "cost_models.model_io",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'cost_models' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
