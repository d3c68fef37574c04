"""Train and measure the request detector on the corpus of ``cost_models/data/asking``.

``utilityguard asking train`` fits the :class:`~cost_models.request_detector.RequestDetector`
on the corpus's training split (the published prompts, the writers' training files) and the seed
questions, every text cut into sentences exactly as the runtime cuts them
(:func:`sentence_units`: normalized, :func:`guard.segments.sentences`, tool definitions read by
the request walk, unreadable sentences left out as the runtime never scores them). The
thresholds on ``P(asks)`` are chosen on out-of-fold predictions of the training split alone
(grouped by unit): the values that keep :data:`KEEP_COSTLY` of the costly asking requests
(:func:`choose_thresholds`), then the largest threshold for earlier turns that keeps the costly
questions sent there (:func:`choose_history`). ``utilityguard asking eval`` measures the
shipped guard on the held-out split (:func:`evaluate`): never fitted or tuned on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cost_models.request_detector import ASKING_LABELS, RequestDetector
from guard.reading import normalized, unreadable
from guard.request_walk import walk
from guard.segments import sentences

#: The corpus (``cost_models/data/asking/corpus.jsonl``).
CORPUS = Path(__file__).resolve().parents[1] / "cost_models" / "data" / "asking" / "corpus.jsonl"
#: The training split's requests phrased as instructions or dressed, each with the seed
#: question it rephrases (the shipped cost model's paraphrases).
PARAPHRASES = CORPUS.with_name("paraphrases.jsonl")
#: The threshold keeps at least this share of the costly asking sentences out of fold.
KEEP_COSTLY = 0.99
#: A seed item is costly when its cost is at least this percentile of the seed set's.
COSTLY_PERCENTILE = 75.0


@dataclass(frozen=True)
class Unit:
    """One text to classify: its text, whether it asks, the unit it came from, whether it
    carries a costly request, and its training weight (a seed sentence weighs more the
    costlier its question: missing a costly request is the error that matters)."""

    text: str
    asks: bool
    group: str
    costly: bool = False
    weight: float = 1.0


def read_corpus(path: Path = CORPUS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def row_texts(row: Mapping[str, Any]) -> list[str]:
    """The texts of a corpus row as the runtime reads them: a tool definition walked and its
    texts joined, as :func:`guard.asking.read` joins one tool's texts."""
    if row["label"] == "tool":
        return ["\n".join(walk(row["tool"], role="tools").strings())]
    return [row["text"]]


#: The role a corpus row's text is sent in (:func:`row_request`).
ROLES = {"social": "user", "assistant": "assistant", "system": "system", "rule": "system",
         "persona": "system", "request": "user", "context": "user"}


def row_request(row: Mapping[str, Any]) -> Any:
    """A corpus row as the request the runtime reads: a tool definition in ``tools``, a text in
    a message of its role (a system prompt, a rule and a dressed request as the system's, a
    social line as the user's, an assistant line as the assistant's)."""
    if row["label"] == "tool":
        return {"tools": [row["tool"]]}
    role = "system" if str(row.get("form", "")).startswith("dressed") else ROLES[row["label"]]
    return {"messages": [{"role": role, "content": row["text"]}]}


def _sentences(text: str) -> list[str]:
    return [s for s in sentences(normalized(text)) if not unreadable(s)]


def sentence_units(rows: Iterable[Mapping[str, Any]]) -> list[Unit]:
    """Units of corpus rows, labelled: a labelled sentence (the published prompts) as it is; a
    written non-request text cut into sentences, each asking nothing, and whole when it has
    several (the text-level threshold reads it whole); a written request whole (its persona
    or rule part alone would be mislabelled)."""
    out: list[Unit] = []
    for r in rows:
        asks = r["label"] in ASKING_LABELS
        costly = str(r.get("form", "")).startswith("dressed")
        for t in row_texts(r):
            if r["source"] != "written" or asks:
                out.append(Unit(normalized(t), asks, r["unit"], costly))
                continue
            ss = _sentences(t)
            out.extend(Unit(s, False, r["unit"]) for s in ss)
            if len(ss) > 1:
                out.append(Unit(normalized(t), False, r["unit"]))
    return out


