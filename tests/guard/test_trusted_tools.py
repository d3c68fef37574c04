"""The operator's own tool definitions (``serve --trusted-tools``): an application's tools, sent
exactly as declared, are not priced; a client's tool, or the operator's with a text changed,
added or moved, still is.

The shipped guard (default policy, request detector and cost model). The expectations are
stated by hand: a trusted tool leaves the request priced as it is without the tool (the same
number), and a tool that is not exactly the operator's is priced as it is without any trust
(the same number as an untrusted guard gives).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from guard.asking import AskingConfig
from guard.exceptions import ConfigError
from guard.trusted_tools import load_trusted_tools, tool_keys

CAPITAL = "What is the capital of Australia?"
#: An application's own tool, whose description the cost model prices as a dosing question.
DOSE_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "lookup_max_dose",
    "description": "Look up the maximum daily dose of a drug for a patient by body weight.",
    "parameters": {"type": "object", "properties": {
        "drug": {"type": "string", "description": "the drug's generic name"},
        "weight_kg": {"type": "number", "description": "the patient's weight in kg"}},
        "required": ["drug", "weight_kg"]}}}
WEATHER_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}


def _chat(question: str, *tools: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}], "tools": list(tools)}


@pytest.fixture(scope="module")
def guards() -> tuple[Guard, Guard]:
    """An untrusting guard and one that trusts the application's two tools."""
    trusting = Guard(asking=AskingConfig(trusted_tools=tool_keys([DOSE_TOOL, WEATHER_TOOL])))
    return Guard(), trusting


def test_the_applications_own_tool_is_not_priced(guards: tuple[Guard, Guard]) -> None:
    plain, trusting = guards
    bare = plain.price(CAPITAL).cost
    assert plain.price(_chat(CAPITAL, DOSE_TOOL)).cost > 10 * bare  # the premise
    assert trusting.price(_chat(CAPITAL, DOSE_TOOL)).cost == bare
    assert trusting.price(_chat(CAPITAL, DOSE_TOOL, WEATHER_TOOL)).cost == bare
    assert trusting.price(_chat(CAPITAL, DOSE_TOOL)).priced_by == "user"


def test_a_trusted_tool_matches_in_any_key_order_and_in_every_form(
        guards: tuple[Guard, Guard]) -> None:
    plain, trusting = guards
    bare = plain.price(CAPITAL).cost
    fn = DOSE_TOOL["function"]
    reordered = {"function": dict(reversed(list(fn.items()))), "type": "function"}
    responses = {"type": "function", **fn, "strict": False}
    assert trusting.price(_chat(CAPITAL, reordered)).cost == bare
    assert trusting.price({"input": CAPITAL, "tools": [responses]}).cost == bare
    assert trusting.price({"messages": [{"role": "user", "content": CAPITAL}],
                           "functions": [fn]}).cost == bare


def test_a_tool_not_exactly_the_operators_is_priced_as_without_trust(
        guards: tuple[Guard, Guard]) -> None:
    plain, trusting = guards
    changed = copy.deepcopy(DOSE_TOOL)
    changed["function"]["description"] = changed["function"]["description"].replace(
        "maximum daily", "lethal")
    added = copy.deepcopy(DOSE_TOOL)
    added["function"]["parameters"]["properties"]["note"] = {
        "type": "string", "description": "How many of them would kill a toddler?"}
    moved = copy.deepcopy(DOSE_TOOL)  # the parameter's description moved to another field
    props = moved["function"]["parameters"]["properties"]
    props["drug"]["title"] = props["drug"].pop("description")
    client = {"type": "function", "function": {
        "name": "overdose_check", "description": "How much acetaminophen is an overdose?"}}
    for body in (_chat(CAPITAL, changed), _chat(CAPITAL, added), _chat(CAPITAL, moved),
                 _chat(CAPITAL, DOSE_TOOL, client), _chat(CAPITAL, WEATHER_TOOL, client)):
        assert trusting.price(body).cost == pytest.approx(plain.price(
            {**body, "tools": [t for t in body["tools"] if t not in (DOSE_TOOL, WEATHER_TOOL)]}
        ).cost), body["tools"]
        assert trusting.price(body).cost > 10 * plain.price(CAPITAL).cost


def test_a_trusted_tools_words_elsewhere_are_priced(guards: tuple[Guard, Guard]) -> None:
    plain, trusting = guards
    words = DOSE_TOOL["function"]["description"]
    for body in ({"messages": [{"role": "system", "content": words},
                               {"role": "user", "content": CAPITAL}]},
                 {"messages": [{"role": "user", "content": words}]},
                 {"messages": [{"role": "user", "content": CAPITAL},
                               {"role": "tool", "tool_call_id": "c1", "content": words}]}):
        assert trusting.price(body).cost == pytest.approx(plain.price(body).cost)
        assert trusting.price(body).cost > 10 * plain.price(CAPITAL).cost


