"""The request detector's doubt model and the thresholds of the rule that reads it
(:attr:`guard.asking.Thresholds.lone`), fitted and chosen on the training split alone.

The doubt model is a cost model (:class:`cost_models.regressor.CostRegressor`, the shipped
cost model's kind and ridge) trained on the seed questions at their costs, the training
split's paraphrases, and every sentence of the training split's chat lines that ask for
nothing (users' social lines and earlier turns, assistant lines; not system prompts, whose
personas and rules dress costly requests) at the seed set's 5th-percentile cost with a sample
weight (:class:`cost_models.regressor.Floor`). It
prices a doubted text of one sentence: the shipped cost model, trained on questions alone,
prices "my wifi keeps cutting out" as a support question; a model that has seen such lines
prices it at the floor.

The choice (:func:`choose_doubt`), all out of fold on the training split: ``P(asks)`` from
detectors that did not see a text's group (:func:`benchmarks.asking.out_of_fold`), and doubt
models that did not see its fold (five folds: corpus units and seed sources by a hash of their
name). For every weight, ``lone`` and ``lone_price`` of :data:`GRID`, the share of the training
non-request texts priced below the seed set's 25th percentile; a point is a choice only when
every group of costly training requests (:func:`benchmarks.asking.costly_training_requests`)
keeps 90% of its price in at least ``min(KEEP_COSTLY, as without the rule)`` of its requests,
and the strict reading keeps half of it as often as without the rule. The best is taken.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.asking import (
    IN_A_SYSTEM_PROMPT,
    KEEP_COSTLY,
    STRICT_SHARE,
    _sentences,
    costly_training_requests,
    non_request,
    reference_prices,
    row_request,
    row_texts,
    seed_percentile,
    strictly,
)

#: The labels of the texts that ask for nothing whose sentences the doubt model sees at the
#: floor: chat lines (a persona or rule seen at the floor taught it that "You are a mechanic
#: who tells customers the minimum brake pad thickness." is cheap).
FLOOR_LABELS = ("social", "assistant")
#: The floor's cost: this percentile of the seed set's costs.
FLOOR_PERCENTILE = 5.0
#: The grid searched: sample weights of the floor's rows, ``lone`` and ``lone_price``.
WEIGHTS = (0.3, 1.0)
LONE = (0.3, 0.5, 0.8)
LONE_PRICES = (1.0, 2.0, 4.0)
#: The folds of the out-of-fold choice.
FOLDS = 5
#: The shipped cost model's kind and ridge penalty (its card).
KIND, RIDGE = "affix-embed-ridge", 1.0


def fold_of(name: str) -> int:
    """The fold of a corpus unit or a seed source (a stable hash of its name)."""
    return zlib.crc32(name.encode("utf-8")) % FOLDS


def floor_sentences(corpus: Sequence[Mapping[str, Any]],
                    keep: Callable[[str], bool] = lambda _unit: True) -> list[str]:
    """Every sentence of the training split's texts that ask for nothing (of the units
    ``keep`` takes), once."""
    return list(dict.fromkeys(
        s for r in corpus if r["split"] == "train" and r["label"] in FLOOR_LABELS
        and keep(str(r["unit"])) for t in row_texts(r) for s in _sentences(t)))


def fit_doubt(corpus: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]],
              paraphrases: Sequence[Mapping[str, Any]], weight: float,
              fold: int | None = None) -> Any:
    """The doubt model (module docstring); ``fold``: without that fold's seed sources,
    paraphrases of them and corpus units (the out-of-fold choice)."""
    from cost_models.regressor import CostRegressor, Floor, Paraphrases

    def kept(name: str) -> bool:
        return fold is None or fold_of(name) != fold

    train = [it for it in items if kept(str(it.get("source", it["id"])))]
    index = {str(it["id"]): k for k, it in enumerate(train)}
    para = [(str(p["text"]), index[str(p["of"])]) for p in paraphrases
            if str(p["of"]) in index]
    floor = Floor(floor_sentences(corpus, kept),
                  float(np.percentile([float(it["cost"]) for it in items], FLOOR_PERCENTILE)),
                  weight)
    return CostRegressor(kind=KIND, ridge=RIDGE).fit(
        [str(it["question"]) for it in train], [float(it["cost"]) for it in train],
        groups=[str(it.get("source", it["id"])) for it in train],
        paraphrases=Paraphrases([t for t, _ in para], [k for _, k in para]), floor=floor)


@dataclass(frozen=True)
class DoubtChoice:
    """The weight and thresholds chosen, and the grid as measured (out of fold)."""

    weight: float
    lone: float
    lone_price: float
    non_request_below: float
    kept: dict[str, float]
    without: dict[str, float]
    grid: list[dict[str, float]] = field(default_factory=list)


def choose_doubt(corpus: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]],
                 paraphrases: Sequence[Mapping[str, Any]], p: Mapping[str, float],
                 thresholds: Any, *, weights: Sequence[float] = WEIGHTS,
                 progress: Callable[[str], None] = lambda _m: None) -> DoubtChoice:
    """The weight and the ``(lone, lone_price)`` of the grid (module docstring); ``p``: the
    out-of-fold ``P(asks)`` of the training texts; ``thresholds``: the detector's own."""
    from dataclasses import replace

    from guard import Guard
    from guard.asking import AskingConfig, Memo, as_asked, read

    guard = Guard(detector=None, policy=None)
    floor = seed_percentile(items, 25.0)
    item_fold = {str(it["id"]): fold_of(str(it.get("source", it["id"]))) for it in items}
    source = {str(it["question"]): item_fold[str(it["id"])] for it in items}
    # a written request's fold: that of the seed question it rephrases, else its unit's
    text_fold = {str(r["text"]): item_fold.get(str(r.get("pair")), fold_of(str(r["unit"])))
                 for r in corpus if r["split"] == "train" and r.get("form")}

    def fold_req(q: Any) -> int:
        if isinstance(q, str):
            return source.get(q, fold_of(q))
        text = str(q["messages"][0]["content"])
        if text in text_fold:
            return text_fold[text]
        return next((k for question, k in source.items() if text.endswith(question)),
                    fold_of(text))

    nr_reqs = [(row_request(r), fold_of(str(r["unit"]))) for r in non_request(corpus, "train")]
    groups = costly_training_requests(corpus, items)
    folds = {g: [fold_req(q) for q, _ in v] for g, v in groups.items()}
    full = {g: reference_prices(guard, v, p, Memo(size=2_000_000)) for g, v in groups.items()}
    worst = {**p, **strictly(groups[IN_A_SYSTEM_PROMPT])}
    cost_memo = Memo(size=4_000_000)

    def priced(q: Any, th: Any, doubt: Any, pmap: Mapping[str, float]) -> float:
        memo = _no_doubt_memo(cost_memo)
        reading = read(as_asked(q), lambda xs: [pmap.get(x, 1.0) for x in xs],
                       AskingConfig(thresholds=th), memo,
                       cost=lambda xs: guard._costs(xs, cost_memo), doubt=doubt)
        return float(guard._priced(reading, cost_memo)[0])

    def measure(th: Any, doubts: Sequence[Any]) -> dict[str, float]:
        def d(k: int) -> Any:
            return doubts[k] if doubts else None

        out = {"non_request_below": float(np.mean(
            [priced(q, th, d(k), p) < floor for q, k in nr_reqs]))}
        for g, v in groups.items():
            got = np.array([priced(q, th, d(k), p) for (q, _), k in zip(v, folds[g],
                                                                        strict=True)])
            out[g] = float(np.mean(got / full[g] >= 0.9))
        v = groups[IN_A_SYSTEM_PROMPT]
        got = np.array([priced(q, th, d(k), worst) for (q, _), k in zip(
            v, folds[IN_A_SYSTEM_PROMPT], strict=True)])
        out[f"{IN_A_SYSTEM_PROMPT}, read strictly"] = float(
            np.mean(got / full[IN_A_SYSTEM_PROMPT] >= STRICT_SHARE))
        return out

    progress("without the rule")
    without = measure(replace(thresholds, lone=0.0), [])
    need = {g: min(KEEP_COSTLY, v) for g, v in without.items() if g != "non_request_below"}
    need[IN_A_SYSTEM_PROMPT] = 0.0  # measured, not constrained (as in choose_thresholds)
    best: DoubtChoice | None = None
    grid: list[dict[str, float]] = []
    for w in weights:
        progress(f"doubt models, weight {w}")
        doubts = [_cached(fit_doubt(corpus, items, paraphrases, w, fold=k).predict)
                  for k in range(FOLDS)]
        for lone in LONE:
            for price in LONE_PRICES:
                progress(f"weight {w}, lone {lone}, price {price}")
                got = measure(replace(thresholds, lone=lone, lone_price=price), doubts)
                ok = all(got[g] >= v for g, v in need.items())
                grid.append({"weight": w, "lone": lone, "lone_price": price, **got,
                             "choice": float(ok)})
                if ok and (best is None or got["non_request_below"] > best.non_request_below):
                    best = DoubtChoice(w, lone, price, got["non_request_below"],
                                       {g: got[g] for g in need}, without)
    if best is None:
        return DoubtChoice(0.0, 0.0, float("inf"), without["non_request_below"],
                           {g: without[g] for g in need}, without, grid)
    return replace(best, grid=grid)


