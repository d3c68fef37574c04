"""The names of the cost-model kinds, importable without scikit-learn (the CLI lists them in
``--help``); :class:`cost_models.regressor.CostRegressor` implements them."""

KINDS = ("affix-ridge", "affix-embed-ridge", "char-ridge", "svd-hgb")
