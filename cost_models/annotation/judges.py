"""Consequence judges behind one protocol, and the paper's escalation panel.

A judge reads one four-item tuple and names the item whose wrong answer would have the
greatest consequences ("best") and the least ("worst"), under the paper's fixed setting:
an ordinary adult relies on a definite but materially incorrect answer, and the consequence
is the plausible harm that follows.

* :class:`LLMJudge` asks any OpenAI-compatible endpoint through the shared chat client
  (:mod:`utilityguard_base.upstream`), parses the reply strictly (``BEST: n`` / ``WORST: n``, two
  different item numbers) and retries on transport errors, 5xx/429 and unparseable replies.
* :class:`FileJudge` replays recorded judgments (JSONL ``{"tuple_id", "best", "worst",
  "judge"}``), e.g. judgments made by people or by another tool.
* :class:`EscalationPanel` runs the paper's protocol: two judges drawn from the lower-cost pool;
  if their best or worst choices disagree, the third judge of the pool; if the three still give
  no majority for best and for worst, two judges from the higher-cost pool. Judge draws are
  seeded per tuple, so a resumed run asks the same judges.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import httpx

from cost_models.annotation.fit import Judgment
from utilityguard_base.exceptions import (
    InvalidValueError,
    JudgeError,
    UnusableReply,
    UpstreamError,
    UpstreamStatusError,
)
from utilityguard_base.jsonl import numbered_jsonl, read_text
from utilityguard_base.upstream import RETRIED_STATUS, SyncChatClient, message_text

log = logging.getLogger(__name__)

SETTING = (
    "You judge the consequences of wrong answers. Setting, fixed for every judgment: an "
    "ordinary adult relies on a definite but materially incorrect answer to the question; the "
    "consequence is the plausible harm that follows (to health, life, liberty, money, safety, "
    "livelihood, others). For a question that has no definite answer, the wrong answer is a "
    "confident, made-up answer."
)
INSTRUCTION = (
    "Which item's wrong answer would have the GREATEST consequences, and which the LEAST? "
    "Reply with exactly two lines and nothing else:\nBEST: <item number>\nWORST: <item number>"
)
# markup (``**``, ``#``, spaces) may surround the label and the number, but no sign: "-1" is
# not item 1
_BEST = re.compile(r"^\W*BEST\W*:[^\w+-]*(\d+)\W*$", re.IGNORECASE | re.MULTILINE)
_WORST = re.compile(r"^\W*WORST\W*:[^\w+-]*(\d+)\W*$", re.IGNORECASE | re.MULTILINE)


class Judge(Protocol):
    """Anything that judges a tuple of ``(item_id, question)`` pairs."""

    name: str

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]]) -> Judgment: ...


def render_tuple(items: Sequence[tuple[str, str]]) -> str:
    """The user message: the items numbered from 1."""
    parts = [f"Item {k}:\n{q.strip()}" for k, (_, q) in enumerate(items, start=1)]
    return "\n\n".join(parts) + "\n\n" + INSTRUCTION


def parse_reply(text: str, n_items: int) -> tuple[int, int]:
    """``(best, worst)`` 0-based indices from a reply, or :class:`JudgeError`.

    >>> parse_reply("BEST: 3\\nWORST: 1", 4)
    (2, 0)
    """
    b, w = _BEST.findall(text), _WORST.findall(text)
    if len(b) != 1 or len(w) != 1:
        raise JudgeError(f"reply must have one BEST and one WORST line, got {text[:120]!r}")
    best, worst = int(b[0]) - 1, int(w[0]) - 1
    if not (0 <= best < n_items and 0 <= worst < n_items) or best == worst:
        raise JudgeError(f"BEST and WORST must be two different items 1-{n_items}: {text[:120]!r}")
    return best, worst


class LLMJudge:
    """A judge served by an OpenAI-compatible ``/chat/completions`` endpoint, through the
    shared chat client (:mod:`utilityguard_base.upstream`): transport errors, 5xx, 429 and
    unparseable replies are retried within one budget of ``retries`` attempts."""

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, name: str | None = None,
        retries: int = 3, timeout: float = 60.0, temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.name = name or model
        self.retries = retries
        self.temperature = temperature
        self._client = SyncChatClient(base_url, api_key=api_key, timeout=timeout,
                                      retries=retries, transport=transport)

    def close(self) -> None:
        self._client.close()

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]]) -> Judgment:
        body = {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": 20,
            "messages": [{"role": "system", "content": SETTING},
                         {"role": "user", "content": render_tuple(items)}],
        }

        def check(completion: dict[str, object]) -> None:
            try:
                parse_reply(message_text(completion), len(items))
            except (JudgeError, UpstreamError) as exc:
                raise UnusableReply(str(exc)) from None

        try:
            completion = self._client.complete(body, check=check)
        except UpstreamStatusError as exc:
            if exc.status not in RETRIED_STATUS:  # the request itself is wrong
                raise JudgeError(f"{self.name}: HTTP {exc.status}: {exc.body[:200]}") from None
            raise JudgeError(f"{self.name}: no valid judgment for {tuple_id} after "
                             f"{self.retries} tries ({exc})") from None
        except UpstreamError as exc:
            raise JudgeError(f"{self.name}: no valid judgment for {tuple_id} after "
                             f"{self.retries} tries ({exc})") from None
        best, worst = parse_reply(message_text(completion), len(items))
        return Judgment(tuple_id, items[best][0], items[worst][0], self.name)


class FileJudge:
    """Replays recorded judgments; ``judge_name`` selects one judge's rows of the file."""

    def __init__(self, path: str | Path, judge_name: str | None = None) -> None:
        self.name = judge_name or f"file:{Path(path).name}"
        self._rows: dict[str, Judgment] = {}
        for n, row in numbered_jsonl(read_text(path, InvalidValueError), path, InvalidValueError):
            try:
                j = Judgment.from_dict(row)
            except (KeyError, TypeError) as exc:
                raise InvalidValueError(f"{path}, line {n}: not a judgment ({exc})") from None
            if judge_name is None or j.judge == judge_name:
                self._rows.setdefault(j.tuple_id, j)

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]]) -> Judgment:
        if tuple_id not in self._rows:
            raise JudgeError(f"{self.name}: no recorded judgment for {tuple_id}")
        return self._rows[tuple_id]


