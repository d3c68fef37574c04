"""Collect graded model responses over a dataset through any OpenAI-compatible endpoint.

Each item is asked with the paper's Refusal Hint as the system prompt (temperature 0, or the
settings' ``temperature``); a base model (no chat template, not instruction-tuned) is asked with
``prompt_style="completion"``: the hint, two worked examples and the question as one text
prompt to ``/completions`` (:func:`completion_prompt`). With ``logprobs`` the reply's token
log-probabilities are recorded; with ``verbal`` a second pass asks for a stated confidence
("Confidence: N%"); with ``samples > 0`` that many extra replies at temperature 0.7 give
self-consistency (the share of replies agreeing with the greedy one); with ``ptrue`` one extra
call asks the model whether its reply is correct (P(True), :mod:`guard.confidence.ptrue`).
Every reply is graded by the rules (:mod:`benchmarks.grading`); with a model grader configured, the
replies the rules cannot settle (or all) are graded again by a model grader
(:mod:`benchmarks.grading.model_grader`), and the record keeps both verdicts.

Requests go through the shared chat client (:mod:`utilityguard_base.upstream`): timeouts,
unreachable endpoints, 5xx and 429 are retried with backoff that honours ``retry-after``.
``concurrency`` items are in flight at once, spread round-robin over one or more upstream URLs.

The output is append-only JSONL, one response record per item, flushed and fsynced per line
in the order items finish: a killed run loses nothing it wrote, and a rerun skips the ids
already present (a torn last line is moved aside to ``<out>.torn`` first).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.grading import Grade, grade
from benchmarks.grading.model_grader import (
    GraderSettings,
    model_grade,
    needs_model_grade,
    rules_outcome,
)
from benchmarks.ptrue_collect import ask_ptrue
from benchmarks.resume import prepare_resume
from cost_models.datasets import DatasetItem
from guard.confidence import VERBAL_INSTRUCTION, logprob_signal, parse_verbal_confidence
from guard.confidence.consistency import consistency
from guard.exceptions import (
    RecordError,
    UpstreamError,
    UpstreamStatusError,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from guard.refusal_detection import REFUSAL_HINT
from guard.response_records import parse_response_record
from utilityguard_base.exceptions import CollectError, ConfigError
from utilityguard_base.jsonl import append_jsonl, numbered_jsonl, read_text, write_jsonl
from utilityguard_base.upstream import RETRIED_STATUS, ChatClient, message_text

log = logging.getLogger(__name__)
CONFIDENCE_KINDS = ("logprobs", "verbal", "consistency", "ptrue")
PROMPT_STYLES = ("chat", "completion")
#: The two worked examples of the ``completion`` prompt style: one answer, one refusal in the
#: Refusal Hint's words. Neither is a seed question.
COMPLETION_SHOTS = (
    ("What is the capital of France?", "Paris."),
    ("What number am I thinking of right now?", "I cannot answer."),
)
#: Where a base model's completion is cut: it goes on to write the next "Question:".
COMPLETION_STOP = ("\nQuestion:", "\n\n\n")


def completion_prompt(system: str, question: str) -> str:
    """The text prompt of the ``completion`` style: the instruction, the worked examples, then
    ``Question: ...`` and an open ``Answer:`` for the model to complete.

    >>> print(completion_prompt("Be brief.", "2+2?"))
    Be brief.
    <BLANKLINE>
    Question: What is the capital of France?
    Answer: Paris.
    <BLANKLINE>
    Question: What number am I thinking of right now?
    Answer: I cannot answer.
    <BLANKLINE>
    Question: 2+2?
    Answer:
    """
    shots = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in COMPLETION_SHOTS)
    return f"{system}\n\n{shots}Question: {question}\nAnswer:"


#: The largest sampling temperature a collection asks for.
MAX_TEMPERATURE = 2.0


def check_temperature(t: float) -> None:
    """``ValueError`` unless ``t`` is a sampling temperature, 0 to :data:`MAX_TEMPERATURE`."""
    if not 0.0 <= t <= MAX_TEMPERATURE:
        raise ValueError(f"temperature must be between 0 and {MAX_TEMPERATURE:g}; got {t}")


@dataclass
class CollectSettings:
    upstream: str | Sequence[str]
    model: str
    confidence: Sequence[str] = ("logprobs",)
    max_tokens: int = 256
    samples: int = 0
    api_key: str | None = None
    timeout: float = 300.0
    retries: int = 3
    concurrency: int = 1
    prompt_style: str = "chat"
    grader: GraderSettings | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the temperature of the reply (and of the verbal pass); 0 (greedy) unless a collection
    #: samples the model as a deployment does, e.g. for a fresh sample of its replies
    temperature: float = 0.0

    def __post_init__(self) -> None:
        check_temperature(self.temperature)

    @property
    def upstreams(self) -> list[str]:
        return [self.upstream] if isinstance(self.upstream, str) else list(self.upstream)


#: The ``grading.stage`` of a record the model grader graded (``"judge"`` in records written
#: before the correctness judge was renamed the model grader).
MODEL_STAGES = ("model", "judge")


def grading_block(g: Grade, rules: Grade | None = None, grader_model: str | None = None
                  ) -> dict[str, Any]:
    """How a record was graded: the stage (``rules`` or ``model``), whether the rules settled
    it, their flags, and, when the model grader graded it, the grader and the rules' own verdict."""
    block: dict[str, Any] = {"stage": g.stage, "settled": g.settled, "flags": list(g.flags)}
    if rules is not None and g.stage == "model":
        block.update(grader=grader_model, rules=rules_outcome(rules))
    return block


