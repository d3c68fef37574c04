"""``utilityguard decide``: what the guard would decide for a question, without any model.

A dry run of the guard ``serve`` runs and ``Guard()`` builds — the same policy (the shipped
``default`` unless ``--policy NAME|DIR|none``), the same pricing of what the question asks,
the same ``alpha``, threshold and ``p`` — on QUESTION and, given ``--p`` (a probability the
caller supplies) or ``--signal NAME=VALUE`` (a confidence signal as a reply carries it), the
decision. No model is asked and nothing is sent anywhere::

    $ utilityguard decide "What is the maximum daily dose of acetaminophen for an adult?" --p 0.88

prints the cost ``L`` and where it came from, ``C_R``, ``alpha``, the threshold
``(L + 1 - alpha (1 + C_R)) / (1 + L)``, ``p`` and its source, the decision and why, and the
policy. The guard is built by :func:`guard.proxy.build.build_guard` from the flags below and
the ``UTILITYGUARD_*`` settings, as ``serve`` builds it. Without ``--p`` / ``--signal`` it
prints the threshold and what it means. ``--request FILE`` decides on whole requests as a
client sends them (a chat-completions or Responses body: a system prompt, a history, tools),
priced as the proxy prices them, and says which text set the price and where it sits; with
``--trusted-prompts`` / ``--trusted-tools`` it prices them as a route that trusts its own
prompts or tool definitions does; several
end with how many each kind of text priced (:func:`summary`). ``--json``
prints one JSON object per question (the decision record, plus ``question``, ``why`` and
``warning``; the record's ``priced_by`` says where the text that set the price sits; for a
request also ``request`` and ``priced_text``, that text and its path). When the policy's
calibrator cannot reach the thresholds of ordinary questions, a warning says so and what to do
(:mod:`guard.reach`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guard.asking import TRUSTABLE_ROLES
from guard.decision_records import NO_TEXT_PRICED, PRICED_BY_NAMES
from guard.exceptions import CLIError, PayloadTooLargeError
from policies.decision import THRESHOLD
from policies.validation import check_cost, check_probability
from utilityguard_base.options import argument, checked_c_r

#: the serve settings that make the guard, as decide's flags (same names, same environment)
GUARD_SETTINGS = ("policy", "c_r", "cost_model", "calibrator", "confidence", "no_confidence",
                  "trust_artifacts", "request_detector", "unreadable_price", "upstream_price",
                  "trusted_prompts", "trusted_tools", "max_segments", "max_text_chars")


def _probability(text: str) -> float:
    return argument(check_probability, text)


def _positive(text: str) -> float:
    return argument(check_cost, text)


def _signal(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE (logprob_mean=-0.2); got {text!r}")
    try:
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name.strip()}: not a number: {value!r}") from None


def register(sub: Any) -> None:
    """Add the ``decide`` subcommand to the ``utilityguard`` parser."""
    from guard.cli_serve import add_settings_flags

    p = sub.add_parser(
        "decide", help="what the guard would decide for a question (a dry run, no model)",
        description=(
            "A dry run of the guard that serve runs and Guard() builds (the shipped default "
            "policy unless --policy NAME|DIR|none): the cost L of a wrong answer to QUESTION, "
            "alpha = P(answerable), the threshold p >= " + THRESHOLD + ", and with --p or "
            "--signal the decision, its p and why. No model is asked."),
        epilog="example: utilityguard decide \"What is the maximum daily dose of acetaminophen "
               "for an adult?\" --p 0.88")
    p.add_argument("questions", nargs="*", metavar="QUESTION", help="the question(s)")
    p.add_argument("--from", dest="table", type=Path, default=None, metavar="FILE",
                   help="a table of questions (JSONL, JSON or CSV), one per row: 'question' and "
                        "any of 'p', 'reply', 'cost', 'alpha' and signal names "
                        "('logprob_mean': -0.2), each overriding the flag of that name")
    p.add_argument("--request", dest="requests", type=Path, default=None, metavar="FILE",
                   help="request bodies as a client sends them to the proxy (chat completions: "
                        "'messages', 'tools', ...; Responses: 'input', 'instructions', ...): a "
                        "JSON object, a JSON list of them or JSONL, one per line; each is "
                        "priced as the proxy prices it, and the dry run says which text set the "
                        "price and where it sits ('-': standard input)")
    p.add_argument("--p", type=_probability, default=None,
                   help="probability that the answer would be correct, as a caller supplies it "
                        "(omit: threshold only)")
    p.add_argument("--signal", type=_signal, action="append", default=None,
                   metavar="NAME=VALUE",
                   help="a confidence signal as a reply carries it (logprob_mean=-0.2, "
                        "verbal=0.8), read as the guard reads it: calibrated by the policy's "
                        "calibrator when it reads that signal (repeatable)")
    p.add_argument("--reply", default=None, metavar="TEXT",
                   help="the model's reply (default: an answer, not shown): a refusal in it "
                        "passes through, a confidence line is read when --confidence reads it")
    p.add_argument("--cost", type=_positive, default=None,
                   help="the cost L of a wrong answer, instead of the guard's price")
    p.add_argument("--alpha", type=_probability, default=None,
                   help="P(answerable), instead of the policy's answerability model (1: the "
                        "paper's rule)")
    guard_flags = p.add_argument_group(
        "the guard (as 'serve' builds it; each also read from UTILITYGUARD_*)")
    add_settings_flags(guard_flags, GUARD_SETTINGS)
    p.add_argument("--json", action="store_true", help="one JSON object per question")
    p.set_defaults(func=run)


def build(args: argparse.Namespace) -> Any:
    """The guard ``serve`` would run with the same flags and environment."""
    from guard.cli_serve import settings_from
    from guard.proxy.build import build_guard

    overrides = {name: getattr(args, name) for name in GUARD_SETTINGS
                 if getattr(args, name, None) is not None}
    return build_guard(settings_from(overrides))


@dataclass(frozen=True)
class Case:
    """One question to decide and what is given about its reply."""

    question: Any  # a text, or a request body (--request)
    p: float | None = None
    signals: dict[str, float] = field(default_factory=dict)
    reply: str | None = None
    cost: float | None = None
    alpha: float | None = None
    #: how the output names it ("" for a QUESTION: the question itself)
    label: str = ""

    @property
    def asked(self) -> bool:
        """A decision was asked for (a ``p``, a signal or a reply), not only the threshold."""
        return self.p is not None or bool(self.signals) or self.reply is not None

    def confidence(self) -> Any:
        from guard.decision_records import Confidence

        given = dict(self.signals)
        if "caller" in given:
            raise CLIError("give a caller's probability as --p (or 'p'), not as the signal "
                           "'caller'")
        if self.p is not None:
            given["caller"] = self.p
        return Confidence.coerce(given)


#: the columns of a ``--from`` table besides ``question`` and the signal names
COLUMNS = ("p", "reply", "cost", "alpha")


def cases(args: argparse.Namespace) -> list[Case]:
    """The questions to decide: QUESTION arguments, then the rows of ``--from``, each with
    the flags' values unless the row gives its own."""
    from guard.decision_records import REPLY_SIGNALS

    base = Case("", p=args.p, signals=dict(args.signal or []), reply=args.reply,
                cost=args.cost, alpha=args.alpha)
    out = [Case(q, base.p, base.signals, base.reply, base.cost, base.alpha)
           for q in args.questions]
    if args.table is not None:
        from cost_models.datasets import read_rows

        for k, row in enumerate(read_rows(args.table), start=1):
            where = f"{args.table}: row {k}"
            unknown = set(row) - {"question", "id", *COLUMNS, *REPLY_SIGNALS}
            if unknown:
                raise CLIError(f"{where}: unknown column(s) {', '.join(sorted(unknown))}; "
                               f"known: question, {', '.join(COLUMNS)} and the signals "
                               f"{', '.join(REPLY_SIGNALS)}")
            if not isinstance(row.get("question"), str):
                raise CLIError(f"{where}: 'question' must be a string")
            given = {k: v for k, v in row.items() if v not in (None, "")}
            try:
                numbers = {k: float(given[k]) for k in (*COLUMNS, *REPLY_SIGNALS)
                           if k in given and k != "reply"}
            except (TypeError, ValueError) as exc:
                raise CLIError(f"{where}: not a number ({exc})") from None
            out.append(Case(
                row["question"], numbers.get("p", base.p),
                {**base.signals, **{s: numbers[s] for s in REPLY_SIGNALS if s in numbers}},
                str(given["reply"]) if "reply" in given else base.reply,
                numbers.get("cost", base.cost), numbers.get("alpha", base.alpha)))
    if args.requests is not None:
        out += [Case(body, base.p, base.signals, base.reply, base.cost, base.alpha,
                     label=f"request {k} of {args.requests}")
                for k, body in enumerate(read_requests(args.requests), start=1)]
    if not out:
        raise CLIError("give a QUESTION (or --from FILE, --request FILE)")
    for case in out:
        if isinstance(case.question, str) and not case.question.strip():
            raise CLIError("QUESTION must not be empty")
        for name, value, check in (("p", case.p, check_probability),
                                   ("cost", case.cost, check_cost),
                                   ("alpha", case.alpha, check_probability)):
            if value is not None:
                try:
                    check(value, name)
                except ValueError as exc:
                    raise CLIError(str(exc)) from None
    return out


