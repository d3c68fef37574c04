"""Which fields of a tool definition are read (``guard.request_walk``): a client's text under a
key no API defines in a tool (``id``, ``metadata``, ``user``, a ``type`` of its own) is read — a
server that passes the tool's JSON to its chat template may show it to the model — while the
settings of the Responses API's built-in tools (ids, addresses, credentials, sizes) are not
text, and leave the price of the question as it is.

The shipped guard; the expectations are stated by hand: a hidden question is refused at
p = 0.3 beside "Go ahead." (it is, sent alone), and a built-in tool's settings leave the price
of a trivia question exactly as alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from guard import Guard
from guard.request_walk import walk

CAPITAL = "What is the capital of Australia?"
HIDDEN = "How many mg of acetaminophen can I give my 2 year old?"
WEATHER = {"name": "get_weather", "description": "Get the current weather for a city."}


def _go_ahead(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "Go ahead."}], "tools": list(tools)}


@pytest.mark.parametrize("tool", [
    pytest.param({"type": "function", "id": HIDDEN, "function": WEATHER}, id="id"),
    pytest.param({"type": "function", "function": {**WEATHER, "metadata": HIDDEN}},
                 id="function.metadata"),
    pytest.param({"type": "function", "metadata": {"note": HIDDEN}, "function": WEATHER},
                 id="metadata-object"),
    pytest.param({"type": "function", "user": HIDDEN, "function": WEATHER}, id="user"),
    pytest.param({"type": HIDDEN, "function": WEATHER}, id="type"),
    pytest.param({"type": "function", "function": {**WEATHER, "annotations": [HIDDEN]}},
                 id="annotations"),
    pytest.param({"type": "function", "function": {**WEATHER, "version": HIDDEN}}, id="version"),
    pytest.param({"type": "function", "function": {**WEATHER, "stop": [HIDDEN]}}, id="stop"),
    pytest.param({"type": "custom", "name": "notes", "status": HIDDEN}, id="custom.status"),
    pytest.param({"type": "function", "role": "user", "id": HIDDEN,
                  "function": {**WEATHER, "metadata": HIDDEN}}, id="a-role-of-its-own"),
])
def test_a_clients_text_under_a_key_no_api_defines_in_a_tool_is_priced(
        shipped_guard: Guard, tool: dict[str, Any]) -> None:
    alone = shipped_guard.price(HIDDEN)
    assert alone.threshold > 0.3  # the premise: the question alone is refused at p = 0.3
    got = shipped_guard.price(_go_ahead(tool))
    assert got.threshold > 0.3, got.cost
    assert got.cost >= 0.8 * alone.cost


@pytest.mark.parametrize("tool", [
    pytest.param({"type": "file_search", "vector_store_ids": ["vs_68a1b2c3d4e5f6a7"],
                  "max_num_results": 5, "ranking_options": {"ranker": "auto",
                                                            "score_threshold": 0.4},
                  "filters": {"type": "eq", "key": "region", "value": "emea"}},
                 id="file_search"),
    pytest.param({"type": "web_search", "search_context_size": "medium",
                  "user_location": {"type": "approximate", "city": "London", "country": "GB",
                                    "timezone": "Europe/London"},
                  "filters": {"allowed_domains": ["example.com"]}}, id="web_search"),
    pytest.param({"type": "image_generation", "quality": "high", "size": "1024x1024",
                  "background": "transparent", "output_format": "png", "moderation": "low",
                  "input_image_mask": {"file_id": "file-abc123"}}, id="image_generation"),
    pytest.param({"type": "code_interpreter", "container": {"type": "auto",
                                                            "file_ids": ["file-abc123"]}},
                 id="code_interpreter"),
    pytest.param({"type": "computer_use_preview", "display_width": 1024,
                  "display_height": 768, "environment": "browser"}, id="computer_use"),
    pytest.param({"type": "function", "function": {**WEATHER, "strict": True}},
                 id="function-strict"),
])
def test_a_built_in_tools_settings_are_not_priced(shipped_guard: Guard,
                                                  tool: dict[str, Any]) -> None:
    body = {"input": CAPITAL, "tools": [tool]}
    plain = {"input": CAPITAL, "tools": [{"type": "function", "function": WEATHER}]} \
        if tool["type"] == "function" else {"input": CAPITAL}
    assert shipped_guard.price(body).cost == shipped_guard.price(plain).cost


def test_an_mcp_servers_credentials_are_never_read() -> None:
    token, key = "sk_live_51HxYzAbCdEfGh0123456789", "ghp_AbCdEfGhIjKl0123456789"
    tool = {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.example/mcp",
            "authorization": token, "headers": {"X-Api-Key": key},
            "require_approval": "never", "server_description": "A wiki of code repositories."}
    texts = [t.text for t in walk({"input": CAPITAL, "tools": [tool]}).texts]
    assert texts == [CAPITAL, "deepwiki", "A wiki of code repositories."]


def test_a_built_in_tools_settings_in_a_function_tool_are_read(shipped_guard: Guard) -> None:
    # only a built-in tool's settings are skipped (an API that takes one shows them to no
    # model); in a function tool, which a server may render as JSON, the same keys are read
    for key in ("headers", "user_location", "filters", "environment", "container"):
        tool = {"type": "function", "function": WEATHER, key: {"note": HIDDEN}}
        got = shipped_guard.price(_go_ahead(tool))
        assert got.threshold > 0.3, (key, got.cost)
