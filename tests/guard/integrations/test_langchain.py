"""GuardedChatModel around langchain-openai's ChatOpenAI, in front of the fake upstream.

The fake cost model prices ``dose`` at L = 20 (threshold (20 - 2) / 21 = 0.857 at C_R = 2)
and ``cheap`` at L = 0.5 (threshold below 0: any p answers); the fake upstream's ``sure`` /
``unsure`` keywords give p = 0.99 / 0.135.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI

from guard import Guard, VerbalExtractor
from guard.integrations.langchain import GuardedChatModel
from guard.refusal_detection import DEFAULT_REFUSAL_TEXT


@pytest.fixture
def llm(upstream: tuple[Any, Any]) -> ChatOpenAI:
    return ChatOpenAI(model="fake-model", base_url=upstream[1].url + "/v1",
                      api_key="sk-test", max_retries=0, timeout=10.0)  # type: ignore[arg-type]


@pytest.fixture
def guarded(llm: ChatOpenAI, keyword_cost_model: Any) -> GuardedChatModel:
    return GuardedChatModel(llm, Guard(keyword_cost_model, c_r=2.0, policy=None))


def test_refused_reply_is_the_refusal_only(guarded: GuardedChatModel) -> None:
    reply = guarded.invoke("What dose is safe? unsure")
    assert isinstance(reply, AIMessage)
    assert reply.content == DEFAULT_REFUSAL_TEXT
    decision = reply.response_metadata["utilityguard"]
    assert decision["decision"] == "refuse"
    assert decision["cost"] == 20.0
    assert decision["threshold"] == pytest.approx(18 / 21)
    assert decision["confidence"] == pytest.approx(0.135, abs=1e-3)
    assert set(reply.response_metadata) == {"utilityguard"}
    assert not reply.tool_calls and not reply.additional_kwargs


def test_answer_is_the_models_message(guarded: GuardedChatModel, answer: str,
                                      upstream: tuple[Any, Any]) -> None:
    before = len(upstream[0].requests)
    reply = guarded.invoke("What dose is safe? sure")
    assert reply.content == answer
    assert reply.response_metadata["utilityguard"]["decision"] == "answer"
    assert "logprobs" not in reply.response_metadata  # asked by the guard, not by the model
    sent = upstream[0].requests[before]["body"]
    assert sent["logprobs"] is True and sent["model"] == "fake-model"


def test_model_configured_for_logprobs_keeps_them(upstream: tuple[Any, Any],
                                                  keyword_cost_model: Any) -> None:
    llm = ChatOpenAI(model="fake-model", base_url=upstream[1].url + "/v1", api_key="sk-test",
                     max_retries=0, logprobs=True)  # type: ignore[arg-type]
    bare = Guard(keyword_cost_model, policy=None)
    reply = GuardedChatModel(llm, bare).invoke("cheap question sure")
    assert reply.response_metadata["logprobs"]["content"][0]["logprob"] == pytest.approx(-0.01)


def test_in_a_chain_and_streamed(guarded: GuardedChatModel, answer: str) -> None:
    chain = ChatPromptTemplate.from_messages([("user", "{q}")]) | guarded | StrOutputParser()
    assert chain.invoke({"q": "a cheap question, unsure"}) == answer
    assert chain.invoke({"q": "What dose? unsure"}) == DEFAULT_REFUSAL_TEXT
    chunks = list(guarded.stream("What dose? unsure"))
    assert [c.content for c in chunks] == [DEFAULT_REFUSAL_TEXT]


def test_ainvoke(upstream: tuple[Any, Any], keyword_cost_model: Any, answer: str) -> None:
    async def ask_both() -> list[Any]:
        # its own HTTP client, closed in this event loop (the default one is shared)
        async with httpx.AsyncClient() as http:
            llm = ChatOpenAI(model="fake-model", base_url=upstream[1].url + "/v1",
                             api_key="sk-test", max_retries=0,  # type: ignore[arg-type]
                             http_async_client=http)
            guarded = GuardedChatModel(llm, Guard(keyword_cost_model, policy=None))
            return [await guarded.ainvoke([("user", q)])
                    for q in ("What dose? unsure", "cheap, unsure")]

    refused, answered = asyncio.run(ask_both())
    assert refused.content == DEFAULT_REFUSAL_TEXT
    assert refused.response_metadata["utilityguard"]["decision"] == "refuse"
    assert answered.content == answer


def test_verbal_confidence_is_asked_for_and_removed(llm: ChatOpenAI, answer: str,
                                                    keyword_cost_model: Any,
                                                    upstream: tuple[Any, Any]) -> None:
    guard = Guard(keyword_cost_model, extractors=[VerbalExtractor()], policy=None)
    before = len(upstream[0].requests)
    reply = GuardedChatModel(llm, guard).invoke("What dose? sure")
    assert reply.content == answer  # "Confidence: 95%" was read and removed
    decision = reply.response_metadata["utilityguard"]
    assert decision["decision"] == "answer" and decision["confidence"] == pytest.approx(0.95)
    system = upstream[0].requests[before]["body"]["messages"][0]
    assert system["role"] == "system" and "Confidence" in system["content"]


def test_tool_call_refused_drops_the_call(upstream: tuple[Any, Any],
                                          keyword_cost_model: Any) -> None:
    llm = ChatOpenAI(model="fake-model", base_url=upstream[1].url + "/v1", api_key="sk-test",
                     max_retries=0)  # type: ignore[arg-type]
    bare = Guard(keyword_cost_model, policy=None)
    reply = GuardedChatModel(llm, bare).invoke("tool: dose? unsure")
    assert reply.content == DEFAULT_REFUSAL_TEXT
    assert not reply.tool_calls and not reply.additional_kwargs


def test_readme_snippet_works_as_written(readme: Any, upstream: tuple[Any, Any], answer: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (snippet,) = readme("## LangChain", "python", "docs/integrations.md")
    readme_url = "http://127.0.0.1:8080/v1"
    assert readme_url in snippet
    namespace: dict[str, Any] = {}
    exec(compile(snippet.replace(readme_url, upstream[1].url + "/v1"), "README", "exec"),
         namespace)
    content, decision, chained = capsys.readouterr().out.splitlines()
    # the snippet's Guard(c_r=2.0) is the shipped default policy, which asks for a stated
    # confidence too: the fake upstream answers with token logprobs of -0.1 and, asked in the
    # guard's words, "Confidence: 95%" (capital of France: any p answers)
    expected = Guard(c_r=2.0).decide(
        "What is the maximum daily dose of acetaminophen for an adult?", answer,
        confidence={"logprob_mean": -0.1, "logprob_low10": -0.1, "verbal": 0.95}).decision
    assert decision == expected
    assert content == (answer if expected == "answer" else DEFAULT_REFUSAL_TEXT)
    assert chained == answer


def test_a_reply_opening_like_a_refusal_never_overrides_a_refusal(
        guarded: GuardedChatModel) -> None:
    """The model says "I cannot answer that question." (``self-refuse``) at p = 0.135 on a
    dose (threshold 0.857): the guard's refusal is delivered, not the model's words."""
    reply = guarded.invoke("What dose is safe? self-refuse unsure")
    assert reply.content == DEFAULT_REFUSAL_TEXT
    assert reply.response_metadata["utilityguard"]["decision"] == "refuse"