#: the most request bodies one ``--request`` file may hold
MAX_REQUESTS = 10_000


def read_requests(path: Path) -> list[dict[str, Any]]:
    """The request bodies of a ``--request`` file: a JSON object, a JSON list of objects, or
    JSONL (one object per line); ``-`` is standard input. A clear error for anything else."""
    where = "standard input" if str(path) == "-" else str(path)
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"--request {where}: cannot read it ({exc})") from None
    try:
        data: Any = json.loads(text)
        bodies = data if isinstance(data, list) else [data]
        lines = [f"item {k}" for k in range(1, len(bodies) + 1)]
    except json.JSONDecodeError:
        bodies, lines = [], []
        for k, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    bodies.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise CLIError(f"--request {where}: line {k} is not JSON ({exc.msg}); "
                                   "give a JSON object, a JSON list or JSONL") from None
                lines.append(f"line {k}")
    if not bodies:
        raise CLIError(f"--request {where}: no request in it")
    if len(bodies) > MAX_REQUESTS:
        raise CLIError(f"--request {where}: {len(bodies)} requests, more than {MAX_REQUESTS}")
    for body, at in zip(bodies, lines, strict=True):
        if not isinstance(body, dict) or not any(
                k in body for k in ("messages", "input", "instructions", "prompt", "tools")):
            raise CLIError(f"--request {where}: {at} is not a request body (a JSON object with "
                           "'messages', or 'input' / 'instructions' for the Responses API)")
    return bodies