#: A sentence of a several-sentence seed question trains the detector only with at least
#: this many words: the short ones are mostly greetings, sign-offs, names, headings and
#: option letters ("Hi Norma,", "Thanks,", "A) Kale"), which would teach it that a greeting asks.
SEED_MIN_WORDS = 1


def seed_units(items: Iterable[Mapping[str, Any]], costly_from: float) -> list[Unit]:
    """Every seed question whole, and each sentence of :data:`SEED_MIN_WORDS` words or more of
    one with several, each as asking (the questions ask)."""
    out: list[Unit] = []
    for it in items:
        costly = float(it["cost"]) >= costly_from
        w = cost_weight(float(it["cost"]))
        ss = _sentences(str(it["question"]))
        out.append(Unit(normalized(str(it["question"])), True, f"seed:{it['id']}", costly, w))
        if len(ss) > 1:
            out.extend(Unit(s, True, f"seed:{it['id']}", costly, w) for s in ss
                       if len(s.split()) >= SEED_MIN_WORDS)
    return out


#: How much a seed sentence's weight grows with its question's cost (:func:`cost_weight`).
COST_WEIGHT = 0.5


def cost_weight(cost: float) -> float:
    """The training weight of a seed sentence: ``max(1, cost / 2) ** COST_WEIGHT`` (the seed
    set's median cost is 2).

    >>> cost_weight(0.5), round(cost_weight(32.0), 2)
    (1.0, 4.0)
    """
    return float(max(1.0, cost / 2.0) ** COST_WEIGHT)


def training_units(corpus: Sequence[Mapping[str, Any]],
                   items: Sequence[Mapping[str, Any]]) -> list[Unit]:
    costs = np.array([float(it["cost"]) for it in items])
    cut = float(np.percentile(costs, COSTLY_PERCENTILE))
    train = [r for r in corpus if r["split"] == "train"]
    return sentence_units(train) + seed_units(items, cut)


def out_of_fold(units: Sequence[Unit], C: float, folds: int = 5,
                seed: int = 0) -> tuple[np.ndarray[Any, np.dtype[np.float64]], dict[str, float]]:
    """``P(asks)`` of every unit from a detector that did not see its group, and of every
    window of a unit's very long sentences (:func:`guard.asking.detection_windows`, which the
    runtime also asks about: :func:`guard.asking.read`) from the same detector."""
    from sklearn.model_selection import GroupKFold

    from guard.asking import detection_windows

    X = [u.text for u in units]
    y = np.array([u.asks for u in units])
    w = np.array([u.weight for u in units])
    groups = [u.group for u in units]
    p = np.zeros(len(units))
    win: dict[str, float] = {}
    for tr, te in GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(
            X, y, groups):
        model = RequestDetector(C=C).fit([X[i] for i in tr], y[tr], sample_weight=w[tr])
        p[te] = model.predict_asks([X[i] for i in te])
        ws = list(dict.fromkeys(x for i in te for s in _sentences(X[i])
                                for x in detection_windows(s)))
        if ws:
            win.update(zip(ws, (float(v) for v in model.predict_asks(ws)), strict=True))
    return p, win


def oof_lookup(units: Sequence[Unit], p: Any, window_p: Mapping[str, float]
               ) -> dict[str, float]:
    """``P(asks)`` by text from :func:`out_of_fold`'s values (a unit's first, then a window's)."""
    lookup: dict[str, float] = {}
    for u, v in zip(units, p, strict=True):
        lookup.setdefault(u.text, float(v))
    for text, v in window_p.items():
        lookup.setdefault(text, v)
    return lookup


