"""P(True) (Kadavath et al. 2022, "Language Models (Mostly) Know What They Know").

One extra call shows the model the question and the proposed answer (the reply it gave) and
asks whether the answer is correct; P(True) is read from the top log-probabilities of the
first token of that verdict: the probability mass of the tokens meaning *True* over that of
the tokens meaning *True* or *False* (case, spaces and punctuation ignored). When neither
appears among the top tokens there is no signal (``None``), never a guess.

Two prompt forms, one wording: :func:`ptrue_messages` for chat models (``/chat/completions``)
and :func:`ptrue_prompt` for base models (``/completions``); both ask for one token with
:data:`PTRUE_TOP` top log-probabilities at temperature 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: top log-probabilities asked for the verdict's first token
PTRUE_TOP = 20
#: how much of the question and the proposed answer is shown (characters, each)
MAX_SHOWN = 2000
PTRUE_INSTRUCTION = ("You check answers. Reply with one word: True if the proposed answer "
                     "is correct, False if it is not.")
_TRUE = frozenset({"true", "yes"})
_FALSE = frozenset({"false", "no"})


def _shown(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + " ..."


def ptrue_question(question: str, answer: str) -> str:
    """The question shown to the model: the item, the proposed answer, the True/False ask.

    >>> print(ptrue_question("2+2?", "4"))
    Question: 2+2?
    Proposed answer: 4
    Is the proposed answer correct? Answer True or False.
    """
    return (f"Question: {_shown(question)}\nProposed answer: {_shown(answer)}\n"
            "Is the proposed answer correct? Answer True or False.")


def ptrue_messages(question: str, answer: str) -> list[dict[str, str]]:
    """Chat messages of the P(True) call (system instruction, then the question)."""
    return [{"role": "system", "content": PTRUE_INSTRUCTION},
            {"role": "user", "content": ptrue_question(question, answer)}]


def ptrue_prompt(question: str, answer: str) -> str:
    """Text prompt of the P(True) call for base models; the next token is the verdict.

    >>> ptrue_prompt("2+2?", "4").endswith("True or False.\\nAnswer:")
    True
    """
    return f"{PTRUE_INSTRUCTION}\n\n{ptrue_question(question, answer)}\nAnswer:"


def ptrue_request(question: str, answer: str, *, style: str = "chat") -> dict[str, Any]:
    """The request-body keys of the P(True) call (the caller adds ``model``).

    >>> sorted(ptrue_request("q", "a"))
    ['logprobs', 'max_tokens', 'messages', 'temperature', 'top_logprobs']
    >>> ptrue_request("q", "a", style="completion")["logprobs"]
    20
    """
    if style == "completion":
        return {"prompt": ptrue_prompt(question, answer), "max_tokens": 1, "temperature": 0.0,
                "logprobs": PTRUE_TOP}
    if style != "chat":
        raise ValueError(f"unknown prompt style {style!r}; allowed: chat, completion")
    return {"messages": ptrue_messages(question, answer), "max_tokens": 1, "temperature": 0.0,
            "logprobs": True, "top_logprobs": PTRUE_TOP}


def first_token_top(logprobs: Any) -> dict[str, float] | None:
    """``{token: logprob}`` of the first generated token's top alternatives, from a chat
    (``content[0].top_logprobs``) or legacy completion (``top_logprobs[0]``) logprobs object.

    >>> first_token_top({"content": [{"token": "True", "logprob": -0.1,
    ...     "top_logprobs": [{"token": "True", "logprob": -0.1},
    ...                      {"token": "False", "logprob": -2.4}]}]})
    {'True': -0.1, 'False': -2.4}
    >>> first_token_top({"top_logprobs": [{" True": -0.5, " False": -1.0}]})
    {' True': -0.5, ' False': -1.0}
    >>> first_token_top(None) is None, first_token_top({"content": []}) is None
    (True, True)
    """
    if hasattr(logprobs, "model_dump"):
        logprobs = logprobs.model_dump()
    if not isinstance(logprobs, Mapping):
        return None
    out: dict[str, float] = {}
    content = logprobs.get("content")
    legacy = logprobs.get("top_logprobs")
    if isinstance(content, Sequence) and content and isinstance(content[0], Mapping):
        for alt in content[0].get("top_logprobs") or [content[0]]:
            if isinstance(alt, Mapping) and isinstance(alt.get("token"), str):
                _put(out, alt["token"], alt.get("logprob"))
    elif isinstance(legacy, Sequence) and legacy and isinstance(legacy[0], Mapping):
        for tok, lp in legacy[0].items():
            if isinstance(tok, str):
                _put(out, tok, lp)
    return out or None


def _put(out: dict[str, float], token: str, lp: Any) -> None:
    if isinstance(lp, (int, float)) and not isinstance(lp, bool) and math.isfinite(lp):
        out.setdefault(token, float(min(lp, 0.0)))


def _word(token: str) -> str:
    return "".join(ch for ch in token.lower() if ch.isalpha())


def ptrue_from_top(top: Mapping[str, float] | None) -> float | None:
    """P(True) from the first token's top log-probabilities: mass(True) / mass(True or False).

    >>> round(ptrue_from_top({" True": math.log(0.6), " False": math.log(0.2), "X": -1}), 3)
    0.75
    >>> ptrue_from_top({"True": -0.1}), ptrue_from_top({"Maybe": -0.1})
    (1.0, None)
    """
    if not top:
        return None
    t = f = 0.0
    for tok, lp in top.items():
        w = _word(tok)
        if w in _TRUE:
            t += math.exp(lp)
        elif w in _FALSE:
            f += math.exp(lp)
    if t + f <= 0.0:
        return None
    return t / (t + f)


def ptrue_from_reply(reply: Mapping[str, Any]) -> tuple[float | None, dict[str, float] | None]:
    """``(P(True), top)`` read from the P(True) call's reply (chat or completion)."""
    choices = reply.get("choices")
    if not isinstance(choices, Sequence) or not choices or not isinstance(choices[0], Mapping):
        return None, None
    top = first_token_top(choices[0].get("logprobs"))
    return ptrue_from_top(top), top


#: Where the proxy puts the P(True) it asked for into the reply it reads confidence from (a
#: key of that internal view only; the client never sees it).
PTRUE_KEY = "utilityguard_ptrue"


class PTrueExtractor:
    """P(True) for a reply: the proxy makes the extra call (:func:`ptrue_request`) and puts
    the value under :data:`PTRUE_KEY` of the reply it decides on; this reads it.

    >>> PTrueExtractor().extract({"choices": [], PTRUE_KEY: 0.7}).ptrue
    0.7
    >>> PTrueExtractor().extract({"choices": []}).is_empty, PTrueExtractor().extract("x").is_empty
    (True, True)
    """

    name = "ptrue"
    signals: tuple[str, ...] = ("ptrue",)

    def request_overrides(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def extract(self, completion: Any) -> Any:
        from guard.decision_records import Confidence

        v = completion.get(PTRUE_KEY) if isinstance(completion, Mapping) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 1.0:
            return Confidence(ptrue=float(v))
        return Confidence()

    def clean(self, text: str) -> str:
        return text