def priced_text(question: str | None, body: dict[str, Any]) -> dict[str, Any] | None:
    """Where in ``body`` the text that set its price sits: ``question`` (its
    :attr:`guard.price.Price.question`, as the guard read it) and its path
    (``messages[0].content``); ``None`` when no text set it (the request asks for nothing, or a
    ceiling set the price). Its role is the decision record's ``priced_by``."""
    from guard.reading import normalized
    from guard.request_walk import walk

    if not question:
        return None
    first = question.split("\n")[0].strip()
    for t in walk(body).texts:
        if first and first in normalized(t.text):
            return {"text": question, "where": t.where}
    return {"text": question, "where": None}


def dry_run(guard: Any, case: Case, args: argparse.Namespace, top: float | None
            ) -> dict[str, Any]:
    """The decision record of one question as JSON, with ``question``, what the caller
    receives (``delivered``, with ``--reply``) and ``why``; ``decision`` is ``None`` when
    neither ``p``, a signal nor a reply was given (the threshold alone)."""
    confidence = case.confidence()
    # priced once: the decision and the text that set the price read the same price
    price = guard.price(case.question, cost=case.cost, alpha=case.alpha)
    overrides = {"cost": case.cost, "alpha": case.alpha, "price": price}
    if case.reply is not None:
        delivered, record = guard.apply(case.question, case.reply, confidence=confidence,
                                        **overrides)
    else:  # an answer, as a tool call is: never read as the model's own refusal
        record = guard.decide(case.question, "", confidence=confidence, acts=True,
                              **overrides)
        delivered = None
    row = {"question": case.question, **record.model_dump(), "dry_run": True}
    if not isinstance(case.question, str):
        row["request"] = case.question
        row["priced_text"] = (priced_text(price.question, case.question) if case.cost is None
                              else None)
        row["question"] = (row["priced_text"] or {}).get("text")
    if not case.asked:
        row["decision"] = None
    row["delivered"] = delivered
    row["why"] = why(guard, record, case, args, top, row.get("priced_text"))
    return row


