"""The adversarial rewrites of ``test_adversarial_pricing`` against the shipped ``default``
policy, which maps its price by a cost scale (issue 21): a strictly increasing map must not
let any rewrite through that the plain question does not get through.

Real servers on 127.0.0.1, the official ``openai`` client, the same low-confidence upstream;
here the proxy decides with ``--policy default`` (its cost model, cost scale, calibrator and
answerability model), not the bare rule.
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from guard.policy import load_policy
from tests.guard.proxy.conftest import Served
from tests.guard.proxy.test_adversarial_pricing import (
    CHAT_REWRITES,
    COSTLY,
    REFUSAL,
    RESPONSES_REWRITES,
    LowConfidenceUpstream,
    _chat,
)


@pytest.fixture(scope="module")
def default_client() -> Iterator[openai.OpenAI]:
    from guard.proxy import create_app
    from tests.guard.proxy.conftest import openai_client, proxy_settings

    upstream = Served(LowConfidenceUpstream().app())
    proxy = Served(create_app(proxy_settings(upstream.url, read_timeout=30.0,
                                             policy="default")))
    client = openai_client(proxy)
    yield client
    client.close()
    proxy.stop()
    upstream.stop()


def test_the_default_policy_scales_its_price() -> None:
    assert load_policy("default").cost_scale is not None


@pytest.mark.parametrize("question", COSTLY)
def test_plain_and_every_rewrite_are_refused(default_client: openai.OpenAI,
                                             question: str) -> None:
    raw = _chat(default_client, [{"role": "user", "content": question}])
    assert raw.headers["x-utilityguard-decision"] == "refuse"
    assert raw.headers["x-utilityguard-policy"].startswith("default@")
    for name, rewrite in sorted(CHAT_REWRITES.items()):
        raw = _chat(default_client, rewrite(question))
        assert raw.headers["x-utilityguard-decision"] == "refuse", name
        assert raw.parse().choices[0].message.content == REFUSAL, name
    for name, kwargs in sorted(RESPONSES_REWRITES.items()):
        resp = default_client.responses.with_raw_response.create(model="m", **kwargs(question))
        assert resp.headers["x-utilityguard-decision"] == "refuse", name
        assert resp.parse().output_text == REFUSAL, name
