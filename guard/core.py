"""The Guard: cost, probability, decision, delivery.

For one query and one candidate reply the guard takes the consequence cost ``L`` (from the
cost model, or given by the caller), a probability ``p`` that the reply is correct (a
calibrated confidence signal, a caller-supplied probability, or a prior), and decides with
``policies.should_answer(p, L, C_R, alpha=alpha)``: answer iff ``p >= (L - C_R) / (1 + L)``.
Replies in which the model refuses by itself are passed through as refusals, but only when the
guard would have answered: below the threshold the refusal text is delivered whatever the reply
says (a reply that opens like a refusal never overrides a refuse decision).

Where ``p`` comes from, in order (recorded as ``p_source``):

1. ``"calibrated"``: one of the calibrator's signals is present in the reply's confidence (a
   multi-signal calibrator reads every signal it has and the reply text; it leaves out the
   signals a reply lacks);
2. ``"caller"``: the caller supplied a probability (``Confidence(caller=p)`` or a number);
   then ``"calibrated"`` again for a multi-signal calibrator that reads the reply's text
   alone when the reply has none of its signals;
3. ``"uncalibrated"`` (no calibrator only): the first present of ``signal`` (or of
   ``logprob_mean, verbal, consistency, logprob_low10``), mapped by
   :func:`guard.calibration.raw_probability`;
4. ``"prior"``: ``no_confidence`` is a probability;
5. ``"none"``: ``no_confidence="refuse"`` refuses and ``"answer"`` answers. When the threshold
   is <= 0 every ``p`` answers, so the guard answers whatever ``no_confidence`` says (the
   decision then agrees with ``should_answer`` for every possible ``p``).

Every decision is also stored for :func:`guard.last_decision` (see :mod:`guard.context`).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from guard.alpha_scale import AlphaScale
from guard.asking import (
    DEFAULT_THRESHOLDS,
    NOTHING_ASKED_PRICE,
    AskingConfig,
    Memo,
    Reading,
    Thresholds,
    as_asked,
    asks_in_form,
    read,
    scored,
)
from guard.calibration import raw_probability
from guard.completion import is_completion
from guard.confidence.extractors import (
    Extractor,
    LogprobExtractor,
    VerbalExtractor,
    apply_overrides,
    extract_confidence,
    provided_signals,
)
from guard.context import remember_decision
from guard.cost_scale import CostScale
from guard.decision_config import DecisionConfig, NoConfidence, check_cost
from guard.decision_records import (
    SIGNALS,
    Confidence,
    CostSource,
    Decision,
    DecisionRecord,
    Mode,
    PricedBy,
    PSource,
)
from guard.default_policy import DEFAULT_POLICY as DEFAULT_POLICY
from guard.default_policy import (
    NO_POLICY,
    PolicyParts,
    _UseDefault,
    default_applies,
    default_parts,
)
from guard.default_policy import USE_DEFAULT as USE_DEFAULT
from guard.delivery import as_given, decide_completion, delivered_completion, refused_choices
from guard.exceptions import ConfigError
from guard.pleasantries import is_pleasantry
from guard.price import Price as Price
from guard.protocols import (
    AnswerabilityEstimator,
    CostModel,
    ProbabilityCalibrator,
    RequestDetectorLike,
    as_calibrator,
    load_default_cost_model,
    load_default_detector,
)
from guard.reading import normalized, unreadable
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT, is_refusal
from guard.refusal_substitution import plain_mapping
from guard.segments import Query, request_segments
from policies import DEFAULT_C_R, answer_threshold, expected_utility, refusal_expected_utility

if TYPE_CHECKING:
    from guard.policy.artifact import Policy

log = logging.getLogger(__name__)
R = TypeVar("R")


class Guard:
    """Decide, per reply, whether delivering it beats refusing.

    Parameters
    ----------
    cost_model : CostModel, optional
        Predicts ``E[L]`` from the query text; default ``cost_models.load_default()``, loaded
        once on first use.
    calibrator : Calibrator, optional
        Maps its ``signal`` to a calibrated ``p``; without one ``p`` is uncalibrated.
    c_r : float, default 2.0
        Price of an unnecessary refusal ``C_R >= 0``.
    refusal_text : str, default "I cannot answer."
        What the caller receives instead of a refused reply.
    mode : {"enforce", "shadow"}, default "enforce"
        ``"shadow"`` records decisions but always delivers the reply.
    no_confidence : {"refuse", "answer"} or float, default "refuse"
        What to do when no probability can be had; a float is a prior ``p``.
    alpha : float, optional
        ``P(answerable | x)``; ``None`` means 1 (the paper's rule).
    signal : str, optional
        Without a calibrator, the only signal to read (default: the first present).
    extractors : iterable of Extractor, optional
        How confidence is requested and read; default logprobs and verbal. A calibrator
        must read a signal they provide (or ``caller``): :class:`ConfigError` otherwise.
    config : DecisionConfig, optional
        ``c_r``, ``alpha``, ``mode``, ``no_confidence`` and ``refusal_text`` as one value
        object (e.g. ``Settings.decision_config()``), instead of the keyword arguments.
    answerability : AnswerabilityEstimator, optional
        Predicts ``alpha = P(answerable | query)`` per query (a policy's answerability
        model); used when ``decide`` gets no ``alpha=``. Without it, ``alpha`` (or 1).
    policy : str or None, optional
        Not given: a Guard given no calibrator, answerability model or ``alpha`` decides with
        the shipped ``default`` policy (:data:`DEFAULT_POLICY`: the question-only cost and
        answerability models and a calibrator pooled over every shipped model's replies),
        and records its name. ``None``: the bare rule (``alpha`` = 1, ``p`` uncalibrated,
        unless parts are given). A string: the name of the policy (``NAME@SHA8``) recorded
        in every decision (:meth:`from_policy` sets it).
    cost_scale : CostScale, optional
        A policy's strictly increasing map of the raw cost (the costliest segment's
        ``E[L]``) to ``E[L | raw cost]`` (:mod:`guard.cost_scale`); the default policy's
        applies when no cost model is given.
    alpha_scale : AlphaScale, optional
        A policy's recalibration of its answerability model's ``alpha`` for kinds of
        questions it has not seen (:mod:`guard.alpha_scale`); applied to every ``alpha``
        the answerability model predicts (not to an ``alpha=`` given).
    detector : RequestDetector or None, optional
        Tells sentences that ask from text that asks for nothing (:mod:`guard.asking`);
        default the shipped one, loaded on first use. ``None``: every sentence is priced.
    asking : AskingConfig, optional
        How a request is priced: the ceiling for text the guard cannot read or that lives
        upstream, trusted system prompts, the detector's threshold, the segment cap.
    """

    def __init__(
        self,
        cost_model: CostModel | None = None,
        calibrator: ProbabilityCalibrator | None = None,
        *,
        c_r: float = DEFAULT_C_R,
        refusal_text: str = DEFAULT_REFUSAL_TEXT,
        mode: str = "enforce",
        no_confidence: NoConfidence = "refuse",
        alpha: float | None = None,
        signal: str | None = None,
        extractors: Iterable[Extractor] | None = None,
        config: DecisionConfig | None = None,
        answerability: AnswerabilityEstimator | None = None,
        policy: str | _UseDefault | None = USE_DEFAULT,
        cost_scale: CostScale | None = None,
        alpha_scale: AlphaScale | None = None,
        detector: RequestDetectorLike | _UseDefault | None = USE_DEFAULT,
        asking: AskingConfig | None = None,
    ) -> None:
        if config is None:
            config = DecisionConfig.build(c_r=c_r, alpha=alpha, mode=mode,
                                          no_confidence=no_confidence, refusal_text=refusal_text)
        #: c_r, alpha, mode, no_confidence, refusal_text (``config`` given: the keyword
        #: arguments of the same names are not read)
        self.config = config
        calibrator = None if calibrator is None else as_calibrator(calibrator)
        if signal is not None:
            if signal not in SIGNALS:
                raise ConfigError(
                    f"unknown confidence signal {signal!r}; allowed: {', '.join(SIGNALS)}"
                )
            if calibrator is not None and calibrator.signal != signal:
                raise ConfigError(
                    f"signal={signal!r} but the calibrator reads {calibrator.signal!r}"
                )
        extractors = None if extractors is None else tuple(extractors)
        self._cost_model = cost_model
        #: the caller gave a cost model (the shipped default's cost scale is not for it)
        self._own_cost_model = cost_model is not None
        self._detector = detector
        #: how a request is priced (:class:`guard.asking.AskingConfig`)
        self.asking = asking if asking is not None else AskingConfig()
        self._cost_lock = threading.Lock()
        self.signal = signal
        self.extractors: tuple[Extractor, ...] = (
            (LogprobExtractor(), VerbalExtractor()) if extractors is None else tuple(extractors)
        )
        if calibrator is not None:
            provided = (*provided_signals(self.extractors), "caller")
            if not set(calibrator.signals) & set(provided):
                raise ConfigError(
                    f"the calibrator reads {calibrator.signal!r}, which the guard's extractors "
                    f"do not provide ({', '.join(provided)}); pass extractors= that read it"
                )
        self._signals = (signal,) if signal else tuple(s for s in SIGNALS if s != "caller")
        self._parts = PolicyParts(calibrator, answerability,
                                  None if isinstance(policy, _UseDefault) else policy,
                                  cost_scale, alpha_scale)
        #: the shipped default policy's parts are still to be read (:meth:`_resolved`), with
        #: the extractors the caller gave (``None``: the default ones)
        self._pending = isinstance(policy, _UseDefault) and default_applies(
            calibrator=calibrator, answerability=answerability,
            alpha=alpha if alpha is not None else config.alpha, signal=signal)
        self._given_extractors = extractors

    def _resolved(self) -> PolicyParts:
        """The guard's policy parts; the shipped default's read on first use (once, see
        :mod:`guard.default_policy`)."""
        if not self._pending:
            return self._parts
        with self._cost_lock:
            if self._pending:
                parts = default_parts(self._given_extractors)
                if parts is not NO_POLICY:  # its cost scale was fitted for its cost model
                    keep = self._own_cost_model or self._parts.cost_scale is not None
                    self._parts = replace(parts, cost_scale=self._parts.cost_scale if keep
                                          else parts.cost_scale)
                self._pending = False
        return self._parts

    @property
    def calibrator(self) -> ProbabilityCalibrator | None:
        """Maps the reply's confidence to a calibrated ``p`` (``None``: uncalibrated)."""
        cal: ProbabilityCalibrator | None = self._resolved().calibrator
        return cal

    @property
    def answerability(self) -> AnswerabilityEstimator | None:
        """Predicts ``alpha = P(answerable | query)`` (``None``: ``alpha`` as configured)."""
        model: AnswerabilityEstimator | None = self._resolved().answerability
        return model

    @property
    def policy(self) -> str | None:
        """The label (``NAME@SHA8``) of the fitted policy the guard decides with, recorded in
        every decision; ``None`` for the bare rule."""
        return self._resolved().label

    @property
    def cost_scale(self) -> CostScale | None:
        """A policy's map of the raw cost to ``E[L | raw cost]`` (:mod:`guard.cost_scale`)."""
        return self._resolved().cost_scale

    @property
    def alpha_scale(self) -> AlphaScale | None:
        """A policy's recalibration of the answerability model (:mod:`guard.alpha_scale`)."""
        return self._resolved().alpha_scale

    @classmethod
    def from_policy(cls, policy: Policy | str | os.PathLike[str], *, trust: bool = False,
                    **overrides: Any) -> Guard:
        """The Guard a fitted policy describes: its cost model, calibrator, answerability
        model, scales and default ``C_R``, with the extractors its confidence needs (see
        :mod:`guard.policy`). ``policy`` is a loaded :class:`~guard.policy.Policy`, a policy
        directory or the name of a shipped policy (``"smollm2"``); a directory's or name's
        every part's sha256 is checked on load (``trust=True`` skips it, for policies you
        made). ``overrides`` are keyword arguments of :class:`Guard` (``mode``, ``c_r``,
        ``refusal_text``, ``no_confidence``, ``extractors``, ...).
        """
        from guard.confidence.extractors import extractors_for
        from guard.policy.artifact import Policy, load_policy

        p = policy if isinstance(policy, Policy) else load_policy(policy, trust=trust)
        kwargs: dict[str, Any] = {"c_r": p.c_r, "extractors": extractors_for(p.confidence)}
        kwargs.update(overrides)
        return cls(p.cost_model, p.calibrator, answerability=p.answerability,
                   alpha=p.alpha_constant, policy=p.label, cost_scale=p.cost_scale,
                   alpha_scale=p.alpha_scale, **kwargs)

    @property
    def c_r(self) -> float:
        """The price of an unnecessary refusal (``self.config.c_r``)."""
        return self.config.c_r

    @property
    def mode(self) -> Mode:
        return self.config.mode

    @property
    def alpha(self) -> float | None:
        return self.config.alpha

    @property
    def no_confidence(self) -> NoConfidence:
        return self.config.no_confidence

    @property
    def refusal_text(self) -> str:
        return self.config.refusal_text

    def __repr__(self) -> str:
        cal = type(self.calibrator).__name__ if self.calibrator is not None else None
        return (
            f"Guard(c_r={self.c_r}, mode={self.mode!r}, no_confidence={self.no_confidence!r}, "
            f"alpha={self.alpha}, calibrator={cal}, policy={self.policy!r})"
        )

    @property
    def cost_model(self) -> CostModel:
        """The cost model; the shipped default is loaded on first use (once)."""
        model = self._cost_model
        if model is None:
            with self._cost_lock:
                model = self._cost_model
                if model is None:
                    model = load_default_cost_model()
                    self._cost_model = model
        return model

    @property
    def detector(self) -> RequestDetectorLike | None:
        """The request detector; the shipped one is loaded on first use (once)."""
        d = self._detector
        if isinstance(d, _UseDefault):
            with self._cost_lock:
                d = self._detector
                if isinstance(d, _UseDefault):
                    d = load_default_detector()
                    self._detector = d
        return d

    def predict_cost(self, query: Any) -> float:
        """``L`` of ``query`` (a text, texts, or a request): the price :meth:`price` gives."""
        return self.price(query).cost

    def read(self, query: Any, memo: Memo | None = None) -> Reading:
        """What ``query`` asks (:func:`guard.asking.read`): a text, the texts of a request, a
        request body or its messages (:func:`guard.request_walk.walk`)."""
        detector = self.detector
        p_asks = None if detector is None else detector.predict_asks
        return read(as_asked(query), p_asks, self.asking, memo, self.thresholds,
                    cost=lambda texts: self._costs(texts, memo), doubt=self._doubt)

    @property
    def _doubt(self) -> Callable[[list[str]], Any] | None:
        """The detector's doubt model (:attr:`guard.asking.Thresholds.lone`): its raw costs of
        texts, a batch; ``None`` when the detector has none."""
        model = getattr(self.detector, "doubt", None)
        return None if model is None else model.predict

    @property
    def thresholds(self) -> Thresholds:
        """The ``P(asks)`` thresholds: the operator's (:attr:`AskingConfig.thresholds`), else
        the detector's own, else :data:`guard.asking.DEFAULT_THRESHOLDS`."""
        if self.asking.thresholds is not None:
            return self.asking.thresholds
        own = getattr(self.detector, "thresholds", None)
        return Thresholds(*own) if own is not None else DEFAULT_THRESHOLDS

    def _costs(self, segments: list[str], memo: Memo | None) -> list[float]:
        """``E[L]`` of every segment (one batch call of the cost model for the new ones)."""

        def predict(texts: list[str]) -> Any:
            costs = np.asarray(self.cost_model.predict(texts), dtype=np.float64).ravel()
            if costs.shape != (len(texts),):
                raise ConfigError(f"the cost model returned {costs.size} costs for "
                                  f"{len(texts)} texts")
            bad = ~(np.isfinite(costs) & (costs > 0.0))
            if bad.any():
                raise ConfigError(f"the cost model returned {costs[bad][0]} for a query; "
                                  "costs must be > 0")
            return costs

        return scored("cost", segments, predict, memo)

    def _scaled(self, raw: float) -> float:
        """The raw cost (the costliest segment's ``E[L]``) on the policy's cost scale: the
        price's ``cost`` (the raw cost as is without a scale)."""
        return raw if self.cost_scale is None else self.cost_scale(raw)

    def _cost_one(self, query: str, features: Any) -> float:
        """``E[L]`` of one text from the cost model (before the cost scale), from its shared
        ``features`` when the model reads them."""
        model = self.cost_model
        one = getattr(model, "predict_one", None) if features is not None else None
        if one is not None:  # a model that reads the shared features (CostRegressor)
            cost = float(one(features))
        else:
            cost = float(np.asarray(model.predict([query]), dtype=np.float64).ravel()[0])
        if not (math.isfinite(cost) and cost > 0.0):
            raise ConfigError(f"the cost model returned {cost} for a query; costs must be > 0")
        return cost

    def predict_alpha(self, query: str, *, features: Any = None) -> float:
        """``P(answerable | query)`` from the answerability model; ``features`` (the query's
        :class:`cost_models.query_features.QueryFeatures`, :meth:`query_features`) lets a model
        that reads them skip featurizing the query again."""
        model = self.answerability
        if model is None:
            raise ConfigError("this Guard has no answerability model")
        one = getattr(model, "predict_alpha_one", None) if features is not None else None
        if one is not None:  # a model that reads the shared features (AnswerabilityModel)
            a = float(one(features))
        else:
            a = float(np.asarray(model.predict_alpha([query]), dtype=np.float64).ravel()[0])
        if not 0.0 <= a <= 1.0:
            raise ConfigError(f"the answerability model returned {a}; it must be in [0, 1]")
        return a if self.alpha_scale is None else self.alpha_scale(a)

    def query_features(self, query: str) -> Any:
        """The features of ``query`` the models read, computed once
        (:class:`cost_models.query_features.QueryFeatures`), or ``None`` when no model reads
        shared features (``predict_one`` / ``predict_alpha_one`` / ``predict_asks_one``: any
        other model has nothing to share)."""
        if not (hasattr(self.cost_model, "predict_one")
                or hasattr(self.answerability, "predict_alpha_one")
                or hasattr(self.detector, "predict_asks_one")):
            return None
        from cost_models.query_features import QueryFeatures

        return QueryFeatures(query)

    def probability(self, confidence: Confidence, text: str | None = None
                    ) -> tuple[float | None, PSource, str | None]:
        """``(p, p_source, signal)`` for a reply's confidence and its text as delivered (see
        the module docstring): the calibrator's ``P(correct)``
        (:meth:`ProbabilityCalibrator.p_correct <guard.ProbabilityCalibrator.p_correct>`: a
        multi-signal calibrator reads every signal the reply has and its text, a
        single-signal one its signal) when it has one."""
        cal = self.calibrator
        # a caller's p comes before a calibrator that would read the reply's text alone
        reads = cal is not None and (confidence.caller is None or any(
            confidence.get(s) is not None for s in cal.signals))
        if reads and cal is not None and (p := cal.p_correct(confidence, text)) is not None:
            return float(p), "calibrated", cal.signal
        if confidence.caller is not None:
            return confidence.caller, "caller", "caller"
        if cal is None:
            for s in self._signals:
                if (v := confidence.get(s)) is not None:
                    return float(raw_probability(s, v)), "uncalibrated", s
        if not isinstance(self.no_confidence, str):
            return self.no_confidence, "prior", None
        return None, "none", None

    def price(self, query: Any, *, cost: float | None = None,
              c_r: float | None = None, mode: str | None = None,
              alpha: float | None = None, memo: Memo | None = None) -> Price:
        """What a decision about ``query`` needs before any reply exists: ``L`` (the cost
        model's, or ``cost`` as given), ``C_R``, mode, ``alpha`` and the threshold ``p`` must
        reach; per-call arguments override the guard's settings as in :meth:`decide`.

        ``query`` is one text, the texts of a request, or a request (a body, its messages, an
        :class:`guard.request_walk.Asked`). ``L`` is the cost of what it asks
        (:mod:`guard.asking`): the maximum over the segments of its asked texts — never
        lower than the price of any question it carries, however it is dressed — raised to
        :attr:`AskingConfig.unreadable_price` when a sentence cannot be read and to
        :attr:`AskingConfig.upstream_price` when text lives upstream;
        :data:`guard.asking.NOTHING_ASKED_PRICE` when it asks for nothing. ``alpha`` is that
        of :attr:`Price.question`, the asked text that set the price (1 for a ceiling).
        ``memo`` remembers sentence and segment scores (the proxy keeps one per client key).
        A one-sentence plain text is featurized once for the detector, the cost model and
        the answerability model."""
        cfg = self.config.replaced(c_r=c_r, mode=mode, alpha=alpha)
        needs_alpha = alpha is None and self.answerability is not None
        if cost is None and isinstance(query, str):
            fast = self._price_one(query, cfg, needs_alpha, memo)
            if fast is not None:
                return fast
        if cost is None and query is None:
            raise ConfigError("decide() needs the query text (to predict its cost) or cost=")
        if memo is None:  # the reading prices doubted sentences; a kept one is priced once
            memo = Memo()
        reading = None if query is None else self.read(query, memo)
        question: str | None = None
        unjoined: list[str] = []
        priced_by: PricedBy | None = None
        cost_source: CostSource
        if cost is not None:
            try:
                cost_v, cost_source = check_cost(cost), "caller"
            except ValueError as exc:  # the one check of a cost, as the guard's error
                raise ConfigError(str(exc)) from None
            if reading is not None:
                question = next((a for a in reversed(reading.asked[:reading.read_texts]) if a),
                                None)
        else:
            assert reading is not None
            cost_v, cost_source, question, unjoined, priced_by = self._priced(reading, memo)
        if needs_alpha and question:
            # a join set the price: never a lower threshold than without it
            al = min(self.predict_alpha(q, features=self.query_features(q))
                     for q in dict.fromkeys([question, *unjoined]))
        else:
            al = 1.0 if cfg.alpha is None else cfg.alpha
        return Price(cost=cost_v, cost_source=cost_source, c_r=cfg.c_r, mode=cfg.mode,
                     alpha=al, threshold=float(answer_threshold(cost_v, cfg.c_r, alpha=al)),
                     question=question, priced_by=priced_by)

    def _priced(self, reading: Reading, memo: Memo | None
                ) -> tuple[float, CostSource, str | None, list[str], PricedBy | None]:
        """``(L, cost source, question, unjoined, priced by)`` of a reading (see
        :meth:`price`; where the question sits: :meth:`guard.asking.Reading.priced_by`). When a
        text joined with what came before (:attr:`Reading.read_texts`) sets the price,
        ``unjoined`` holds the asked texts that would set it without the joins of
        ``guard.asking._with_before`` and without any join: the threshold takes the lowest
        answerability of them all,
        so that a join, which only ever raises ``L``, never lowers the threshold (a join padded
        with answerable filler would otherwise look more answerable than what it joins: fifth
        red-team round, 2026-12-03)."""
        cost_v = NOTHING_ASKED_PRICE
        source: CostSource = "nothing_asked"
        question = None
        unjoined: list[str] = []
        priced_by: PricedBy | None = None
        if reading.segments:
            costs = self._costs(reading.segments, memo)
            k = int(np.argmax(costs))
            cost_v, source, question = self._scaled(costs[k]), "model", reading.owner_text(k)
            priced_by = reading.priced_by(k)
            for upto in (reading.paired, reading.read_texts):
                if reading.owners[k] >= upto:
                    rest = [j for j, o in enumerate(reading.owners) if o < upto]
                    if rest:
                        unjoined.append(reading.owner_text(max(rest, key=lambda j: costs[j])))
        for ceiling, name, hit in (
                (self.asking.unreadable_price, "unreadable",
                 reading.unreadable or reading.opaque),
                (self.asking.upstream_price, "upstream", reading.upstream)):
            if hit and ceiling > cost_v:
                cost_v, source, question = float(ceiling), name, None  # type: ignore[assignment]
                unjoined, priced_by = [], None
        return cost_v, source, question, unjoined, priced_by

    def _price_one(self, text: str, cfg: DecisionConfig, needs_alpha: bool,
                   memo: Memo | None) -> Price | None:
        """The price of one plain readable sentence that is its only segment (no window),
        featurized once for the detector, the cost model and the answerability model; ``None``
        for anything else (the general path prices it the same way: a test checks both)."""
        if len(text) > self.asking.max_text_chars or not text.isascii() \
                or normalized(text) != text or text != text.strip() \
                or request_segments([text]) != [text] or unreadable(text) or self.asking.trusted \
                or self.asking.trusted_sentences:
            return None
        from guard.reading import decoded

        if decoded(text) or is_pleasantry(text):
            return None
        detector = self.detector
        features = self.query_features(text)
        if detector is not None:
            p_asks = memo.get("asks", text) if memo is not None else None
            if p_asks is None:
                one = getattr(detector, "predict_asks_one", None)
                p_asks = float(one(features)) if one is not None and features is not None \
                    else float(np.asarray(detector.predict_asks([text])).ravel()[0])
                if memo is not None:
                    memo.put("asks", text, p_asks)
            tau = self.thresholds
            if p_asks < tau.sentence or (
                    p_asks < tau.lone and not asks_in_form(text)
                    and self._doubted_cheap(text, memo, tau)):
                al = 1.0 if cfg.alpha is None else cfg.alpha
                return Price(cost=NOTHING_ASKED_PRICE, cost_source="nothing_asked",
                             c_r=cfg.c_r, mode=cfg.mode, alpha=al,
                             threshold=float(answer_threshold(NOTHING_ASKED_PRICE, cfg.c_r,
                                                              alpha=al)))
        raw = memo.get("cost", text) if memo is not None else None
        if raw is None:
            raw = self._cost_one(text, features)
            if memo is not None:
                memo.put("cost", text, raw)
        cost_v = self._scaled(raw)
        al = self.predict_alpha(text, features=features) if needs_alpha else \
            1.0 if cfg.alpha is None else cfg.alpha
        return Price(cost=cost_v, cost_source="model", c_r=cfg.c_r, mode=cfg.mode, alpha=al,
                     threshold=float(answer_threshold(cost_v, cfg.c_r, alpha=al)),
                     question=text, priced_by="user")

    def _doubted_cheap(self, text: str, memo: Memo | None, tau: Thresholds) -> bool:
        """Whether the doubt model prices ``text`` (one doubted sentence) below
        :attr:`guard.asking.Thresholds.lone_price` (as :func:`guard.asking.read` does)."""
        doubt = self._doubt
        if doubt is None:
            return False
        return scored("doubt", [text], doubt, memo)[0] < tau.lone_price

    def decide(
        self,
        query: Query | None,
        response: str | None,
        *,
        confidence: Any = None,
        cost: float | None = None,
        c_r: float | None = None,
        mode: str | None = None,
        alpha: float | None = None,
        request_id: str | None = None,
        acts: bool = False,
        price: Price | None = None,
    ) -> DecisionRecord:
        """Decide about one reply; per-call arguments override the guard's settings.

        ``acts=True`` says the reply calls a tool (``response`` then holds the calls as text,
        see :func:`guard.completion.choice_answer`): a tool call is an answer, never the
        model's own refusal, whatever its text says.

        ``confidence`` is a :class:`Confidence`, a mapping of signals, or a number (a
        caller-supplied probability). ``cost`` given means ``cost_source = "caller"`` and the
        cost model is not called. ``price`` is :meth:`price` computed beforehand for the same
        arguments (the proxy prices a query before the upstream answers); the returned record
        is also stored for :func:`last_decision`.
        """
        t0 = time.perf_counter()
        cfg = self.config.replaced(c_r=c_r, mode=mode, alpha=alpha)
        if price is None:
            price = self.price(query, cost=cost, c_r=c_r, mode=mode, alpha=alpha)
        cost_v, cost_source, cr, md, al = (price.cost, price.cost_source, price.c_r,
                                           price.mode, price.alpha)
        threshold = price.threshold
        decision: Decision
        conf = Confidence.coerce(confidence)
        if conf.verbal is not None and query is not None and self.dictated(query, self.asking):
            conf = conf.model_copy(update={"verbal": None})  # the client's words, not the model's
        # the reply as delivered (its confidence line removed), as the calibrator was fitted
        p, p_source, signal = self.probability(
            conf, None if response is None else self.clean(response))
        eu_answer = None if p is None else float(expected_utility(p, cost_v))
        if p is not None:
            # exactly policies.should_answer: p >= answer_threshold(L, C_R, alpha), with the
            # threshold computed once above
            decision = "answer" if p >= threshold else "refuse"
        else:
            decision = "answer" if cfg.no_confidence == "answer" or price.answers_any_p \
                else "refuse"
        # the model's own refusal passes through only where the guard would have answered: a
        # reply that merely opens like a refusal never overrides a refuse decision
        if decision == "answer" and not acts and (response is None
                                                  or is_refusal(self.clean(response))):
            decision = "passthrough_refusal"
        record = DecisionRecord(
            request_id=request_id or uuid.uuid4().hex,
            cost=cost_v, cost_source=cost_source, p=p, p_source=p_source,
            threshold=threshold, c_r=cr, expected_utility_answer=eu_answer,
            expected_utility_refuse=float(refusal_expected_utility(cr, alpha=al)),
            decision=decision, mode=md, alpha=al, signal=signal,
            signal_value=conf.get(signal) if signal else None, policy=self.policy,
            priced_by=price.priced_by, latency_ms=(time.perf_counter() - t0) * 1000.0,
        )
        log.debug("decision %s: L=%.3g p=%s threshold=%.3g -> %s (%s)", record.request_id,
                  cost_v, p, threshold, decision, md)
        remember_decision(record)
        return record

    @staticmethod
    def dictated(query: Any, asking: AskingConfig | None = None) -> bool:
        """The client's part of the request says what confidence the reply should state
        (:func:`guard.confidence.verbal.dictates_confidence`): its stated confidence is then
        not read. The operator's own texts (``asking``'s trusted prompts, sentences and tool
        definitions: :func:`guard.asking.client_strings`) are not the client's words."""
        from guard.asking import as_asked, client_strings
        from guard.confidence.verbal import dictates_confidence

        asked = as_asked(query)
        return dictates_confidence(client_strings(asked, asking) if asking is not None
                                   else asked.strings())

    def clean(self, text: str) -> str:
        """``text`` as delivered: each extractor's ``clean`` applied (the verbal extractor
        removes the confidence line it asked for)."""
        for ex in self.extractors:
            text = ex.clean(text)
        return text

    def deliver(self, response: str, record: DecisionRecord) -> str:
        """The text the caller receives: the refusal text when the decision is ``"refuse"``
        in enforce mode, otherwise the cleaned reply."""
        return self.refusal_text if record.substitutes_refusal else self.clean(response)

    def refusal_for(self, record: DecisionRecord, content: str | None) -> str | None:
        """The text of the refusal a reply is replaced with, or ``None`` when the reply is
        delivered as it is (an answer, or shadow mode).

        A substituted refusal says :attr:`refusal_text`; the model's own refusal
        (``passthrough_refusal``) keeps its cleaned wording (the refusal text when it had
        none). Either way the caller gets a reply built by
        :func:`guard.refusal_substitution.refused_completion`: nothing else of the model's reply
        (tool calls, reasoning, audio, logprobs, other choices) is delivered.
        """
        if record.mode != "enforce" or not record.delivered_refusal:
            return None
        if record.substitutes_refusal or content is None or not content.strip():
            return self.refusal_text
        return self.clean(content)

    def refused_choices(self, query: Query | None, reply: Any, record: DecisionRecord, *,
                        view: Any = None, confidence: Any = None,
                        limit: int | None = None) -> dict[int, str]:
        """The choices after the first (``n > 1``) that may not be delivered with choice 0, by
        position, each with the text of the refusal that replaces it
        (:func:`guard.delivery.refused_choices`)."""
        return refused_choices(self, query, reply, record, view=view, confidence=confidence,
                               limit=limit)

    def extract(self, reply: Any) -> Confidence:
        """The confidence signals the guard's extractors find in a reply (text or completion)."""
        return extract_confidence(self.extractors, reply)

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """A new Chat Completions request body asking for the extractors' signals."""
        return apply_overrides(self.extractors, body)

    def apply(self, query: Query | None, reply: R, *, confidence: Any = None,
              **overrides: Any) -> tuple[R, DecisionRecord]:
        """Decide about ``reply`` (a str or a chat completion) and return what to deliver,
        of the same type, with the decision record. The input is never modified.

        A completion is decided and delivered as the proxy does it (:mod:`guard.delivery`):
        a refusal is built by :func:`guard.refusal_substitution.refused_completion` (an
        allow-list: the refusal text in every choice, ``n > 1`` samples included, and nothing
        else of the reply); when choice 0 answers, each further choice is judged by itself
        and one the guard refuses is replaced by an allow-listed refused choice, and every
        choice is cleaned (the confidence line the guard asked for removed). A tool call is
        an answer: its name and arguments are what is decided on.

        Confidence is read from the reply by the extractors; ``confidence`` (caller-supplied)
        overrides the signals it names.
        """
        if isinstance(reply, str):
            conf = self.extract(reply).merged(Confidence.coerce(confidence))
            record = self.decide(query, reply, confidence=conf, **overrides)
            out: Any = self.deliver(reply, record)
            return out, record
        if not is_completion(reply):
            raise ConfigError(
                f"a guarded reply must be a str or a chat completion; got {type(reply).__name__}"
            )
        data = plain_mapping(reply)
        record = decide_completion(self, query, data, confidence=confidence, **overrides)
        delivered = delivered_completion(self, query, data, record, confidence=confidence)
        if delivered.completion == data:
            return reply, record
        return as_given(reply, delivered.completion), record
