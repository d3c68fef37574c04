"""The second grading stage: a model grader over any OpenAI-compatible endpoint.

As in the paper, rules grade first and a model reviews what they cannot settle (or, with
``grade_all``, every reply). The grader reads the question, the reference (or that the question
has none) and the reply, and answers two lines, ``ANSWERED: yes|no`` and ``CORRECT:
yes|no|n/a``, under the same protocol the gold sample was graded by. The grader is asked
through the shared chat client (:mod:`utilityguard_base.upstream`): a reply it cannot parse is asked
again within the client's budget of ``retries`` attempts (with 429/5xx/timeouts), then the
rules' grade stands and the record says so (flag ``grader_unparseable``). For code items the
sandboxed run decides correctness; the grader only decides whether the reply answered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from benchmarks.grading import Grade
from utilityguard_base.exceptions import GraderReplyError, UnusableReply, UpstreamError
from utilityguard_base.upstream import ChatClient, message_text

GRADER_SYSTEM = (
    "You grade one reply of a language model to a question, for a benchmark. Decide two "
    "things.\n"
    "ANSWERED: did the reply attempt an answer (yes), or did it abstain (no)? It abstains when "
    "it declines, says it does not know or that the answer is unknown or cannot be determined, "
    "says the question is subjective, asks for information it needs, says the given text lacks "
    "the information, or rejects the question's false premise. A hedge that still gives an "
    "answer is an answer; so is a reply that is wrong, off-topic or only repeats the question.\n"
    "CORRECT: for an answered reply to a question with a reference answer, does the reply "
    "commit to the reference (yes) or not (no)? A reply that contradicts itself (a letter with "
    "another option's text, two different answers), lists options without choosing one, or "
    "names the reference only while repeating the question is not correct. Write n/a when the "
    "reply did not answer.\n"
    "Reply with exactly two lines and nothing else:\nANSWERED: yes|no\nCORRECT: yes|no|n/a"
)
_ANSWERED = re.compile(r"^\W*ANSWERED\W*:\W*(yes|no)\b", re.IGNORECASE | re.MULTILINE)
_CORRECT = re.compile(r"^\W*CORRECT\W*:\W*(yes|no|n/?a)\b", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class GraderSettings:
    """Where the grader runs and which replies it reviews."""

    upstream: str
    model: str
    grade_all: bool = False
    api_key: str | None = None
    retries: int = 3
    max_tokens: int = 20


def render(item: Mapping[str, Any], reply: str) -> str:
    """The user message for one reply."""
    refs = [str(r) for r in item.get("reference") or []]
    if not item["answerable"]:
        ref = ("none: the question cannot be answered as asked; any substantive answer is "
               "wrong")
    elif item.get("answer_type") == "code":
        ref = "the reply's code must pass these tests:\n" + "\n".join(refs)
    else:
        ref = " | ".join(refs) + ("  (choice letter)" if item.get("answer_type") == "choice"
                                  else "")
    return (f"Question:\n{item['question']}\n\nReference answer: {ref}\n\n"
            f"Reply to grade:\n<<<\n{reply}\n>>>")


def parse(text: str) -> tuple[bool, bool | None]:
    """``(answered, correct)`` from the grader's two lines.

    >>> parse("ANSWERED: yes\\nCORRECT: no")
    (True, False)
    >>> parse("**ANSWERED:** no\\n**CORRECT:** n/a")
    (False, None)
    """
    a, c = _ANSWERED.findall(text), _CORRECT.findall(text)
    if len(a) != 1 or len(c) != 1:
        raise GraderReplyError(f"expected one ANSWERED and one CORRECT line, got {text[:120]!r}")
    answered = a[0].lower() == "yes"
    correct = None if c[0].lower().replace("/", "") == "na" else c[0].lower() == "yes"
    if answered and correct is None:
        raise GraderReplyError(f"an answered reply needs CORRECT yes or no: {text[:120]!r}")
    return answered, (correct if answered else None)


def needs_model_grade(g: Grade, settings: GraderSettings) -> bool:
    """Whether the second stage reviews a reply the rules graded ``g``."""
    return settings.grade_all or not g.settled


async def model_grade(client: ChatClient, settings: GraderSettings, item: Mapping[str, Any],
                      reply: str, rules: Grade) -> Grade:
    """The grader's grade of ``reply`` (``stage="model"``), or the rules' grade flagged
    ``grader_unparseable`` when the grader never gives two valid lines."""
    body = {"model": settings.model, "temperature": 0.0, "max_tokens": settings.max_tokens,
            "messages": [{"role": "system", "content": GRADER_SYSTEM},
                         {"role": "user", "content": render(item, reply)}]}

    def check(completion: dict[str, Any]) -> None:
        try:
            parse(message_text(completion))
        except GraderReplyError as exc:
            raise UnusableReply(str(exc)) from None

    try:
        completion = await client.complete(body, check=check)
    except UnusableReply:
        return replace(rules, flags=(*rules.flags, "grader_unparseable"))
    answered, correct = parse(message_text(completion))
    if answered and not item["answerable"]:
        correct = False  # an answer to a refusal-required item is wrong, whatever it says
    elif answered and item.get("answer_type") == "code":
        correct = rules.correct if rules.answered else False  # the sandbox decides
    return Grade(answered, correct, flags=rules.flags, settled=True, stage="model")


def rules_outcome(g: Grade) -> dict[str, Any]:
    """The rules' verdict kept beside a model grader's grade (for the agreement between stages)."""
    return {"answered": g.answered, "correct": g.correct}


__all__ = ["GRADER_SYSTEM", "GraderReplyError", "GraderSettings", "UpstreamError", "model_grade",
           "needs_model_grade", "parse", "render", "rules_outcome"]