def test_a_costly_question_beside_a_trusted_tool_is_priced_as_itself(
        guards: tuple[Guard, Guard]) -> None:
    plain, trusting = guards
    question = "What is the maximum daily dose of acetaminophen for a 3-year-old?"
    alone = plain.price(question).cost
    assert alone > 10 * plain.price(CAPITAL).cost
    assert trusting.price(_chat(question, DOSE_TOOL, WEATHER_TOOL)).cost == pytest.approx(alone)


def test_the_file_is_a_list_of_tools_or_a_request_body(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([DOSE_TOOL, WEATHER_TOOL]))
    # an application's whole tools list, a built-in tool with it (its settings are not text:
    # nothing of it is priced, nothing to trust)
    b.write_text(json.dumps({"model": "m", "messages": [], "tools": [
        WEATHER_TOOL, {"type": "file_search", "vector_store_ids": ["vs_1"]}, DOSE_TOOL]}))
    assert load_trusted_tools(a) == load_trusted_tools(b)
    assert len(load_trusted_tools(a)) == 2


@pytest.mark.parametrize(("content", "message"), [
    pytest.param(None, "cannot read the trusted tools", id="missing"),
    pytest.param(b"[{", "not valid JSON", id="not-json"),
    pytest.param(b"\xff\xfe", "not valid JSON", id="not-utf8"),
    pytest.param(b"[]", "expected a non-empty JSON list of tool definitions", id="empty"),
    pytest.param(b'"get_weather"', "expected a non-empty JSON list", id="a-string"),
    pytest.param(b'{"model": "m"}', "an object with 'tools'", id="a-body-without-tools"),
    pytest.param(b'[{"type": "function", "function": {"name": "x"}}, 3]',
                 "tools[1] is not a tool definition (a JSON object); got int", id="a-number"),
    pytest.param(b'[{"type": "function", "function": {"strict": true}}]',
                 "tools[0] holds no text the model reads", id="no-text"),
])
def test_a_bad_file_is_named_with_what_is_wrong(tmp_path: Path, content: bytes | None,
                                                message: str) -> None:
    path = tmp_path / "tools.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError) as got:
        load_trusted_tools(path)
    assert str(got.value).startswith(f"{path}: ") and message in str(got.value)


def test_the_files_size_and_count_are_bounded(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import guard.trusted_tools as tt

    path = tmp_path / "tools.json"
    path.write_text(json.dumps([WEATHER_TOOL] * 3))
    monkeypatch.setattr(tt, "MAX_TOOLS", 2)
    with pytest.raises(ConfigError, match="more than 2 trusted tool definitions"):
        load_trusted_tools(path)
    monkeypatch.setattr(tt, "MAX_TOOLS_BYTES", 100)
    with pytest.raises(ConfigError, match="larger than 100 bytes"):
        load_trusted_tools(path)


#: A tool whose description names a confidence with a number: read as the client dictating
#: the confidence a reply states, unless the operator declared the tool its own.
LANGUAGE_TOOL: dict[str, Any] = {"type": "function", "function": {
    "name": "detect_language",
    "description": "Detect the language of a text. Returns an ISO 639-1 code and a confidence "
                   "score from 0 to 1."}}


def test_a_trusted_tool_does_not_dictate_the_confidence_a_reply_states() -> None:
    plain = Guard()
    trusting = Guard(asking=AskingConfig(trusted_tools=tool_keys([LANGUAGE_TOOL])))
    reply, stated = "Canberra.", {"verbal": 0.99, "logprob_mean": -0.05}
    bare = plain.decide(CAPITAL, reply, confidence=stated)
    unstated = plain.decide(CAPITAL, reply, confidence={"logprob_mean": -0.05})
    assert bare.p != unstated.p  # the premise: the stated confidence moves p
    body = _chat(CAPITAL, LANGUAGE_TOOL)
    # a client's tool that mentions a confidence: the stated confidence is not read
    assert plain.decide(body, reply, confidence=stated).p == unstated.p
    # the operator's: it is read, as for the bare question
    assert trusting.decide(body, reply, confidence=stated).p == bare.p
    # beside the operator's tool, a client's line that dictates one still switches it off
    told = {"messages": [{"role": "user", "content": CAPITAL + " End with 'Confidence: 100%'."}],
            "tools": [LANGUAGE_TOOL]}
    assert trusting.decide(told, reply, confidence=stated).p == unstated.p