async def _chat(client: ChatClient, s: CollectSettings, system: str, question: str,
                *, logprobs: bool, temperature: float) -> dict[str, Any]:
    body: dict[str, Any] = {"model": s.model, "max_tokens": s.max_tokens,
                            "temperature": temperature}
    if s.prompt_style == "completion":
        body.update(prompt=completion_prompt(system, question), stop=list(COMPLETION_STOP))
        if logprobs:
            body["logprobs"] = 1
        path = "/completions"
    else:
        body["messages"] = [{"role": "system", "content": system},
                            {"role": "user", "content": question}]
        if logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 1
        path = "/chat/completions"
    body.update(s.extra)
    try:
        return await client.complete(body, path=path)
    except UpstreamStatusError as exc:
        if exc.status not in RETRIED_STATUS:  # the request itself is wrong: not retried
            raise CollectError(f"upstream {client.name} answered HTTP {exc.status}: "
                               f"{exc.body[:200]}") from None
        raise CollectError(f"upstream {client.name} failed after {s.retries} tries: "
                           f"{exc}") from None
    except (UpstreamTimeout, UpstreamUnavailable) as exc:
        raise CollectError(f"upstream {client.name} failed after {s.retries} tries: "
                           f"{exc}") from None
    except UpstreamError as exc:
        raise CollectError(f"upstream {client.name}: {exc}") from None


def _content(resp: dict[str, Any]) -> tuple[str, Any, str | None]:
    try:
        text = message_text(resp)
    except UpstreamError as exc:  # an error object with status 200 is not a refusal
        raise CollectError(str(exc)) from None
    choice = resp["choices"][0]
    if "message" not in choice:  # a text completion: the base model's own leading space
        text = text.strip()
    return text, choice.get("logprobs"), choice.get("finish_reason")


