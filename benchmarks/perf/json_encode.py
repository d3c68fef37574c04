"""Encoding the proxy's JSON bodies: ``python -m benchmarks.perf json_encode``.

In process, side by side in rounds (:func:`benchmarks.perf._common.median_times`), on bodies
the proxy sends: :func:`guard.proxy.json_body.dumps` (what the proxy uses), the standard
library's ``json.dumps`` (the reference) and ``orjson.dumps`` alone (the floor, when the
``fast-json`` extra is installed). Bodies:

* a chat completion with token logprobs (120 tokens, each with one alternative), as the
  upstream returns it: it holds ``null`` (``"bytes": null``, ``"refusal": null``), which
  sent every such body to the standard library before the fast path checked it instead;
* the same with one NaN among its logprobs (the fast path must give way: the standard
  library's ``NaN``);
* a 40-turn conversation of seed-set questions (the request the proxy sends upstream).

Reported: the median time of each, and ``json_body.dumps`` / ``json.dumps``.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from typing import Any

from benchmarks.perf._common import PerfResult, median_times
from guard.proxy import json_body

REPEATS = 300


def completion(tokens: int = 120, nan: bool = False) -> dict[str, Any]:
    """A chat completion with ``tokens`` logprobs; ``nan``: one of them NaN."""
    tokens_text = [f" w{i}" for i in range(tokens)]
    content: list[dict[str, Any]] = [
        {"token": t, "logprob": -0.05 * i, "bytes": None,
         "top_logprobs": [{"token": " a", "logprob": -1.5, "bytes": None}]}
        for i, t in enumerate(tokens_text)]
    if nan:
        content[tokens // 2]["logprob"] = float("nan")
    return {"id": "chatcmpl-perf", "object": "chat.completion", "created": 0,
            "model": "perf-model", "system_fingerprint": None,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "logprobs": {"content": content, "refusal": None},
                         "message": {"role": "assistant", "refusal": None,
                                     "content": "".join(tokens_text)}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": tokens,
                      "total_tokens": 12 + tokens}}


def conversation(turns: int = 40) -> dict[str, Any]:
    from cost_models.datasets import load_seed

    questions = [it.question for it in load_seed()[:turns]]
    return {"model": "perf-model", "logprobs": True, "top_logprobs": None,
            "messages": [{"role": "user" if k % 2 == 0 else "assistant", "content": q}
                         for k, q in enumerate(questions)]}


def run() -> list[PerfResult]:
    bodies = {"chat completion with logprobs": completion(),
              "the same, one logprob NaN": completion(nan=True),
              "40-turn conversation": conversation()}
    out = []
    for label, body in bodies.items():
        size = len(json.dumps(body)) / 1000
        funcs: dict[str, Any] = {"json_body": lambda b=body: json_body.dumps(b),
                                 "json": lambda b=body: json.dumps(b).encode()}
        if find_spec("orjson") is not None:
            import orjson

            funcs["orjson"] = lambda b=body: orjson.dumps(b)
        med = median_times(funcs, repeats=REPEATS, warmup=20)
        out.append(PerfResult(f"json_body.dumps, {label} ({size:.0f} kB)", med["json_body"],
                              "s", med["json"], med["json_body"] / med["json"],
                              "reported (reference: json.dumps)", True))
        if "orjson" in med:
            out.append(PerfResult(f"orjson.dumps alone, {label}", med["orjson"], "s",
                                  med["json"], med["orjson"] / med["json"],
                                  "reported (reference: json.dumps)", True))
    return out
