"""What the client of ``/v1/chat/completions`` receives once the guard has decided: the
refusal (an allow-list), or the reply with what the guard added removed and every further
choice (``n > 1``) judged by itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from guard.completion import choice_answer
from guard.core import Guard
from guard.decision_records import DecisionRecord
from guard.proxy.request import ChatPlan
from guard.refusal_substitution import refused_choice, refused_completion

#: The response header listing the choices (``n > 1``) the guard refused although choice 0
#: answers.
REFUSED_CHOICES_HEADER = "x-utilityguard-refused-choices"

def deliver(reply: Mapping[str, Any], record: DecisionRecord, guard: Guard, plan: ChatPlan,
            refused_choices: Mapping[int, str] | None = None) -> tuple[dict[str, Any], bool]:
    """The completion the client receives, and whether its text differs from the upstream's.

    A refusal delivered in enforce mode (the guard's, or the model's own) is built by
    :func:`guard.refusal_substitution.refused_completion` from an allow-list: the refusal text in
    every
    choice, finish ``"stop"``, and nothing else of the reply (no tool calls, logprobs,
    reasoning, audio). Otherwise each content is cleaned (the verbal confidence line removed),
    logprobs the client did not ask for are dropped, and each choice in ``refused_choices``
    (position -> refusal text, :meth:`guard.Guard.refused_choices`) is replaced by an allow-listed
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
            choices.append(refused_choice(index if isinstance(index, int) else k,
                                          refused_choices[k]))
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
