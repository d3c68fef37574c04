"""The README's policy workflow, as run: ``python -m benchmarks.examples.policy_workflow``.

``label URL N SEED``
    Ask ``N`` seed questions (sampled with ``SEED``) through a proxy in shadow mode, grade each
    delivered reply with the project's grader against the seed reference, and send the label
    to ``POST /v1/feedback``. Prints what the guard would have delivered and its mean utility
    per query at ``C_R = 2`` had it enforced, beside the model as is and refusing everything.
``enforce URL POLICY AUDIT_DB``
    Ask every seed question not in ``AUDIT_DB`` (``none``: all of them) through a proxy (any
    mode; the upstream must replay the shipped SmolLM2 responses, ``python -m
    benchmarks.replay``), decide each one in process with ``Guard.from_policy(POLICY)`` too,
    and print how many decisions agree and the mean utilities (graded by the recorded grades).

A demonstration, not a test: the tests of the same properties are in ``tests/guard/policy`` and
``tests/guard/proxy``.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping
from typing import Any

import httpx

from benchmarks.bench.data import shipped_responses
from benchmarks.grading import grade
from cost_models.datasets import DatasetItem, load_seed
from guard import Guard
from guard.proxy.audit import DECISIONS, read_rows
from guard.refusal_detection import REFUSAL_HINT
from utilityguard_base.jsonl import read_jsonl

C_R = 2.0


def utility(delivered: bool, right: bool, item: DatasetItem) -> float:
    """The response utility of delivering (or not) an answer that is ``right`` or not."""
    if delivered:
        return 1.0 if right else -float(item.cost or 0.0)
    return -C_R if item.answerable else 1.0


def _ask(client: httpx.Client, question: str, system: bool) -> httpx.Response:
    messages = [{"role": "user", "content": question}]
    if system:
        messages.insert(0, {"role": "system", "content": REFUSAL_HINT})
    r = client.post("/v1/chat/completions", json={
        "model": "smollm2-135m-instruct", "max_tokens": 256, "temperature": 0,
        "messages": messages})
    r.raise_for_status()
    return r


def label(url: str, n: int, seed: int) -> dict[str, Any]:
    items = random.Random(seed).sample(load_seed(), n)
    tot = {"guard": 0.0, "model": 0.0, "refuse": 0.0}
    answered = right_n = would = 0
    policy = None
    with httpx.Client(base_url=url, timeout=600) as c:
        for it in items:
            r = _ask(c, it.question, system=True)
            text = r.json()["choices"][0]["message"]["content"]
            g = grade({"question": it.question, "answerable": it.answerable,
                       "reference": it.reference, "answer_type": it.answer_type}, text)
            c.post("/v1/feedback", json={
                "request_id": r.headers["x-utilityguard-request-id"],
                "correct": bool(g.correct) if g.answered else None,
                "answerable": it.answerable, "cost": it.cost}).raise_for_status()
            right = bool(g.correct) and it.answerable
            take = r.headers["x-utilityguard-decision"] == "answer"
            policy = r.headers["x-utilityguard-policy"]
            answered += g.answered
            right_n += g.answered and right
            would += take
            tot["guard"] += utility(g.answered and take, right, it)
            tot["model"] += utility(g.answered, right, it)
            tot["refuse"] += utility(False, right, it)
    return {"n": n, "policy": policy, "answered_by_model": answered, "right": right_n,
            "guard_would_answer": would,
            **{f"mean_utility_{k}": round(v / n, 4) for k, v in tot.items()}}


def enforce(url: str, policy_dir: str, exclude: str) -> dict[str, Any]:
    used = set() if exclude == "none" else {r["query"] for r in read_rows(exclude, DECISIONS)}
    recs: Mapping[str, dict[str, Any]] = {r["id"]: r for r in read_jsonl(shipped_responses())}
    items = [it for it in load_seed() if it.question not in used]
    guard = Guard.from_policy(policy_dir)
    tot = {"served": 0.0, "model": 0.0, "refuse": 0.0}
    same = delivered = 0
    policy = None
    with httpx.Client(base_url=url, timeout=60) as c:
        for it in items:
            rec = recs[it.id]
            r = _ask(c, it.question, system=False)
            local = guard.decide(it.question, rec["response"],
                                 confidence={"logprob_mean": rec["confidence"]["logprob_mean"]})
            served = r.headers["x-utilityguard-decision"]
            policy = r.headers["x-utilityguard-policy"]
            same += served == local.decision and policy == local.policy
            delivered += served == "answer"
            right = bool(rec["correct"]) and it.answerable
            tot["served"] += utility(bool(rec["answered"]) and served == "answer", right, it)
            tot["model"] += utility(bool(rec["answered"]), right, it)
            tot["refuse"] += utility(False, right, it)
    n = len(items)
    return {"n": n, "policy": policy, "proxy_equals_Guard.from_policy": f"{same}/{n}",
            "delivered": delivered, **{f"mean_utility_{k}": round(v / n, 4)
                                       for k, v in tot.items()}}


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "label":
        print(json.dumps(label(argv[1], int(argv[2]), int(argv[3]))))
        return 0
    if len(argv) == 4 and argv[0] == "enforce":
        print(json.dumps(enforce(argv[1], argv[2], argv[3])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
