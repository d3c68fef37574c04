"""What a decision about a query needs before any reply: :class:`Price`, the value
:meth:`guard.Guard.price` returns.

``L`` (the cost of a wrong answer to what the request asks), ``C_R``, the mode, ``alpha`` and
the threshold ``p`` must reach: everything of the rule but ``p``. The proxy prices a request
while the upstream answers it, and an early stream tells the client this much before the
reply (:func:`guard.proxy.decide.priced_headers`).

>>> price = Price(cost=1.5, cost_source="model", c_r=2.0, mode="enforce", alpha=1.0,
...               threshold=-0.2)
>>> price.answers_any_p
True
"""

from __future__ import annotations

from dataclasses import dataclass

from guard.decision_records import CostSource, Mode, PricedBy


@dataclass(frozen=True)
class Price:
    """What a decision about a query needs before any reply (:meth:`guard.Guard.price`)."""

    cost: float
    cost_source: CostSource
    c_r: float
    mode: Mode
    alpha: float
    #: the smallest ``p`` that answers (:func:`policies.answer_threshold`)
    threshold: float
    #: what the request asks that set the price: the asked text holding the costliest
    #: segment (:mod:`guard.asking`); ``None`` for a caller cost, a ceiling or nothing asked
    question: str | None = None
    #: where :attr:`question` sits in the request (:data:`guard.decision_records.PricedBy`);
    #: ``None`` when no text set the price
    priced_by: PricedBy | None = None

    @property
    def answers_any_p(self) -> bool:
        """Every ``p`` answers (threshold <= 0: a wrong answer costs no more than a refusal),
        so the decision cannot depend on the reply's confidence."""
        return self.threshold <= 0.0
