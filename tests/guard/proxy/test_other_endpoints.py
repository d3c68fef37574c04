"""/v1/embeddings is passed through unchanged; /v1/completions is not served (it would
deliver unguarded answers) and says so in the OpenAI envelope (/v1/responses is guarded:
test_responses.py)."""

from __future__ import annotations

from typing import Any

import openai
import pytest


def test_embeddings_pass_through(client: openai.OpenAI, fake: Any) -> None:
    result = client.embeddings.create(model="fake-embed", input="hello", encoding_format="float")
    assert result.data[0].embedding == [0.25, -0.5, 1.0]
    assert result.model == "fake-embed"
    sent = fake.requests[-1]
    assert sent["path"] == "/v1/embeddings"
    assert sent["body"] == {"model": "fake-embed", "input": "hello", "encoding_format": "float"}


@pytest.mark.parametrize("call", [
    pytest.param(lambda c: c.completions.create(model="m", prompt="Max dose?"), id="completions"),
])
def test_unguarded_endpoints_are_refused(client: openai.OpenAI, fake: Any, call: Any) -> None:
    before = len(fake.requests)
    with pytest.raises(openai.BadRequestError) as info:
        call(client)
    assert info.value.body["code"] == "endpoint_not_guarded"  # type: ignore[index]
    assert "guards /v1/chat/completions and /v1/responses only" in info.value.message
    assert len(fake.requests) == before  # nothing reached the upstream
