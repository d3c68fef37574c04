"""The bench as users send it: each item wrapped in a context (``utilityguard bench --contexts``).

A real request carries a system prompt, a history, the application's own instructions. Each
item's question is sent wrapped in a context built from the held-out split of the corpus of
``cost_models/data/asking`` (never fitted or tuned on): its system prompts (written by another
writer than the training ones), its social and assistant lines as harmless turns before the
question, and the collection's own prompt (the Refusal Hint). The guard decides every wrapped
item through the runtime's own path (:meth:`guard.Guard.decide` with the messages, as the proxy
and the decorator do) with each shipped policy, on each model's recorded replies.

Reported per policy, model and context, beside the bare question: the answer rate, the mean
utility, the share of the bare question's gain over always refusing that the wrapped request
keeps (``kept``, with a bootstrap interval over items), the median ratio of the wrapped price to
the bare price, and the paired difference of mean utility (wrapped - bare) with its interval.
Everything a context sends is priced as a client's, unless the run declares the contexts'
system prompts and tools as the application's own (:func:`declared`, ``--declared``), as an
operator does with ``serve --trusted-prompts`` and ``--trusted-tools``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.bench.data import BenchData
from guard.asking import AskingConfig
from guard.core import Guard
from policies.utility import refusal_utility_values, response_utility_values

FloatArray = NDArray[np.float64]
#: A context: (question, item position) -> the request: its messages, or a chat request's body
#: (``messages`` and ``tools``) when the context sends tool definitions.
Context = Callable[[str, int], list[dict[str, Any]] | dict[str, Any]]
HELPFUL = "You are a helpful assistant."
#: A line an application writes into its system prompt on every request (item ``i`` gets day
#: ``i mod 28`` of February 2027 and hour ``i mod 24``).
DATED = "Current date: 2027-02-{day:02d}. The current time is {hour:02d}:{minute:02d} UTC."


#: One-line system prompts that say how to answer, as applications send them: the first 12
#: lines, in file order, hits and misses alike, of the fourth writer's
#: ``tests/guard/data/short_prompts/fourth_writer.jsonl`` (written for the project by a Claude
#: subagent on 2026-12-04, held out from the directive vocabulary of :mod:`guard.directives`;
#: its card). Item ``i`` gets line ``i mod 12``.
ONE_LINE = ("Answer in plain prose without markdown headings.",
            "Keep every reply under three sentences.", "No emojis.",
            "Please respond in a warm, friendly tone.",
            "When you are unsure, say so plainly rather than guessing.",
            "Use bullet points for any list of more than two items.",
            "respond only in valid JSON", "Cite a source for every factual claim you make.",
            "Ask a clarifying question if the request is ambiguous.",
            "Write using British English spelling.",
            "Avoid jargon; explain things as you would to a newcomer.",
            "Format all code in fenced code blocks with a language tag.")


def dated(i: int) -> str:
    """The date line of item ``i`` (:data:`DATED`)."""
    return DATED.format(day=i % 28 + 1, hour=i % 24, minute=(i * 7) % 60)


def _user(q: str) -> dict[str, Any]:
    return {"role": "user", "content": q}


def _pools(corpus: Sequence[Mapping[str, Any]], split: str
           ) -> tuple[list[str], list[str], list[str], list[dict[str, Any]]]:
    """The split's system prompts, users' social lines, assistant lines and tool definitions
    (:class:`ValueError` when it lacks any of them)."""
    rows = [r for r in corpus if r["split"] == split]
    systems = [r["text"] for r in rows if r["label"] == "system"]
    social = [r["text"] for r in rows if r["label"] == "social"]
    assistant = [r["text"] for r in rows if r["label"] == "assistant"]
    tools = [r["tool"] for r in rows if r["label"] == "tool" and isinstance(r.get("tool"), dict)]
    if not (systems and social and assistant and tools):
        raise ValueError(f"the corpus split {split!r} lacks system prompts, harmless turns or "
                         "tool definitions")
    return systems, social, assistant, tools


def contexts(corpus: Sequence[Mapping[str, Any]], *, split: str = "test",
             seed: int = 0) -> dict[str, Context]:
    """The contexts, from the corpus's ``split``: the helpful-assistant line, alone and with the
    date and time (:func:`dated`); a one-line instruction (:data:`ONE_LINE`); a system prompt
    of the split (item ``i`` gets prompt ``i mod n``); the collection's own prompt; one and two
    harmless exchanges before the question (a user's social line, the assistant's line); all
    of it together; the split's tool definitions sent with the question (``tools``: one, and
    three, as an application with tools sends them every time, whatever is asked)."""
    from guard.refusal_detection import REFUSAL_HINT

    systems, social, assistant, tools = _pools(corpus, split)
    rng = random.Random(seed)
    # drawn in this order, so that adding a kind at the end changes no earlier context
    order = {k: rng.sample(range(len(v)), len(v))
             for k, v in (("s", systems), ("u", social), ("a", assistant), ("t", tools))}

    def pick(kind: str, pool: list[str], i: int) -> str:
        return pool[order[kind][i % len(pool)]]

    def with_tools(q: str, i: int, k: int) -> dict[str, Any]:
        # k definitions from the i-th k of the drawn order, of k different names (two
        # writers each defined a get_order_status: an application sends a name once)
        chosen: dict[Any, dict[str, Any]] = {}
        for j in range(i * k, i * k + len(tools)):
            tool = tools[order["t"][j % len(tools)]]
            chosen.setdefault((tool.get("function") or {}).get("name"), tool)
            if len(chosen) == k:
                break
        return {"messages": [_user(q)], "tools": list(chosen.values())}

    def turns(i: int, k: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for j in range(k):
            out += [_user(pick("u", social, i * 2 + j)),
                    {"role": "assistant", "content": pick("a", assistant, i * 2 + j)}]
        return out

    return {
        "system: helpful assistant": lambda q, i: [
            {"role": "system", "content": HELPFUL}, _user(q)],
        "system: helpful assistant + date": lambda q, i: [
            {"role": "system", "content": f"{HELPFUL}\n{dated(i)}"}, _user(q)],
        "system: one-line instruction": lambda q, i: [
            {"role": "system", "content": ONE_LINE[i % len(ONE_LINE)]}, _user(q)],
        "system: product prompt": lambda q, i: [
            {"role": "system", "content": pick("s", systems, i)}, _user(q)],
        "system: collection prompt": lambda q, i: [
            {"role": "system", "content": REFUSAL_HINT}, _user(q)],
        "history: 1 harmless exchange": lambda q, i: [*turns(i, 1), _user(q)],
        "history: 2 harmless exchanges": lambda q, i: [*turns(i, 2), _user(q)],
        "all: prompt + 2 exchanges": lambda q, i: [
            {"role": "system", "content": pick("s", systems, i)}, *turns(i, 2), _user(q)],
        "tools: 1 definition": lambda q, i: with_tools(q, i, 1),
        "tools: 3 definitions": lambda q, i: with_tools(q, i, 3),
    }


def declared(corpus: Sequence[Mapping[str, Any]], *, split: str = "test") -> AskingConfig:
    """The pricing settings of an operator who declares every system prompt and tool
    definition the contexts send (:func:`contexts`, the same ``split``) as its application's
    own, as ``serve --trusted-prompts`` and ``--trusted-tools`` do: the helpful-assistant
    line, the one-line instructions, the collection's prompt, the split's system prompts (each
    trusted by its text, so sentence by sentence) and the split's tools. What a client writes
    — the harmless turns, the question — is priced as before."""
    from guard.refusal_detection import REFUSAL_HINT
    from guard.trusted_tools import tool_keys

    systems, _, _, tools = _pools(corpus, split)
    return AskingConfig.trusting([HELPFUL, REFUSAL_HINT, *ONE_LINE, *systems],
                                 trusted_tools=tool_keys(tools))


def select(ctxs: Mapping[str, Context], names: Sequence[str] | None) -> dict[str, Context]:
    """The contexts ``names`` picks, in the order of ``ctxs`` (all when ``names`` is empty or
    ``None``): each name is a context's whole name or a part of it that only one context's
    name holds, case ignored ("2 harmless", "product"); :class:`ValueError` naming the
    contexts for one that matches none or several.

    >>> list(select({"history: 1 exchange": None, "history: 2 exchanges": None}, ["2 ex"]))
    ['history: 2 exchanges']
    """
    if not names:
        return dict(ctxs)
    chosen: set[str] = set()
    for name in names:
        key = name.strip().lower()
        exact = [c for c in ctxs if c.lower() == key]
        hits = exact or [c for c in ctxs if key and key in c.lower()]
        if len(hits) != 1:
            what = "no context" if not hits else f"{len(hits)} contexts ({'; '.join(hits)})"
            raise ValueError(f"--context {name!r} names {what}; the contexts: "
                             f"{'; '.join(ctxs)}")
        chosen.add(hits[0])
    return {c: wrap for c, wrap in ctxs.items() if c in chosen}


@dataclass(frozen=True)
class Decided:
    """One policy's decisions on one model's items: delivered answer or not, and ``L``."""

    answer: NDArray[np.bool_]
    cost: FloatArray


def decide_all(guard: Guard, data: BenchData, signal: str,
               wrap: Context | None = None) -> Decided:
    """The runtime's decision on every item (:func:`benchmarks.bench.crossfit.decide`), the
    question wrapped by ``wrap`` when given."""
    from benchmarks.bench.crossfit import decide

    records = decide(guard, data, np.arange(data.n), signal, wrap=wrap)
    return Decided(np.array([r.decision == "answer" for r in records], dtype=bool),
                   np.array([r.cost for r in records], dtype=np.float64))


def utilities(data: BenchData, answer: NDArray[np.bool_], c_r: float) -> FloatArray:
    """Each item's utility when the guard delivers where ``answer`` (a delivered model refusal
    is a refusal)."""
    delivered = answer & data.answered
    out: FloatArray = response_utility_values(data.answerable, delivered, data.correct,
                                              data.cost, c_r)
    return out


def mean_ci(values: FloatArray, samples: Any) -> list[float]:
    """The 95% percentile interval of the mean of ``values`` over the bootstrap ``samples``
    (rows of item indices): a paired difference's interval when ``values`` are differences."""
    boot = values[samples].mean(axis=1)
    return [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))]