def prices(guard: Any, requests: Sequence[Any], p: Mapping[str, float], thresholds: Any,
           memo: Any = None) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The price of each request read with ``thresholds``, ``P(asks)`` taken from ``p``
    (out-of-fold values; a text missing from it asks): the runtime's own reading
    (:func:`guard.asking.read`) and cost model."""
    from guard.asking import AskingConfig, as_asked, read

    config = AskingConfig(thresholds=thresholds)

    def lookup(xs: list[str]) -> list[float]:
        return [p.get(x, 1.0) for x in xs]

    return np.asarray([guard._priced(read(as_asked(q), lookup, config, memo,
                                          cost=lambda xs: guard._costs(xs, memo)), memo)[0]
                       for q in requests], dtype=np.float64)


@dataclass(frozen=True)
class Choice:
    """The thresholds chosen, and what they did on the training split (out of fold)."""

    thresholds: tuple[float, float, float]
    non_request_below: float
    kept: dict[str, float]
    #: :attr:`guard.asking.Thresholds.strict_price` (``inf``: off)
    strict_price: float = float("inf")


#: The grid of ``(sentence, text, strict)`` thresholds searched.
GRID = tuple((a, b, c) for a in (0.05, 0.1, 0.15, 0.2, 0.3) for b in (0.0, 0.1, 0.3, 0.5)
             for c in (0.5, 0.7, 0.8, 0.9, 0.95) if b > 0 or c == 0.5)
#: The :attr:`guard.asking.Thresholds.strict_price` values tried for each grid point, the
#: largest first (the fewest doubted sentences kept): the first under which the strict reading
#: keeps its costly questions (:data:`STRICT_SHARE`) is taken.
STRICT_PRICES = (float("inf"), 12.0, 8.0, 5.0, 3.0, 2.0, 1.0)
#: The group of costly training requests written into a system prompt
#: (:func:`costly_training_requests`): measured, not constrained, at 90% of the price; the one
#: read strictly (:func:`choose_thresholds`).
IN_A_SYSTEM_PROMPT = "in a system prompt"
#: Read strictly (:func:`strictly`), a costly question must keep at least this share of the
#: price its oracle gives it, in :data:`KEEP_COSTLY` of the requests: the sentences around it
#: may take the whole-text segment of a question of several sentences (the reported group's
#: 90%), never the question itself.
STRICT_SHARE = 0.5


def reference_prices(guard: Any, pairs: Sequence[tuple[Any, dict[str, float] | None]],
                     p: Mapping[str, float], memo: Any = None
                     ) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The price each request keeps: with nothing left out, or as the pair's oracle reads it
    (its ``P(asks)`` values over ``p``'s, thresholds 0.5)."""
    from guard.asking import Memo, Thresholds

    out = []
    for q, oracle in pairs:
        if oracle is None:
            out.append(prices(guard, [q], p, Thresholds(0.0, 0.0, 0.0), memo)[0])
        else:  # a fresh memo: the oracle's values are its own
            out.append(prices(guard, [q], {**p, **oracle}, Thresholds(0.5, 0.0, 0.5),
                              Memo())[0])
    return np.asarray(out, dtype=np.float64)


def strictly(requests: Sequence[tuple[Any, dict[str, float] | None]]) -> dict[str, float]:
    """``P(asks) = 0`` for the whole system text of each request: read as a text that as a
    whole asks for nothing, so that only its sentences at or above the strict threshold (or
    priced at :attr:`guard.asking.Thresholds.strict_price`) are kept. A client chooses how a
    system text reads as a whole (a long persona dilutes the question in it): the thresholds
    are chosen for that worst case."""
    return {normalized(m["content"]): 0.0 for q, _ in requests for m in q["messages"]
            if m["role"] == "system"}


