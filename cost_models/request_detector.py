"""The request detector: ``P(asks | sentence)``, does a sentence ask for something?

A real request carries text that asks for nothing: the assistant's persona and rules (a system
prompt), formatting instructions, greetings, thanks, acknowledgements, the assistant's own
boilerplate, tool descriptions. The cost model, trained on questions, prices any text as a
question ("How can I help you today?" at 18), so the guard prices only the sentences that ask
(:mod:`guard.asking`). This classifier tells them apart: the positive class is a request for
information or action, or the context one depends on; the negative class is everything that
asks for nothing. It is the shared logistic text classifier
(:class:`~cost_models.text_classifier.LogisticTextClassifier`) with balanced class weights,
trained by ``utilityguard cost train-detector`` on the corpus of ``cost_models/data/asking``
(its README: sources, labels by reading, the held-out split) and the seed questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from cost_models.query_features import QueryFeatures
from cost_models.text_classifier import LogisticTextClassifier

FloatArray = NDArray[np.float64]
__all__ = ["ASKING_LABELS", "RequestDetector", "load_default_detector", "load_detector",
           "save_detector"]
#: The corpus labels of text that asks (kept and priced); every other label asks for nothing.
ASKING_LABELS = frozenset({"request", "context"})


class RequestDetector(LogisticTextClassifier):
    """Predict ``P(asks | text)`` (:class:`~cost_models.text_classifier.
    LogisticTextClassifier`: ``C``, ``features``, ``max_chars``), classes balanced."""

    embed_weight: ClassVar[float] = 0.5
    positive: ClassVar[str] = "asking"
    negative: ClassVar[str] = "non-request"
    class_weight: ClassVar[str | None] = "balanced"
    max_iter: ClassVar[int] = 3000

    def __init__(self, C: float = 10.0, features: str = "affix-embed",
                 max_chars: int = 1000,
                 thresholds: tuple[float, ...] = (0.2, 0.0, 0.2)) -> None:
        super().__init__(C=C, features=features, max_chars=max_chars)
        #: ``(sentence, text, strict[, history[, strict_price[, lone, lone_price]]])``: what
        #: the guard reads with (:class:`guard.asking.Thresholds`), chosen out of fold on the
        #: training split alone (``utilityguard asking train``; the last two ``utilityguard
        #: asking doubt``)
        self.thresholds = thresholds
        #: the doubt model (a :class:`cost_models.regressor.CostRegressor` that has seen text
        #: that asks for nothing at the floor: ``Thresholds.lone``), loaded from the
        #: detector's folder when its thresholds name the rule (:func:`load_detector`)
        self.doubt: Any = None

    def to_data(self) -> tuple[dict[str, Any], dict[str, Any]]:
        params, arrays = super().to_data()
        params["thresholds"] = list(self.thresholds)
        return params, arrays

    @classmethod
    def from_data(cls, params: dict[str, Any], arrays: dict[str, Any]) -> RequestDetector:
        model = super().from_data(params, arrays)
        model.thresholds = tuple(float(x) for x in params.get("thresholds", (0.2, 0.0, 0.2)))
        return model

    def predict_asks(self, X: Any) -> FloatArray:
        """``P(asks)`` of every text, in [0, 1]."""
        return self.p(X)

    def predict_asks_one(self, features: QueryFeatures) -> float:
        """``P(asks)`` of one text from its shared features (:meth:`p_one`)."""
        return self.p_one(features)


#: The artifact's name in its folder, and the shipped folder (inside the package).
ARTIFACT = "request_detector"
#: The doubt model's artifact name, in the detector's folder (``utilityguard asking doubt``).
DOUBT = "doubt_model"
#: The index of ``lone`` in :attr:`RequestDetector.thresholds` (after ``strict_price``).
LONE_AT = 5
DEFAULT_DIR = "data/request_detector"


def save_detector(model: RequestDetector, directory: Any, metadata: dict[str, Any]) -> Any:
    """Write the detector as data (``request_detector.npz`` + its JSON sidecar)."""
    from cost_models.persistence import save_artifact

    return save_artifact(model, directory, name=ARTIFACT, metadata=metadata)


def load_detector(directory: Any, *, trust: bool = False) -> RequestDetector:
    """Load a detector after checking its sha256 and scikit-learn version (no code runs)."""
    from cost_models.persistence import load_artifact
    from utilityguard_base.exceptions import ArtifactError

    model = load_artifact(directory, name=ARTIFACT, trust=trust,
                          rebuild=RequestDetector.from_data)
    if not isinstance(model, RequestDetector):
        raise ArtifactError(f"{directory}: the artifact is not a RequestDetector")
    if len(model.thresholds) > LONE_AT:  # the rule is named: its model must be there
        from cost_models.regressor import CostRegressor

        if not (Path(directory) / f"{DOUBT}.json").exists():
            raise ArtifactError(
                f"{directory}: the detector's thresholds name a doubt model ({DOUBT}.json), "
                "which is missing; run `utilityguard asking doubt --out` on this folder")
        doubt = load_artifact(directory, name=DOUBT, trust=trust,
                              rebuild=CostRegressor.from_data)
        if not isinstance(doubt, CostRegressor):
            raise ArtifactError(f"{directory}: {DOUBT} is not a CostRegressor")
        model.doubt = doubt
    return model


def load_default_detector() -> RequestDetector:
    """The shipped detector (``cost_models/data/request_detector``; its README is the card)."""
    from importlib import resources

    return load_detector(str(resources.files("cost_models").joinpath(DEFAULT_DIR)))