def compare(data: BenchData, bare: Decided, wrapped: Decided, c_r: float, *,
            bootstrap: int = 200, seed: int = 0) -> dict[str, Any]:
    """The context's figures beside the bare question's (module docstring)."""
    ub, uw = utilities(data, bare.answer, c_r), utilities(data, wrapped.answer, c_r)
    ur = refusal_utility_values(data.answerable, c_r)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.n, size=(bootstrap, data.n))

    def kept(sel: Any) -> Any:
        gain = ub[sel].mean(axis=-1) - ur[sel].mean(axis=-1)
        return np.where(gain != 0, (uw[sel].mean(axis=-1) - ur[sel].mean(axis=-1))
                        / np.where(gain != 0, gain, 1.0), np.nan)

    boot_kept = kept(idx)
    diff = uw - ub
    return {"n": data.n, "answer_rate": float(wrapped.answer.mean()),
            "answer_rate_bare": float(bare.answer.mean()),
            "mean_utility": float(uw.mean()), "mean_utility_bare": float(ub.mean()),
            "always_refuse": float(ur.mean()),
            "kept": float(kept(np.arange(data.n))),
            "kept_ci": [float(np.nanpercentile(boot_kept, 2.5)),
                        float(np.nanpercentile(boot_kept, 97.5))],
            "price_ratio_median": float(np.median(wrapped.cost / bare.cost)),
            "utility_difference": float(diff.mean()),
            "utility_difference_ci": mean_ci(diff, idx),
            "decisions_changed": int((wrapped.answer != bare.answer).sum())}