def choose_thresholds(guard: Any, p: Mapping[str, float],
                      asking: Mapping[str, Sequence[tuple[Any, dict[str, float] | None]]],
                      non_request: Sequence[Any], floor: float, *, keep: float = KEEP_COSTLY,
                      share: float = 0.9, reported: Sequence[str] = (IN_A_SYSTEM_PROMPT,),
                      strict: str = IN_A_SYSTEM_PROMPT) -> Choice:
    """The thresholds that leave the most ``non_request`` requests priced below ``floor`` while
    every group of ``asking`` requests (costly ones of the training split) keeps, in at least
    ``keep`` of them, ``share`` of its reference price (:func:`reference_prices`); the groups
    named in ``reported`` are measured, not constrained (a question of several sentences
    surrounded by other kept text loses its whole-text segment whatever the thresholds).
    The group ``strict`` is also read strictly (:func:`strictly`: its system texts as asking
    nothing as a whole) and must then keep :data:`STRICT_SHARE` of its reference price in
    ``keep`` of its requests; for each grid point the largest
    :data:`STRICT_PRICES` value under which it does is taken, and a point under which none
    does is not a choice."""
    from guard.asking import Memo, Thresholds

    memo = Memo(size=2_000_000)
    full = {k: reference_prices(guard, v, p, memo) for k, v in asking.items()}
    worst = {**p, **strictly(asking[strict])} if strict in asking else None
    strict_memo = Memo(size=2_000_000)  # the strict reading's own P(asks) values
    best: Choice | None = None
    for grid in GRID:
        price = float("inf")
        read_strictly = None
        if worst is not None:
            for price in STRICT_PRICES if grid[1] > 0 else STRICT_PRICES[:1]:
                got = prices(guard, [q for q, _ in asking[strict]], worst,
                             Thresholds(*grid, strict_price=price), strict_memo)
                read_strictly = float(np.mean(got / full[strict] >= STRICT_SHARE))
                if read_strictly >= keep:
                    break
        th = Thresholds(*grid, strict_price=price)
        kept = {k: float(np.mean(prices(guard, [q for q, _ in v], p, th, memo) / full[k]
                                 >= share))
                for k, v in asking.items()}
        if read_strictly is not None:
            kept[f"{strict}, read strictly"] = read_strictly
        if min((v for k, v in kept.items() if k not in reported), default=1.0) < keep:
            continue
        below = float(np.mean(prices(guard, non_request, p, th, memo) < floor))
        if best is None or below > best.non_request_below:
            best = Choice(grid, below, kept, price)
    if best is None:
        return Choice((0.0, 0.0, 0.0), 0.0, {k: 1.0 for k in asking})
    return best


def costly_training_requests(corpus: Sequence[Mapping[str, Any]],
                             items: Sequence[Mapping[str, Any]], seed: int = 0
                             ) -> dict[str, list[tuple[Any, dict[str, float] | None]]]:
    """The costly requests of the training split whose price the thresholds must keep, each
    with the request whose price it must keep: the seed questions of the top quartile of cost
    (as a user's), the dressed requests and the instructions (as sent), each against its own
    price with nothing left out (``None``: no oracle); and each costly seed question appended to
    a training system prompt (the system's message), against the price an oracle gives it
    (``P(asks)`` 0 for the system prompt's sentences, 1 for the question's): what the
    detector's errors alone take away."""
    import random

    cut = float(np.percentile([float(it["cost"]) for it in items], COSTLY_PERCENTILE))
    train = [r for r in corpus if r["split"] == "train"]
    costly = [it["question"] for it in items if float(it["cost"]) >= cut]
    systems = [r["text"] for r in train if r["label"] == "system"]
    rng = random.Random(seed)
    embedded: list[tuple[Any, dict[str, float] | None]] = []
    for q in costly:
        prompt = rng.choice(systems)
        text = f"{prompt}\n{q}"
        oracle = {s: 0.0 for s in sentences(normalized(prompt))}
        oracle.update({s: 1.0 for s in sentences(normalized(q))})
        oracle[normalized(text)] = 1.0
        embedded.append(({"messages": [{"role": "system", "content": text}]}, oracle))
    requests = [row_request(r) for r in train if str(r.get("form", "")).startswith("dressed")]
    instructions = [row_request(r) for r in train if r.get("form") == "instruction"]
    return {"costly seed": [(q, None) for q in costly],
            "dressed": [(q, None) for q in requests],
            "instructions": [(q, None) for q in instructions],
            IN_A_SYSTEM_PROMPT: embedded}


#: The ``history`` thresholds searched (:func:`choose_history`): never below the default
#: (:attr:`guard.asking.Thresholds.history`).
HISTORY_GRID = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
#: The last user message of the requests :func:`history_requests` builds: a pleasantry, left
#: out whatever the detector says, so the price is that of the earlier turns alone.
LAST_TURN = "ok"