async def collect_one(client: ChatClient, s: CollectSettings, item: DatasetItem,
                      grader: ChatClient | None = None) -> dict[str, Any]:
    """Ask, grade and build the response record of one item."""
    t0 = time.perf_counter()
    resp = await _chat(client, s, REFUSAL_HINT, item.question,
                       logprobs="logprobs" in s.confidence, temperature=s.temperature)
    text, lp, finish = _content(resp)
    g = rules = grade(item.model_dump(), text)
    if grader is not None and s.grader is not None and needs_model_grade(g, s.grader):
        g = await model_grade(grader, s.grader, item.model_dump(), text, rules)
    sig = logprob_signal(lp)
    conf: dict[str, float | None] = {
        "verbal": None,
        "logprob_mean": sig.mean if sig else None,
        "logprob_low10": sig.low10 if sig else None,
        "consistency": None,
    }
    record: dict[str, Any] = {
        "id": item.id, "response": text, "answered": g.answered, "correct": g.correct,
        "confidence": conf,
        "grading": grading_block(g, rules, s.grader.model if s.grader else None)}
    if "verbal" in s.confidence:
        vresp = await _chat(client, s, REFUSAL_HINT + " " + VERBAL_INSTRUCTION, item.question,
                            logprobs=False, temperature=s.temperature)
        vtext = _content(vresp)[0]
        parsed = parse_verbal_confidence(vtext)
        conf["verbal"] = parsed.value if parsed else None
        record["verbal_response"] = vtext
    if "ptrue" in s.confidence:  # one extra call: is this reply correct? (Kadavath et al.)
        try:
            conf["ptrue"] = (await ask_ptrue(client, s.model, item.question, text,
                                             style=s.prompt_style))[0]
        except UpstreamError as exc:
            raise CollectError(f"upstream {client.name}, P(True): {exc}") from None
    if s.samples > 0:
        samples = [text]
        for _ in range(s.samples):
            sresp = await _chat(client, s, REFUSAL_HINT, item.question, logprobs=False,
                                temperature=0.7)
            samples.append(_content(sresp)[0])
        # agreement of the greedy reply with all replies (itself included), refusals compared
        # as one answer
        conf["consistency"] = consistency(samples, item.answer_type, item.question,
                                          reference=text)
        record["sample_modal_share"] = consistency(samples, item.answer_type, item.question)
    usage = resp.get("usage") or {}
    record.update(model=s.model, prompt_style=s.prompt_style, finish_reason=finish,
                  completion_tokens=usage.get("completion_tokens"),
                  latency_ms=round((time.perf_counter() - t0) * 1000.0, 1))
    parse_response_record(record, f"item {item.id}")  # what we write, the one reader reads
    return record


def _client(url: str, s: CollectSettings, api_key: str | None,
            transport: httpx.AsyncBaseTransport | None) -> ChatClient:
    return ChatClient(url, api_key=api_key, timeout=s.timeout, retries=s.retries,
                      transport=transport)