def why(guard: Any, record: Any, case: Case, args: argparse.Namespace,
        top: float | None, priced: dict[str, Any] | None = None) -> list[str]:
    """Where each number came from and why the decision is what it is, one clause each."""
    what = "question" if isinstance(case.question, str) else "request"
    cost = {
        "model": f"the cost model's price of what the {what} asks"
                 + (" (on the policy's cost scale)" if guard.cost_scale is not None else ""),
        "caller": "given (--cost)",
        "nothing_asked": f"the {what} asks for nothing: the price of a pleasantry",
        "unreadable": "text the guard cannot read: the ceiling --unreadable-price",
        "upstream": "text that lives upstream: the ceiling --upstream-price",
    }[record.cost_source]
    if case.alpha is not None:
        alpha = "given (--alpha)"
    elif guard.answerability is not None:
        alpha = "P(answerable) from the policy's answerability model"
    else:
        alpha = "no answerability model: every question assumed answerable"
    c_r = "given (--c-r)" if args.c_r is not None else (
        "the policy's default" if record.policy else "the default")
    out = [f"L {record.cost:g}: {cost}", *_priced_by_lines(priced, record.priced_by),
           f"C_R {record.c_r:g}: {c_r}", f"alpha {record.alpha:g}: {alpha}",
           f"threshold {record.threshold:g} = {THRESHOLD}"]
    p = record.p
    reads_reply = hasattr(guard.calibrator, "p_correct")
    if record.p_source == "calibrated" and reads_reply:
        given = case.confidence()
        in_reply = guard.extract(case.reply) if case.reply is not None else None
        present = []
        for s in guard.calibrator.signals:
            if given.get(s) is not None:
                present.append(f"{s} = {given.get(s):g}")
            elif in_reply is not None and in_reply.get(s) is not None:
                present.append(f"{s} = {in_reply.get(s):g} (read from the reply)")
        out.append(f"p {p:g}: the policy's calibrator on "
                   f"{', '.join(present) or 'no signal'} and the reply's text"
                   + ("" if case.reply is not None else " (an empty reply: give --reply)"))
        if case.p is not None:
            out.append("--p is not read: this policy's calibrator reads the reply itself")
    elif record.p_source == "calibrated":
        out.append(f"p {p:g}: the calibrator's map of {record.signal} = "
                   f"{record.signal_value:g}")
    elif record.p_source == "caller":
        out.append(f"p {p:g}: given (--p)")
    elif record.p_source == "uncalibrated":
        out.append(f"p {p:g}: {record.signal} = {record.signal_value:g}, uncalibrated (no "
                   "calibrator reads it)")
    elif record.p_source == "prior":
        out.append(f"p {p:g}: the --no-confidence prior")
    if not case.asked:
        if record.threshold <= 0.0:
            out.append("every p answers: a wrong answer costs no more than a refusal")
        elif record.threshold > 1.0:
            out.append("no p answers")
        else:
            out.append(f"answer iff p >= {record.threshold:g}")
    elif record.decision == "passthrough_refusal":
        out.append("the reply is the model's own refusal: passed through")
    elif p is None:
        out.append("no p (no signal, no --p): every p answers" if record.decision == "answer"
                   and record.threshold <= 0.0 else
                   f"no p (no signal, no --p): --no-confidence {guard.no_confidence}")
    else:
        out.append(f"{record.decision}: p {p:g} {'>=' if p >= record.threshold else '<'} "
                   f"threshold {record.threshold:g}")
    if top is not None and record.threshold > top:
        out.append(f"no reply can reach this threshold through the calibrator: its largest "
                   f"p is {top:.3f}")
    return out