def history_requests(corpus: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]],
                     seed: int = 0) -> tuple[list[tuple[Any, None]], list[Any]]:
    """Requests whose earlier turns decide the price, from the training split: each costly
    seed question sent as an earlier user turn, followed by an assistant line and a user's
    social line (it must keep its price: a question asks wherever it sits), and each training
    social line followed by an assistant line, before the last turn :data:`LAST_TURN` (a
    harmless exchange: it should cost nothing)."""
    import random

    cut = float(np.percentile([float(it["cost"]) for it in items], COSTLY_PERCENTILE))
    train = [r for r in corpus if r["split"] == "train"]
    social = [r["text"] for r in train if r["label"] == "social"]
    assistant = [r["text"] for r in train if r["label"] == "assistant"]
    rng = random.Random(seed)
    costly = [({"messages": [{"role": "user", "content": it["question"]},
                             {"role": "assistant", "content": rng.choice(assistant)},
                             {"role": "user", "content": rng.choice(social)}]}, None)
              for it in items if float(it["cost"]) >= cut]
    harmless = [{"messages": [{"role": "user", "content": s},
                              {"role": "assistant", "content": rng.choice(assistant)},
                              {"role": "user", "content": LAST_TURN}]} for s in social]
    return costly, harmless


def choose_history(guard: Any, p: Mapping[str, float], thresholds: tuple[float, ...],
                   costly: Sequence[tuple[Any, None]], harmless: Sequence[Any], floor: float,
                   *, keep: float = KEEP_COSTLY, share: float = 0.9,
                   strict_price: float = float("inf")) -> tuple[float, float, float]:
    """The largest ``history`` threshold (:data:`HISTORY_GRID`; the other thresholds as
    chosen, and ``strict_price``) under which at least ``keep`` of the ``costly`` requests
    keep ``share`` of their price with nothing left out: ``(threshold, kept, harmless priced
    below floor)``."""
    from guard.asking import Memo, Thresholds

    memo = Memo(size=2_000_000)
    full = reference_prices(guard, costly, p, memo)
    best = (HISTORY_GRID[0], 0.0, 0.0)
    for h in HISTORY_GRID:
        th = Thresholds(thresholds[0], thresholds[1], thresholds[2], history=h,
                        strict_price=strict_price)
        kept = float(np.mean(prices(guard, [q for q, _ in costly], p, th, memo) / full >= share))
        if kept < keep and h > HISTORY_GRID[0]:
            break
        below = float(np.mean(prices(guard, harmless, p, th, memo) < floor))
        best = (h, kept, below)
    return best


def non_request(corpus: Sequence[Mapping[str, Any]], split: str) -> list[Mapping[str, Any]]:
    """The written texts of ``split`` that ask for nothing (whole: social and assistant lines,
    system prompts, rules, tool definitions)."""
    return [r for r in corpus if r["split"] == split and r["source"] == "written"
            and r["label"] not in ASKING_LABELS]


def seed_percentile(items: Sequence[Mapping[str, Any]], q: float) -> float:
    return float(np.percentile([float(it["cost"]) for it in items], q))


def train_detector(corpus: Sequence[Mapping[str, Any]], items: Sequence[Mapping[str, Any]], *,
                   C: float = 10.0, folds: int = 5, progress: Any = None
                   ) -> tuple[RequestDetector, dict[str, Any]]:
    """Fit the detector and choose its thresholds on the training split alone (module
    docstring); returns the detector and what was measured out of fold."""
    from sklearn.metrics import roc_auc_score

    from guard import Guard

    step = progress or (lambda _msg: None)
    step("units")
    units = training_units(corpus, items)
    step("out-of-fold P(asks)")
    p, window_p = out_of_fold(units, C, folds)
    lookup = oof_lookup(units, p, window_p)
    step("thresholds")
    guard = Guard(detector=None, policy=None)
    floor = seed_percentile(items, 25.0)
    choice = choose_thresholds(guard, lookup, costly_training_requests(corpus, items),
                               [row_request(r) for r in non_request(corpus, "train")], floor)
    history, history_kept, history_below = choose_history(
        guard, lookup, choice.thresholds, *history_requests(corpus, items), floor,
        strict_price=choice.strict_price)
    step("final fit")
    own = (*choice.thresholds, history) + ((choice.strict_price,)
                                           if choice.strict_price != float("inf") else ())
    model = RequestDetector(C=C, thresholds=own).fit(
        [u.text for u in units], np.array([u.asks for u in units]),
        sample_weight=np.array([u.weight for u in units]))
    y = np.array([u.asks for u in units])
    report = {"units": len(units), "asking_units": int(y.sum()), "C": C, "folds": folds,
              "oof_auc": float(roc_auc_score(y, p)),
              "thresholds": list(own),
              "train_non_request_below_p25": choice.non_request_below,
              "train_costly_in_history_kept": history_kept,
              "train_harmless_history_below_p25": history_below,
              "train_costly_kept": choice.kept, "seed_p25_cost": floor}
    return model, report


