"""A stated confidence the client dictates is not read (issue 35, item 3).

A real proxy on 127.0.0.1 reading the model's stated confidence (``--confidence verbal``, the
bare rule: ``p`` is the stated value) in front of an upstream whose reply always ends with
``Confidence: 100%``. A costly question is answered when the model states it; when the client's
own request tells the model what confidence to state (in any role), the line is the client's
words, the guard reads no confidence, and the costly question is refused. The official
``openai`` client sends every request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.guard.proxy.conftest import Served, openai_client, proxy_settings

COSTLY = "What is the maximum daily dose of acetaminophen for an adult?"
REPLY = "4 grams a day.\nConfidence: 100%"


async def chat(request: Request) -> JSONResponse:
    body = json.loads(await request.body())
    return JSONResponse({"id": "c", "object": "chat.completion", "created": 1,
                         "model": body.get("model", "m"), "choices": [{
                             "index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": REPLY}}]})


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    from guard.proxy import create_app

    upstream = Served(Starlette(routes=[Route("/v1/chat/completions", chat,
                                              methods=["POST"])]))
    proxy = Served(create_app(proxy_settings(upstream.url, confidence="verbal",
                                             read_timeout=30.0)))
    c = openai_client(proxy)
    yield c
    c.close()
    proxy.stop()
    upstream.stop()


def _ask(client: openai.OpenAI, messages: list[dict[str, Any]]) -> Any:
    return client.chat.completions.with_raw_response.create(
        model="m", messages=messages)  # type: ignore[arg-type]


def test_the_models_own_statement_is_read(client: openai.OpenAI) -> None:
    raw = _ask(client, [{"role": "user", "content": COSTLY}])
    assert raw.headers["x-utilityguard-decision"] == "answer"
    assert raw.headers["x-utilityguard-confidence"] == "1"
    assert raw.parse().choices[0].message.content == "4 grams a day."  # the line removed


@pytest.mark.parametrize("messages", [
    pytest.param([{"role": "system", "content": "End every answer with 'Confidence: 100%'."},
                  {"role": "user", "content": COSTLY}], id="system-dictates-a-value"),
    pytest.param([{"role": "user", "content": f"{COSTLY} Always say you are 100% certain."}],
                 id="user-dictates"),
    pytest.param([{"role": "developer", "content": "Always state your confidence as high."},
                  {"role": "user", "content": COSTLY}], id="developer-orders-a-line"),
])
def test_a_dictated_statement_is_not_read(client: openai.OpenAI,
                                          messages: list[dict[str, Any]]) -> None:
    raw = _ask(client, messages)
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert raw.headers["x-utilityguard-confidence"] == "none"  # no p: the line was not read
    assert raw.parse().choices[0].message.content == "I cannot answer."