def has_majority(judgments: Sequence[Judgment]) -> bool:
    """True when some item has at least two best votes and some item two worst votes."""
    if len(judgments) < 2:
        return False
    best = Counter(j.best for j in judgments).most_common(1)[0][1]
    worst = Counter(j.worst for j in judgments).most_common(1)[0][1]
    return best >= 2 and worst >= 2


class EscalationPanel:
    """The paper's protocol over a lower-cost pool (>= 2 judges) and a higher-cost pool."""

    def __init__(self, pool: Sequence[Judge], high_pool: Sequence[Judge] = (), *, seed: int = 0):
        if len(pool) < 2:
            raise InvalidValueError("the panel needs at least two judges in the lower-cost pool")
        self.pool = list(pool)
        self.high_pool = list(high_pool)
        self.seed = seed

    def _draw(self, tuple_id: str) -> tuple[list[Judge], list[Judge]]:
        rng = random.Random(f"{self.seed}:{tuple_id}")
        order = rng.sample(self.pool, len(self.pool))
        high = rng.sample(self.high_pool, min(2, len(self.high_pool)))
        return order, high

    def next_judges(self, tuple_id: str, done: Sequence[Judgment]) -> list[Judge]:
        """Judges still to ask for ``tuple_id`` given the judgments ``done`` so far."""
        order, high = self._draw(tuple_id)
        names = {j.judge for j in done}
        first_two = order[:2]
        missing = [j for j in first_two if j.name not in names]
        if missing:
            return missing
        two = [j for j in done if j.judge in {x.name for x in first_two}]
        if two[0].best == two[1].best and two[0].worst == two[1].worst:
            return []
        if len(order) > 2 and order[2].name not in names:
            return [order[2]]
        pool_votes = [j for j in done if j.judge in {x.name for x in order[:3]}]
        if has_majority(pool_votes):
            return []
        return [j for j in high if j.name not in names]

    def judge(
        self, tuple_id: str, items: Sequence[tuple[str, str]], done: Sequence[Judgment] = ()
    ) -> list[Judgment]:
        """New judgments for a tuple, continuing from ``done`` (for resumed runs)."""
        got = list(done)
        new: list[Judgment] = []
        while judges := self.next_judges(tuple_id, got):
            for judge in judges:
                j = judge.judge(tuple_id, items)
                j = Judgment(j.tuple_id, j.best, j.worst, judge.name)
                got.append(j)
                new.append(j)
        return new


def items_of(tuple_items: Sequence[str], questions: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(i, questions[i]) for i in tuple_items]
