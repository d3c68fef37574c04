"""The decision in the body: the ``utilityguard`` object of a completion and of a stream's
last chunk, read by the three clients users have (openai, langchain-openai, litellm).

Fake costs and confidences (see conftest): ``dose`` costs L = 20, so at C_R = 2 the threshold
is (20 - 2) / 21 = 0.857; ``unsure`` gives p = exp(-2) = 0.135, ``sure`` p = exp(-0.01).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import httpx
import litellm
import openai
import pytest
from langchain_openai import ChatOpenAI

from guard.integrations.langchain import decision_of


def close_clients(namespace: dict[str, Any]) -> None:
    """Close the HTTP client a snippet opened (a user's script ends; a test session goes on;
    langchain-openai's default HTTP client is shared by every ChatOpenAI and stays open)."""
    if isinstance(namespace.get("client"), openai.OpenAI):
        namespace["client"].close()


@pytest.fixture
def litellm_sdk() -> Iterator[ModuleType]:
    """The litellm module; the OpenAI clients it caches are closed after the test (litellm
    keeps them for the life of the process)."""
    yield litellm
    cache = litellm.in_memory_llm_clients_cache
    for cached in list(cache.cache_dict.values()):
        if callable(getattr(cached, "close", None)) and not inspect.iscoroutinefunction(
                cached.close):
            cached.close()
    cache.flush_cache()
    # litellm's sync path calls asyncio.get_event_loop(), which makes and keeps a loop for
    # this thread: close it here rather than let it be collected during another test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # none (set to None by an earlier teardown)
            return
    loop.close()
    asyncio.set_event_loop(None)


REFUSED = {"decision": "refuse", "mode": "enforce", "cost": 20.0,
           "confidence": pytest.approx(math.exp(-2.0)), "threshold": pytest.approx(18 / 21),
           "alpha": 1.0, "policy": None}
FIELDS = {"decision", "mode", "cost", "confidence", "threshold", "alpha", "policy", "request_id"}


def test_openai_completion(client: openai.OpenAI, chat: Any) -> None:
    raw = client.chat.completions.with_raw_response.create(**chat("dose? unsure"))
    completion = raw.parse()
    decision = completion.utilityguard  # type: ignore[attr-defined]  # an extra field
    assert set(decision) == FIELDS
    assert decision == {**REFUSED, "request_id": raw.headers["x-utilityguard-request-id"]}
    answered = client.chat.completions.create(**chat("dose? sure"))
    assert answered.model_extra is not None
    assert answered.model_extra["utilityguard"]["decision"] == "answer"


@pytest.mark.parametrize("question, refused", [("dose? unsure", True), ("dose? sure", False)])
def test_openai_stream_last_chunk(client: openai.OpenAI, chat: Any, question: str,
                                  refused: bool) -> None:
    chunks = list(client.chat.completions.create(**chat(question, stream=True)))
    extras = [c.model_extra.get("utilityguard") if c.model_extra else None for c in chunks]
    assert all(e is None for e in extras[:-1])
    assert extras[-1]["decision"] == ("refuse" if refused else "answer")
    with_usage = list(client.chat.completions.create(**chat(
        question, stream=True, stream_options={"include_usage": True})))
    assert with_usage[-1].usage is not None and not with_usage[-1].choices
    assert with_usage[-1].model_extra["utilityguard"]["cost"] == 20.0  # type: ignore[index]


def test_off_with_a_setting(start_proxy: Any, make_client: Any, chat: Any) -> None:
    served = start_proxy(decision_headers_only=True)
    raw = make_client(served).chat.completions.with_raw_response.create(**chat("dose? unsure"))
    assert raw.headers["x-utilityguard-decision"] == "refuse"  # the headers stay
    assert "utilityguard" not in raw.http_response.json()
    stream = httpx.post(served.url + "/v1/chat/completions",
                        json=chat("dose? unsure", stream=True), timeout=10)
    assert stream.headers["x-utilityguard-decision"] == "refuse"
    assert "data: [DONE]" in stream.text and "utilityguard" not in stream.text


def test_the_body_names_the_policy_that_decided(start_proxy: Any, make_client: Any,
                                                chat: Any) -> None:
    """Under --policy the body's ``policy`` is the header's NAME@SHA8 (it was always null)."""
    served = start_proxy(policy="smollm2", c_r=2.0)
    raw = make_client(served).chat.completions.with_raw_response.create(**chat("dose? unsure"))
    label = raw.headers["x-utilityguard-policy"]
    assert label.startswith("smollm2@")
    assert raw.http_response.json()["utilityguard"]["policy"] == label
    stream = httpx.post(served.url + "/v1/chat/completions",
                        json=chat("dose? unsure", stream=True), timeout=10)
    assert f'"policy": "{label}"' in stream.text or f'"policy":"{label}"' in stream.text


def test_langchain_openai_reads_it(proxy: Any) -> None:
    llm = ChatOpenAI(model="fake-model", base_url=proxy.url + "/v1", api_key="sk-x",
                     max_retries=0, include_response_headers=True)  # type: ignore[arg-type]
    message = llm.invoke("dose? unsure")
    decision = decision_of(message)
    assert decision is not None
    assert {k: decision[k] for k in REFUSED} == {
        **REFUSED, "confidence": pytest.approx(math.exp(-2.0), abs=1e-6),
        "threshold": pytest.approx(18 / 21, abs=1e-6)}
    chunks = list(llm.stream("dose? unsure"))
    streamed = decision_of(chunks[0])  # a stream's first chunk has the headers
    assert streamed is not None and streamed["decision"] == "refuse"


def test_litellm_sdk_reads_it(proxy: Any, litellm_sdk: ModuleType) -> None:
    response = litellm_sdk.completion(model="openai/fake-model", api_base=proxy.url + "/v1",
                                  api_key="sk-x", messages=[{"role": "user",
                                                             "content": "dose? unsure"}])
    decision = response.utilityguard  # type: ignore[union-attr]
    assert {k: decision[k] for k in REFUSED} == REFUSED
    headers = response._hidden_params["additional_headers"]  # type: ignore[union-attr]
    assert headers["llm_provider-x-utilityguard-request-id"] == decision["request_id"]


@pytest.mark.parametrize("index", [pytest.param(0, id="openai"),
                                   pytest.param(1, id="langchain-openai"),
                                   pytest.param(2, id="litellm")])
def test_readme_snippets_work_as_written(readme: Any, proxy: Any, index: int,
                                         litellm_sdk: ModuleType,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # the openai client's in docs/proxy.md, langchain-openai's and litellm's in the
    # integrations page
    pages = [readme("## The decision", "python", "docs/proxy.md"),
             readme("## Reading the decision", "python", "docs/integrations.md")]
    snippet = [*pages[0], *pages[1]][index]
    url = "http://127.0.0.1:8787/v1"
    assert url in snippet
    namespace: dict[str, Any] = {}
    exec(compile(snippet.replace(url, proxy.url + "/v1"), "README", "exec"), namespace)
    close_clients(namespace)
    # the question names a dose (L = 20: threshold 18/21), the fake upstream's default
    # logprob -0.1 gives p = exp(-0.1) = 0.905 >= 0.857: answer
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "answer"
    if index == 0:
        assert float(lines[0].split()[1]) == pytest.approx(18 / 21)
        assert lines[1] == "answer"
    elif index == 1:
        assert float(lines[0].split()[1]) == pytest.approx(18 / 21, abs=1e-6)
    else:
        assert lines[0] == "answer answer"


def test_an_early_stream_read_by_langchain_openai_has_its_decision(proxy: Any) -> None:
    """A cheap question streams early (L <= C_R: every p answers), before the decision is
    known: no decision header, and langchain-openai drops the last chunk's object.
    ``decision_of(message, llm)`` reads it from the proxy by the request id."""
    llm = ChatOpenAI(model="fake-model", base_url=proxy.url + "/v1", api_key="sk-lc-1",
                     max_retries=0, include_response_headers=True)  # type: ignore[arg-type]
    chunks = list(llm.stream("a cheap question"))
    headers = chunks[0].response_metadata["headers"]
    assert headers["x-utilityguard-stream"] == "early"
    assert decision_of(chunks[0]) is None  # nothing in the message itself
    decision = decision_of(chunks[0], llm)
    assert decision is not None
    assert decision["request_id"] == headers["x-utilityguard-request-id"]
    assert decision["decision"] == "answer" and decision["cost"] == 0.5
    assert decision["threshold"] == pytest.approx((0.5 - 2.0) / 1.5)
    other = ChatOpenAI(model="fake-model", base_url=proxy.url + "/v1", api_key="sk-lc-2",
                       max_retries=0)  # type: ignore[arg-type]
    assert decision_of(chunks[0], other) is None  # another key: not shown


def test_litellm_sdk_stream_reads_its_decision_by_id(proxy: Any,
                                                     litellm_sdk: ModuleType) -> None:
    """The litellm SDK drops a stream's last-chunk object; the helper reads the decision by
    the request id header."""
    from guard.integrations.litellm import decision_of as litellm_decision_of

    base = proxy.url + "/v1"
    stream = litellm_sdk.completion(model="openai/fake-model", api_base=base, api_key="sk-ll",
                                    stream=True, messages=[{"role": "user",
                                                            "content": "dose? unsure"}])
    chunks = list(stream)
    assert chunks
    decision = litellm_decision_of(stream, api_base=base, api_key="sk-ll")
    assert decision is not None
    assert {k: decision[k] for k in REFUSED} == REFUSED
