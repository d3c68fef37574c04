"""Building a route's :class:`~guard.Guard` from the proxy's settings.

:func:`build_guard` loads what ``serve`` names: a fitted policy (:func:`policy_guard`), or a
cost model and calibrator, or the shipped default policy, or the bare rule (``--policy
none``), with the confidence extractors of ``--confidence`` (:func:`build_extractors`);
loading errors surface here, before serving. :func:`refusal_budget` is the
``--refusal-budget`` controller of a route's ``C_R``.
"""

from __future__ import annotations

from typing import Any

from guard.calibration import Calibrator
from guard.confidence.extractors import Extractor, confidence_kind, extractors_for
from guard.core import Guard
from guard.exceptions import ConfigError
from guard.protocols import CostModel
from guard.refusal_budget import RefusalBudget
from guard.settings import Settings

#: The confidence signals each ``--confidence`` kind provides (what a calibrator may read).
SIGNALS_OF: dict[str, tuple[str, ...]] = {
    "logprobs": ("logprob_mean", "logprob_low10"), "verbal": ("verbal",),
    "logprobs+verbal": ("logprob_mean", "logprob_low10", "verbal"),
    "consistency": ("consistency",), "caller": ("caller",),
    "ptrue": ("logprob_mean", "logprob_low10", "ptrue"),
}


#: ``--policy none``: the bare rule (no default policy).
NO_POLICY = "none"


def build_detector(settings: Settings) -> Any:
    """The request detector ``settings.request_detector`` names: ``USE_DEFAULT`` (the shipped
    one, loaded on first use), ``None`` (every sentence priced) or one loaded from a folder."""
    from guard.core import USE_DEFAULT

    name = settings.request_detector.strip()
    if name == "default":
        return USE_DEFAULT
    if name == "none":
        return None
    from cost_models.request_detector import load_detector

    return load_detector(name, trust=settings.trust_artifacts)


def confidence_of(settings: Settings, policy_confidence: str = "logprobs") -> str:
    """The confidence source ``settings`` name, ``auto`` read as ``policy_confidence`` (what the
    policy deciding reads)."""
    return policy_confidence if settings.confidence == "auto" else settings.confidence


def build_extractors(settings: Settings, policy_confidence: str = "logprobs"
                     ) -> tuple[Extractor, ...]:
    """The confidence extractors for ``settings.confidence`` (:func:`confidence_of`; none for
    ``"caller"``)."""
    return extractors_for(confidence_of(settings, policy_confidence),
                          consistency_samples=settings.consistency_samples)


def build_guard(settings: Settings, cost_model: CostModel | None = None) -> Guard:
    """The Guard described by ``settings``; ``cost_model`` overrides ``settings.cost_model``
    (and a policy's)."""
    bare = settings.policy == NO_POLICY
    if settings.policy is not None and not bare:
        return policy_guard(settings, cost_model)
    if cost_model is None and settings.cost_model is not None:
        from cost_models import load_model

        cost_model = load_model(settings.cost_model, trust=settings.trust_artifacts)
    calibrator = None
    if settings.calibrator is not None:
        calibrator = Calibrator.load(settings.calibrator, trust=settings.trust_artifacts)
        kind = confidence_of(settings, confidence_kind(calibrator.signal))
        allowed = SIGNALS_OF[kind]
        if calibrator.signal not in allowed:
            raise ConfigError(
                f"the calibrator in {settings.calibrator} reads {calibrator.signal!r}, which "
                f"confidence={kind!r} does not provide ({', '.join(allowed)})")
    # no --policy: the parts not given come from the shipped default policy (Guard's
    # default); --policy none: the bare rule
    if bare or calibrator is not None:
        own = "logprobs" if calibrator is None else confidence_kind(calibrator.signal)
    else:
        from guard.policy import load_shipped_default

        own = load_shipped_default().confidence
    if bare:
        return Guard(cost_model, calibrator, config=settings.decision_config(),
                     extractors=build_extractors(settings, own), policy=None,
                     asking=settings.asking_config(), detector=build_detector(settings))
    return Guard(cost_model, calibrator, config=settings.decision_config(),
                 extractors=build_extractors(settings, own), asking=settings.asking_config(),
                 detector=build_detector(settings))


def policy_guard(settings: Settings, cost_model: CostModel | None = None) -> Guard:
    """The Guard of ``settings.policy`` (a fitted policy), with the proxy's settings for
    mode, refusal text, no-confidence policy and extractors; ``C_R`` is the policy's unless
    set explicitly."""
    from guard.policy import load_policy

    if settings.cost_model is not None or settings.calibrator is not None:
        raise ConfigError("a policy carries its own cost model and calibrator: pass --policy "
                          "without --cost-model / --calibrator")
    policy = load_policy(str(settings.policy), trust=settings.trust_artifacts)
    kind = confidence_of(settings, policy.confidence)
    allowed = SIGNALS_OF[kind]
    if not set(policy.signals) & set(allowed):
        raise ConfigError(
            f"the policy {policy.label} reads {', '.join(policy.signals)}, which confidence="
            f"{kind!r} does not provide; serve with --confidence {policy.confidence}")
    if cost_model is not None:  # the policy's cost scale was fitted for its own cost model
        policy.cost_model, policy.cost_scale = cost_model, None
    overrides: dict[str, Any] = {
        "refusal_text": settings.refusal_text, "mode": settings.mode,
        "no_confidence": settings.no_confidence,
        "extractors": build_extractors(settings, policy.confidence),
        "asking": settings.asking_config(), "detector": build_detector(settings)}
    if "c_r" in settings.model_fields_set:
        overrides["c_r"] = settings.c_r
    return Guard.from_policy(policy, **overrides)


def refusal_budget(settings: Settings, guard: Guard) -> RefusalBudget | None:
    """The ``--refusal-budget`` controller, starting from the guard's C_R (None when off);
    the proxy points it at the shared audit store when it starts serving
    (:mod:`guard.proxy.budget_ledger`)."""
    if settings.refusal_budget is None:
        return None
    return RefusalBudget(settings.budget_config(), c_r=guard.c_r)
