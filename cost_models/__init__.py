"""Consequence costs: datasets, BWS + Bradley-Terry annotation, regressors, persistence."""

from cost_models.model_io import load_default, load_model, save_model
from cost_models.persistence import ArtifactError
from cost_models.regressor import CostRegressor

__all__ = ["ArtifactError", "CostRegressor", "load_default", "load_model", "save_model"]
