"""Feedback that cannot be forged (issue 20, item 3), on a real proxy on 127.0.0.1.

A label is accepted only from the key that made the decision or a labeller key
(``--feedback-api-key``); another key gets the very answer an unknown id gets. Labels are
rate limited per key, ``cost`` labels lie within the cost scale, and ``fit --from-audit``
refuses a refit from hostile labels that answers high-cost reference questions its base
refuses, listing them (``--accept-drift`` writes it and prints them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from guard.cli import main

KEY_A, KEY_B, LABELLER = "sk-client-A-1111", "sk-client-B-2222", "sk-labeller-3333"


def _auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _ask(c: httpx.Client, key: str, question: str) -> str:
    r = c.post("/v1/chat/completions", headers=_auth(key), json={
        "model": "fake-model", "messages": [{"role": "user", "content": question}]})
    assert r.status_code == 200, r.text
    return r.headers["x-utilityguard-request-id"]


@pytest.fixture
def proxy_db(start_proxy: Callable[..., object], tmp_path: Path) -> tuple[str, Path]:
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db, audit_queries=True, api_keys=[KEY_A, KEY_B],
                         feedback_api_keys=[LABELLER], feedback_rate=5)
    return served.url, db  # type: ignore[attr-defined]


def test_another_keys_label_is_answered_as_an_unknown_id(proxy_db: tuple[str, Path]) -> None:
    url, _ = proxy_db
    with httpx.Client(base_url=url, timeout=10) as c:
        rid = _ask(c, KEY_A, "What is 6 x 7? sure")
        forged = c.post("/v1/feedback", headers=_auth(KEY_B),
                        json={"request_id": rid, "correct": True})
        unknown = c.post("/v1/feedback", headers=_auth(KEY_B),
                         json={"request_id": "f" * 32, "correct": True})
        assert forged.status_code == unknown.status_code == 404
        assert forged.json()["error"]["message"].replace(rid, "ID") == \
            unknown.json()["error"]["message"].replace("f" * 32, "ID")
        own = c.post("/v1/feedback", headers=_auth(KEY_A), json={"request_id": rid,
                                                                 "correct": True})
        assert own.status_code == 200, own.text
        named = c.post("/v1/feedback", headers=_auth(LABELLER), json={"request_id": rid,
                                                                      "correct": False})
        assert named.status_code == 200, named.text


def test_labels_are_rate_limited_per_key(proxy_db: tuple[str, Path]) -> None:
    url, _ = proxy_db
    with httpx.Client(base_url=url, timeout=10) as c:
        rid = _ask(c, KEY_A, "What is 6 x 7? sure")
        codes = [c.post("/v1/feedback", headers=_auth(KEY_A),
                        json={"request_id": rid, "correct": True}).status_code
                 for _ in range(7)]
        assert codes == [200] * 5 + [429] * 2  # --feedback-rate 5 per minute
        # another key has its own budget (and is refused by ownership, not by the limit)
        other = c.post("/v1/feedback", headers=_auth(KEY_B),
                       json={"request_id": rid, "correct": True})
        assert other.status_code == 404


@pytest.mark.parametrize("cost", [1e-300, 0.001, 1e6, 251.0])
def test_cost_labels_outside_the_scale_are_rejected(proxy_db: tuple[str, Path],
                                                    cost: float) -> None:
    url, _ = proxy_db
    with httpx.Client(base_url=url, timeout=10) as c:
        rid = _ask(c, KEY_A, "What is 6 x 7? sure")
        r = c.post("/v1/feedback", headers=_auth(KEY_A), json={"request_id": rid,
                                                               "cost": cost})
        assert r.status_code == 400 and r.json()["error"]["param"] == "cost"


def test_deeply_nested_feedback_is_400(proxy_db: tuple[str, Path]) -> None:
    url, _ = proxy_db
    with httpx.Client(base_url=url, timeout=10) as c:
        r = c.post("/v1/feedback", headers={**_auth(KEY_A), "content-type": "application/json"},
                   content=b"[" * 100_000 + b"]" * 100_000)
        assert r.status_code == 400, r.text


def test_a_refit_from_hostile_labels_is_refused_with_the_drift_listed(
        start_proxy: Callable[..., object], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """80 labels "cheap and correct" on costly questions would teach the cost model that
    insulin doses cost nothing; the refit is refused, then written only with --accept-drift."""
    db = tmp_path / "audit.db"
    served = start_proxy(audit_path=db, audit_queries=True, api_keys=[KEY_A],
                         feedback_rate=1000)
    with httpx.Client(base_url=served.url, timeout=10) as c:  # type: ignore[attr-defined]
        for i in range(80):
            kind = ("sure", "unsure")[i % 2]
            rid = _ask(c, KEY_A, f"How many units of insulin for patient {i}? {kind}")
            label = {"request_id": rid, "correct": i % 10 != 0, "answerable": True,
                     "cost": 0.05}
            assert c.post("/v1/feedback", headers=_auth(KEY_A), json=label).status_code == 200
    served.stop()  # type: ignore[attr-defined]
    out = tmp_path / "poisoned"
    # the labels are KEY_A's on its own decisions: since issue 36 a refit learns from them
    # only when asked, and from one key only when --max-key-share allows it
    args = ["fit", "--from-audit", str(db), "--out", str(out), "--min-labels", "40",
            "--accept-self-labels", "--max-key-share", "1"]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "high-cost reference questions" in captured.err and "--accept-drift" in captured.err
    assert not out.exists()
    assert "labels by key:" in captured.out and "80 from the key that made" in captured.out
    assert main([*args, "--accept-drift"]) == 0
    printed = capsys.readouterr().out
    assert "drift accepted" in printed
    meta = json.loads((out / "policy.json").read_text())
    assert meta["training"]["drift_accepted"]  # the card lists what was accepted
    assert meta["training"]["label_provenance"]["by_deciding_key"] == 80