def _cached(predict: Callable[[list[str]], Any]) -> Callable[[list[str]], list[float]]:
    """``predict`` remembering each text's value (one fold's doubt model)."""
    seen: dict[str, float] = {}

    def score(texts: list[str]) -> list[float]:
        todo = [t for t in dict.fromkeys(texts) if t not in seen]
        if todo:
            seen.update(zip(todo, (float(x) for x in predict(todo)), strict=True))
        return [seen[t] for t in texts]

    return score


def _no_doubt_memo(inner: Any) -> Any:
    """A memo that remembers ``P(asks)`` and costs in ``inner`` but never a doubt score (each
    fold has its own doubt model: :func:`_cached` remembers those)."""
    from guard.asking import Memo

    class NoDoubt(Memo):
        def get(self, kind: str, text: str) -> Any:
            return None if kind == "doubt" else inner.get(kind, text)

        def put(self, kind: str, text: str, value: Any) -> None:
            if kind != "doubt":
                inner.put(kind, text, value)

    return NoDoubt(size=1)


def doubt_card(choice: DoubtChoice, meta: Mapping[str, Any]) -> str:
    """The doubt model's card (``DOUBT.md`` next to the detector)."""
    rows = "\n".join(
        f"| {g['weight']} | {g['lone']} | {g['lone_price']} | {g['non_request_below']:.3f} | "
        + " | ".join(f"{v:.4f}" for k, v in g.items() if k not in (
            "weight", "lone", "lone_price", "non_request_below", "choice"))
        + f" | {'yes' if g['choice'] else 'no'} |" for g in choice.grid)
    names = [k for k in choice.without if k != "non_request_below"]
    return f"""# The request detector's doubt model — card

A cost model that has seen chat lines that ask for nothing: it prices a user's message of one
sentence (48 words at most) that the detector doubts (`P(asks)` at or above the sentence
threshold, below `lone`) and that does not ask by its form (`guard.asking.asks_in_form`: no
`?`, no order to the model). Below `lone_price` the message asks for nothing
(`guard.asking.Thresholds.lone`; docs/concepts.md "What is priced"; held-out figures in
docs/results.md "A user's statement read by a second model").

- **Kind:** `{KIND}` (ridge {RIDGE}), `doubt_model.npz` + `doubt_model.json` (data, no code).
- **Training data:** the {meta['items']} seed questions at their costs, the training split's
  {meta['paraphrases']} paraphrases, and the {meta['floor_rows']} sentences of the request
  corpus's training split that ask for nothing (labels {', '.join(FLOOR_LABELS)}) at the seed
  set's {FLOOR_PERCENTILE:g}th-percentile cost ({meta['floor_cost']:.3f}), sample weight
  **{choice.weight}**. Out-of-fold residual variance of `log L` on the seed questions:
  {meta['residual_var']:.3f} (the shipped cost model's card: 0.848) — it prices questions worse,
  which is why it only reads doubted single sentences.
- **Chosen on the training split alone** (benchmarks/asking_doubt.py, out of fold: five folds
  of units and seed sources; `P(asks)` from detectors that did not see a text's group):
  weight {choice.weight}, `lone` **{choice.lone}**, `lone_price` **{choice.lone_price}**;
  training non-request texts below the seed set's 25th percentile
  {choice.without['non_request_below']:.3f} without the rule, **{choice.non_request_below:.3f}**
  with it. A point is a choice only when every group of costly training requests keeps 90% of
  its price as often as without the rule (capped at {KEEP_COSTLY:.0%}; the group written into a
  system prompt is measured, not constrained), and the strict reading keeps half of it as often.
- **Command:** `{meta['command']}`
- **Versions:** {meta['versions']}. License: MIT (the corpus card's sources).

| weight | lone | lone_price | non-request below | {' | '.join(names)} | a choice |
| --- | --- | --- | --- | {' | '.join('---' for _ in names)} | --- |
{rows}

Without the rule: {', '.join(f'{k} {v:.4f}' for k, v in choice.without.items())}.
"""