@dataclass(frozen=True)
class HeldOut:
    """What the shipped guard does with the held-out split (:func:`evaluate`)."""

    non_request_below: dict[str, float]
    non_request_n: dict[str, int]
    instruction_within: dict[str, float]
    instruction_ratio_median: dict[str, float]
    #: the share priced below 0.8x their question: the side a client could use
    instruction_under: dict[str, float]
    dressed_costly: float
    dressed_refused: float
    dressed_n: int
    floor: float

    def lines(self) -> list[str]:
        out = [f"non-request texts priced below the seed set's 25th-percentile cost "
               f"({self.floor:.2f}):"]
        out += [f"  {k:<10} {v:6.1%}  (n={self.non_request_n[k]})"
                for k, v in self.non_request_below.items()]
        out.append("request-like instructions priced within 1.25x of the same question "
                   "(ratio in [0.8, 1.25]; median ratio):")
        out += [f"  {k:<10} {v:6.1%}  median {self.instruction_ratio_median[k]:.3f}, "
                f"below 0.8x {self.instruction_under[k]:.1%}"
                for k, v in self.instruction_within.items()]
        out.append(f"dressed costly requests (n={self.dressed_n}): priced at or above the "
                   f"seed set's 75th percentile {self.dressed_costly:.1%}, refused at p = 0.3 "
                   f"{self.dressed_refused:.1%}")
        return out


def evaluate(guard: Any, corpus: Sequence[Mapping[str, Any]],
             items: Sequence[Mapping[str, Any]], split: str = "test") -> HeldOut:
    """The guard as shipped on ``split`` (never fitted or tuned on): the non-request texts'
    prices, the instructions' prices against their questions', the dressed requests'."""
    from guard.asking import Memo

    memo = Memo(size=1_000_000)
    floor = seed_percentile(items, 25.0)
    below: dict[str, list[bool]] = {}
    for r in non_request(corpus, split):
        kind = "system" if r["label"] in ("system", "rule", "persona") else r["label"]
        below.setdefault(kind, []).append(
            guard.price(row_request(r), memo=memo).cost < floor)
    below["all"] = [b for v in list(below.values()) for b in v]
    ratios: dict[str, list[float]] = {}
    for r in corpus:
        if r["split"] == split and r.get("form") in ("instruction", "dressed"):
            q = guard.price(r["question"], memo=memo).cost
            ratios.setdefault(r["form"], []).append(guard.price(r["text"], memo=memo).cost / q)
    hi = seed_percentile(items, 75.0)
    dressed = [r for r in corpus if r["split"] == split
               and str(r.get("form", "")).startswith("dressed-")]
    priced = [guard.price(r["text"], memo=memo) for r in dressed]
    return HeldOut(
        non_request_below={k: float(np.mean(v)) for k, v in below.items()},
        non_request_n={k: len(v) for k, v in below.items()},
        instruction_within={k: float(np.mean([0.8 <= x <= 1.25 for x in v]))
                            for k, v in ratios.items()},
        instruction_ratio_median={k: float(np.median(v)) for k, v in ratios.items()},
        instruction_under={k: float(np.mean([x < 0.8 for x in v])) for k, v in ratios.items()},
        dressed_costly=float(np.mean([p.cost >= hi for p in priced])) if priced else 0.0,
        dressed_refused=float(np.mean([p.threshold > 0.3 for p in priced])) if priced else 0.0,
        dressed_n=len(priced), floor=floor)