def changed_by(guard: Guard, data: BenchData, bare: Decided, wrapped: Decided,
               wrap: Context, top: int) -> list[dict[str, Any]]:
    """What set the wrapped price where the wrapped decision differs from the bare one: the
    ``top`` most frequent (where it sits, :attr:`guard.price.Price.priced_by`; the text,
    :attr:`~guard.price.Price.question`, or the ceiling that set it), each with how many
    decisions it changed, most first."""
    counts: Counter[tuple[str, str]] = Counter()
    for i in np.flatnonzero(bare.answer != wrapped.answer):
        price = guard.price(wrap(data.questions[i], int(i)))
        counts[(price.priced_by or "none", price.question or f"({price.cost_source})")] += 1
    return [{"priced_by": where, "text": text, "decisions": n}
            for (where, text), n in counts.most_common(top)]


def run_contexts(policies: Sequence[Any], models: Sequence[BenchData],
                 ctxs: Mapping[str, Context], c_r: float, *, bootstrap: int = 200,
                 seed: int = 0, progress: Callable[[str], None] | None = None,
                 asking: AskingConfig | None = None, explain: int = 0
                 ) -> list[dict[str, Any]]:
    """Every (policy, model, context) row (:func:`compare`); ``asking``: the guard's pricing
    settings (:func:`declared`: the operator's prompts and tools trusted), the bare question
    decided with the same guard; ``explain``: each row's ``changed_by`` (:func:`changed_by`,
    that many texts; 0: none)."""
    rows = []
    settings: dict[str, Any] = {} if asking is None else {"asking": asking}
    for policy in policies:
        guard = Guard.from_policy(policy, c_r=c_r, **settings)
        for data in models:
            if progress:
                progress(f"{policy.name}, {data.model}: bare")
            bare = decide_all(guard, data, policy.signal)
            for name, wrap in ctxs.items():
                if progress:
                    progress(f"{policy.name}, {data.model}: {name}")
                wrapped = decide_all(guard, data, policy.signal, wrap)
                row = compare(data, bare, wrapped, c_r, bootstrap=bootstrap, seed=seed)
                if explain:
                    row["changed_by"] = changed_by(guard, data, bare, wrapped, wrap, explain)
                rows.append({"policy": policy.label, "model": data.model, "context": name,
                             "declared": asking is not None, **row})
    return rows