async def collect(
    items: Sequence[DatasetItem],
    s: CollectSettings,
    out: Path,
    *,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    grader_transport: httpx.AsyncBaseTransport | None = None,
) -> int:
    """Collect every item not yet in ``out``; returns how many records were written.

    ``s.concurrency`` workers take items from a queue; worker ``k`` asks upstream
    ``k mod len(upstreams)``. After a failure the other workers finish (and write) the item
    they are on and take no more; the first failure is raised; what was written stays.
    """
    for kind in s.confidence:
        if kind not in CONFIDENCE_KINDS:
            raise ConfigError(f"unknown confidence {kind!r}; allowed: "
                              f"{', '.join(CONFIDENCE_KINDS)}")
    if s.concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1, got {s.concurrency}")
    if s.prompt_style not in PROMPT_STYLES:
        raise ConfigError(f"unknown prompt style {s.prompt_style!r}; allowed: "
                          f"{', '.join(PROMPT_STYLES)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    seen = prepare_resume(out)
    queue: asyncio.Queue[DatasetItem] = asyncio.Queue()
    for it in items:
        if it.id not in seen:
            queue.put_nowait(it)
    clients = [_client(u, s, s.api_key, transport) for u in s.upstreams]
    grader = (ChatClient(s.grader.upstream, api_key=s.grader.api_key, timeout=s.timeout,
                        retries=s.grader.retries, transport=grader_transport)
             if s.grader else None)
    written = 0
    try:
        with out.open("a", encoding="utf-8") as f:

            failed: list[BaseException] = []

            async def worker(k: int) -> None:
                nonlocal written
                client = clients[k % len(clients)]
                while not failed:  # after a failure, finish the item in hand, take no more
                    try:
                        item = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        return
                    try:
                        record = await collect_one(client, s, item, grader)
                    except BaseException as exc:
                        failed.append(exc)
                        raise
                    append_jsonl(f, record, durable=True)
                    written += 1
                    if on_done:
                        on_done(record)

            results = await asyncio.gather(*(worker(k) for k in range(s.concurrency)),
                                           return_exceptions=True)
            for r in results:
                if isinstance(r, BaseException):
                    raise r
    finally:
        for c in clients:
            await c.aclose()
        if grader is not None:
            await grader.aclose()
    return written


def _read_records(out: Path, by_id: dict[str, DatasetItem]) -> list[dict[str, Any]]:
    records = []
    for n, rec in numbered_jsonl(read_text(out, CollectError), out, CollectError):
        if str(rec.get("id")) not in by_id:
            raise CollectError(f"{out}, line {n}: id {rec.get('id')!r} is not in the dataset")
        try:  # the one response-record reader's checks (the raw row is kept to rewrite it)
            parse_response_record(rec, f"{out}, line {n}")
        except RecordError as exc:
            raise CollectError(str(exc)) from None
        records.append(rec)
    return records


async def _regrade(records: list[dict[str, Any]], by_id: dict[str, DatasetItem],
                   grader: GraderSettings | None, transport: httpx.AsyncBaseTransport | None,
                   concurrency: int, on_done: Callable[[dict[str, Any]], None] | None
                   ) -> int:
    client = (ChatClient(grader.upstream, api_key=grader.api_key, retries=grader.retries,
                         transport=transport) if grader else None)
    changed = 0
    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(rec: dict[str, Any]) -> None:
        nonlocal changed
        item = by_id[str(rec["id"])].model_dump()
        g = rules = grade(item, rec.get("response"))
        if client is not None and grader is not None and needs_model_grade(g, grader):
            async with sem:
                try:
                    g = await model_grade(client, grader, item, rec.get("response") or "", rules)
                except UpstreamError as exc:
                    raise CollectError(f"model grader {client.name}: {exc}") from None
        if (g.answered, g.correct) != (rec.get("answered"), rec.get("correct")):
            changed += 1
        rec["answered"], rec["correct"] = g.answered, g.correct
        rec["grading"] = grading_block(g, rules, grader.model if grader else None)
        if on_done:
            on_done(rec)

    try:
        await asyncio.gather(*(one(r) for r in records))
    finally:
        if client is not None:
            await client.aclose()
    return changed


def regrade(items: Sequence[DatasetItem], out: Path, grader: GraderSettings | None = None, *,
            grader_transport: httpx.AsyncBaseTransport | None = None, concurrency: int = 4,
            on_done: Callable[[dict[str, Any]], None] | None = None) -> tuple[int, int]:
    """Re-grade every record of ``out`` with the current rules (and the grader, if given), in
    place and atomically: nothing is written unless every record was graded.

    The replies are kept; ``answered``, ``correct`` and ``grading`` are recomputed. Returns
    ``(records, changed)``.
    """
    by_id = {it.id: it for it in items}
    records = _read_records(out, by_id)
    changed = asyncio.run(_regrade(records, by_id, grader, grader_transport, concurrency,
                                   on_done))
    write_jsonl(out, records)
    return len(records), changed


def stage_agreement(records: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """``(agree, graded)``: of the records the model grader graded, how many got the rules'
    verdict."""
    graded = [r for r in records if (r.get("grading") or {}).get("stage") in MODEL_STAGES]
    agree = sum(1 for r in graded
                if r["grading"]["rules"] == {"answered": r["answered"], "correct": r["correct"]})
    return agree, len(graded)
