"""What the client of ``/v1/chat/completions`` receives once the guard has decided: the
refusal (an allow-list), or the reply with what the guard added removed and every further
choice (``n > 1``) judged by itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.completion import choice_answer
from guard.core import Guard, Price
from guard.proxy.decided import decide_reply
from guard.proxy.request import ChatPlan, Overrides
from guard.records import DecisionRecord
from guard.refused import refused_completion, refused_message

#: The response header listing the choices (``n > 1``) the guard refused although choice 0
#: answers.
REFUSED_CHOICES_HEADER = "x-utilityguard-refused-choices"

def deliver(reply: Mapping[str, Any], record: DecisionRecord, guard: Guard, plan: ChatPlan,
            refused_choices: Mapping[int, str] | None = None) -> tuple[dict[str, Any], bool]:
    """The completion the client receives, and whether its text differs from the upstream's.

    A refusal delivered in enforce mode (the guard's, or the model's own) is built by
    :func:`guard.refused.refused_completion` from an allow-list: the refusal text in every
    choice, finish ``"stop"``, and nothing else of the reply (no tool calls, logprobs,
    reasoning, audio). Otherwise each content is cleaned (the verbal confidence line removed),
    logprobs the client did not ask for are dropped, and each choice in ``refused_choices``
    (position -> refusal text, see :func:`judge_choices`) is replaced by an allow-listed
    refused choice. Only the first ``client_n`` choices are kept.
    """
    refusal = guard.refusal_for(record, choice_answer(reply).content)
    if refusal is not None:
        refused = refused_completion(dict(reply), refusal)
        refused["choices"] = refused["choices"][: plan.client_n]
        return refused, True
    out = dict(reply)
    changed = False
    choices: list[Any] = []
    for k, ch in enumerate((reply.get("choices") or [])[: plan.client_n]):
        if refused_choices and k in refused_choices:
            index = ch.get("index") if isinstance(ch, dict) else None
            choices.append({"index": index if isinstance(index, int) else k,
                            "message": refused_message(refused_choices[k]), "logprobs": None,
                            "finish_reason": "stop"})
            changed = True
            continue
        ch = dict(ch)
        message = dict(ch["message"]) if isinstance(ch.get("message"), dict) else {}
        content = message.get("content")
        if isinstance(content, str):
            cleaned = guard.clean(content)
            changed |= cleaned != content
            message["content"] = cleaned
        if not plan.client_logprobs and ch.get("logprobs") is not None:
            ch["logprobs"] = None
        ch["message"] = message
        choices.append(ch)
    out["choices"] = choices
    return out, changed


def judge_choices(guard: Guard, reply: Mapping[str, Any], view: Mapping[str, Any],
                  record: DecisionRecord, *, query: str, overrides: Overrides, price: Price,
                  client_n: int) -> dict[int, str]:
    """The choices after the first (``n > 1``) that may not go out, by position, with the
    text of the refusal that replaces each: in enforce mode, each is decided on by itself
    (its own text and confidence; ``view`` with that choice first), as choice 0 is by
    ``record``; a choice that is not an object cannot be judged and is refused."""
    if record.mode != "enforce":
        return {}
    choices = list(reply.get("choices") or [])
    seen = list(view.get("choices") or [])
    out: dict[int, str] = {}
    for k in range(1, min(client_n, len(choices))):
        ch = choices[k]
        if not isinstance(ch, dict) or k >= len(seen):
            out[k] = guard.refusal_text
            continue
        alone = {**reply, "choices": [ch]}
        own = {**view, "choices": [seen[k], *seen[:k], *seen[k + 1:]]}
        decided = decide_reply(guard, alone, own, query=query, overrides=overrides,
                               price=price, request_id=record.request_id)
        refusal = guard.refusal_for(decided, choice_answer(alone).content)
        if refusal is not None:
            out[k] = refusal
    return out
