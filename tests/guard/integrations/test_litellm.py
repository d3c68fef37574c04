"""The LiteLLM guardrail in a real LiteLLM proxy process, in front of the fake upstream.

The proxy (``litellm --config config.yaml``) runs on 127.0.0.1 with the config the README
shows: the one-line shim file next to config.yaml, ``mode: [pre_call, post_call]``, the guard
configured by ``UTILITYGUARD_*`` variables and the shipped cost model. The fake upstream's
``sure`` / ``unsure`` keywords set p = 0.99 / 0.135; an acetaminophen dose is expensive to get
wrong (the shipped model prices it far above C_R = 2: threshold above 0.9), the capital of
France is cheap (threshold below 0: any p answers).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from guard.refusal_detection import DEFAULT_REFUSAL_TEXT

DOSE = "What is the maximum daily dose of acetaminophen for an adult?"
FRANCE = "What is the capital of France?"
README_URL = "http://127.0.0.1:8080/v1"  # the upstream in the docs' config


@pytest.fixture(scope="module")
def litellm_proxy(upstream: tuple[Any, Any], start_process: Any, readme: Any) -> Any:
    # the files exactly as docs/integrations.md shows them, the upstream URL replaced by the fake's
    (shim,) = readme("## LiteLLM proxy", "python", "docs/integrations.md")
    (config,) = readme("## LiteLLM proxy", "yaml", "docs/integrations.md")
    assert README_URL in config
    litellm = str(Path(sys.executable).with_name("litellm"))
    # the bare rule (the tests check its arithmetic), not the shipped default policy
    env = {"UTILITYGUARD_C_R": "2", "UTILITYGUARD_CONFIDENCE": "logprobs",
           "UTILITYGUARD_POLICY": "none",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    files = {"config.yaml": config.replace(README_URL, upstream[1].url + "/v1"),
             "utilityguard_guardrail.py": shim}
    return start_process([litellm, "--config", "config.yaml", "--host", "127.0.0.1",
                          "--port", "{port}"], env, files, "/health/liveliness")


@pytest.fixture(scope="module")
def client(litellm_proxy: Any) -> Iterator[openai.OpenAI]:
    c = openai.OpenAI(base_url=litellm_proxy.url + "/v1", api_key="sk-anything",
                      max_retries=0, timeout=60.0)
    yield c
    c.close()


def ask(question: str, **kwargs: Any) -> dict[str, Any]:
    return {"model": "smollm2", "messages": [{"role": "user", "content": question}],
            **kwargs}


@pytest.mark.parametrize(("question", "decision"), [
    pytest.param(f"{DOSE} unsure", "refuse", id="expensive-unsure-refused"),
    pytest.param(f"{DOSE} sure", "answer", id="expensive-sure-answered"),
    pytest.param(f"unsure {FRANCE}", "answer", id="cheap-unsure-answered"),
])
def test_non_streaming_decision(client: openai.OpenAI, answer: str, question: str,
                                decision: str) -> None:
    raw = client.chat.completions.with_raw_response.create(**ask(question))
    completion = raw.parse()
    assert raw.headers["x-utilityguard-decision"] == decision
    body = completion.utilityguard  # type: ignore[attr-defined]  # the decision object
    assert body["decision"] == decision
    assert body["request_id"] == raw.headers["x-utilityguard-request-id"]
    expected = DEFAULT_REFUSAL_TEXT if decision == "refuse" else answer
    assert completion.choices[0].message.content == expected
    # the guard asked for logprobs (pre_call); the client did not, so it gets none
    assert completion.choices[0].logprobs is None


def test_pre_call_asks_upstream_for_logprobs(client: openai.OpenAI,
                                             upstream: tuple[Any, Any]) -> None:
    fake = upstream[0]
    before = len(fake.requests)
    client.chat.completions.create(**ask(f"{FRANCE} sure"))
    sent = [r for r in fake.requests[before:] if r["path"] == "/v1/chat/completions"]
    assert sent and sent[-1]["body"].get("logprobs") is True


def test_client_logprobs_kept_on_answer(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(**ask(f"{FRANCE} sure", logprobs=True))
    lp = completion.choices[0].logprobs
    assert lp is not None and lp.content and lp.content[0].logprob == pytest.approx(-0.01)


@pytest.mark.parametrize(("question", "refused"), [
    pytest.param(f"{DOSE} unsure", True, id="refused"),
    pytest.param(f"unsure {FRANCE}", False, id="answered"),
])
def test_streaming(client: openai.OpenAI, answer: str, question: str, refused: bool) -> None:
    chunks = list(client.chat.completions.create(**ask(question, stream=True)))
    parts = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    text = "".join(parts)
    assert text == (DEFAULT_REFUSAL_TEXT if refused else answer)
    if refused:
        assert "42" not in text
    # the decision rides on the stream's last chunk, refused or not (it used to be missing)
    carrying = [i for i, c in enumerate(chunks) if (c.model_extra or {}).get("utilityguard")]
    assert carrying == [len(chunks) - 1], carrying
    decision = chunks[-1].model_extra["utilityguard"]  # type: ignore[index]
    assert decision["decision"] == ("refuse" if refused else "answer")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_refused_tool_call_is_dropped(client: openai.OpenAI, stream: bool) -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}}}}]
    request = ask(f"tool: {DOSE} unsure", tools=tools, stream=stream)
    if stream:
        chunks = list(client.chat.completions.create(**request))
        deltas = [c.choices[0].delta for c in chunks if c.choices]
        assert "".join(d.content or "" for d in deltas) == DEFAULT_REFUSAL_TEXT
        assert not any(d.tool_calls for d in deltas)
    else:
        message = client.chat.completions.create(**request).choices[0].message
        assert message.content == DEFAULT_REFUSAL_TEXT
        assert not message.tool_calls