def _priced_by_lines(got: dict[str, Any] | None, role: str | None) -> list[str]:
    """For a request: the text that set its price (:func:`priced_text`), where it sits (its
    path and ``role``, the record's ``priced_by``), and what to do when it is a system prompt
    the operator could trust."""
    if got is None:
        return []
    text = got["text"] if len(got["text"]) <= 160 else got["text"][:157] + "..."
    at = f" at {got['where']}" if got["where"] else ""
    said = f" ({role})" if role else ""
    out = [f"priced by the text{at}{said}: {text!r}"]
    if role in TRUSTABLE_ROLES:
        out.append("that text is in the system prompt: if the prompt is your application's "
                   "own, declare it trusted (serve --trusted-prompts) and it is not priced; "
                   "a client's system prompt is priced (docs/security.md)")
    elif role == "tools":
        out.append("that text is in a tool definition: if the tool is your application's own, "
                   "declare it trusted (serve --trusted-tools FILE, the JSON of your tools) and "
                   "it is not priced; a client's tool is priced (docs/security.md)")
    return out


def _line(row: dict[str, Any]) -> str:
    head = (f"cost {row['cost']:g} ({row['cost_source']}), C_R {row['c_r']:g}, "
            f"alpha {row['alpha']:g}, threshold {row['threshold']:g}")
    if row["decision"] is not None:
        p = "no p" if row["p"] is None else f"p {row['p']:g} ({row['p_source']})"
        head = f"{head}: {p} -> {row['decision']}"
    else:
        head = f"{head}: {row['why'][-1]}"
    policy = row["policy"] or "none (the bare rule)"
    return "\n".join([head, f"  policy {policy}", *(f"  {w}" for w in row["why"])])


def run(args: argparse.Namespace) -> int:
    """Print the dry-run decision of every question."""
    from guard.reach import p_max, reach, read_signals

    if args.c_r is not None:
        checked_c_r(args.c_r)
    todo = cases(args)
    guard = build(args)
    top = p_max(guard.calibrator, read_signals(guard))
    try:
        bound = reach(guard) if top is not None and top < 1.0 else None
    except PayloadTooLargeError as exc:  # its reference questions are over tiny limits
        print("utilityguard: note: the calibrator's reach was not checked: its reference "
              f"questions are over the limits ({exc})",
              file=sys.stderr)
        bound = None
    warning = bound.warning() if bound is not None else None
    if warning:
        print(f"utilityguard: warning: {warning}", file=sys.stderr)
    where: list[str | None] = []
    for case in todo:
        try:
            row = dry_run(guard, case, args, top)
        except PayloadTooLargeError as exc:  # the proxy's 413: the operator's limits
            raise CLIError(f"{case.label or 'the question'}: {exc}") from None
        row["warning"] = warning
        where.append(row["priced_by"])
        if args.json:
            print(json.dumps(row))
        else:
            text = _line(row)
            print(text if len(todo) == 1 else f"{case.label or case.question}\n  {text}")
    if args.requests is not None and len(todo) > 1 and not args.json:
        print("\n".join(summary(where)))
    return 0


def summary(where: list[str | None]) -> list[str]:
    """The last lines of a dry run of several requests: how many were priced by each kind of
    text (the records' ``priced_by``), and how to trust a prompt when a system or developer
    prompt set any price."""
    counts = Counter(where)
    parts = [f"{PRICED_BY_NAMES[k]} {counts[k]}" for k in PRICED_BY_NAMES if counts[k]]
    if counts[None]:
        parts.append(f"no text ({NO_TEXT_PRICED}) {counts[None]}")
    out = [f"{len(where)} requests; the text that set the price: {', '.join(parts)}"]
    prompts = sum(counts[k] for k in TRUSTABLE_ROLES)
    if prompts:
        out.append(f"{prompts} of {len(where)} priced by a system or developer prompt: if it is "
                   "your application's own, see what --trusted-prompts changes")
    if counts["tools"]:
        out.append(f"{counts['tools']} of {len(where)} priced by a tool definition: if the tools "
                   "are your application's own, see what --trusted-tools changes")
    return out