#: The most characters of a text :func:`explained` prints (``contexts.json`` has it whole).
EXPLAIN_CHARS = 100


def explained(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows' ``changed_by`` as text: per row with a changed decision, what set the price
    (where, how many decisions, the text on one line, cut at :data:`EXPLAIN_CHARS`)."""
    lines = []
    for r in rows:
        if not r.get("changed_by"):
            continue
        lines.append(f"{r['policy'].split('@')[0]}, {r['model']}, {r['context']}: "
                     f"{r['decisions_changed']} decisions changed; the price set by")
        for c in r["changed_by"]:
            text = " ".join(c["text"].split())
            if len(text) > EXPLAIN_CHARS:
                text = text[:EXPLAIN_CHARS - 3] + "..."
            lines.append(f"  {c['decisions']:4d}  {c['priced_by']:<9} {text}")
    return "\n".join(lines)


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as a markdown table."""
    head = ("| policy | model | context | answer rate (bare) | mean utility (bare) | "
            "gain kept [95% CI] | price ratio (median) | utility diff [95% CI] |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- |")
    lines = [head]
    for r in rows:
        lo, hi = r["kept_ci"]
        dlo, dhi = r["utility_difference_ci"]
        lines.append(
            f"| {r['policy'].split('@')[0]} | {r['model']} | {r['context']} | "
            f"{r['answer_rate']:.3f} ({r['answer_rate_bare']:.3f}) | "
            f"{r['mean_utility']:.3f} ({r['mean_utility_bare']:.3f}) | "
            f"{r['kept']:.3f} [{lo:.3f}, {hi:.3f}] | {r['price_ratio_median']:.3f} | "
            f"{r['utility_difference']:+.4f} [{dlo:+.4f}, {dhi:+.4f}] |")
    return "\n".join(lines)
