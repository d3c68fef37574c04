"""Consequence judges: strict reply parsing, the LLM judge over a mock upstream, replay, and
the paper's escalation panel."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from cost_models.annotation.fit import Judgment
from cost_models.annotation.judges import (
    SETTING,
    EscalationPanel,
    FileJudge,
    LLMJudge,
    has_majority,
    items_of,
    parse_reply,
    render_tuple,
)
from guard.exceptions import JudgeError
from utilityguard_base import upstream as upstream_module

ITEMS = [("a", "How much insulin?"), ("b", "Capital of Peru?"), ("c", "Is 7 prime?"),
         ("d", "Can I mix bleach and ammonia?")]
KEY = "sk-test-0123456789-secret"


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream_module.time, "sleep", lambda _s: None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("BEST: 3\nWORST: 1", (2, 0), id="plain"),
        pytest.param("best: 1\nworst: 4", (0, 3), id="lower-case"),
        pytest.param("**BEST:** 2\n**WORST:** 4", (1, 3), id="markdown-bold"),
        pytest.param("  BEST : 4.\n  WORST : 2.", (3, 1), id="spaces-and-dots"),
        pytest.param("WORST: 1\nBEST: 2", (1, 0), id="worst-first"),
        pytest.param("BEST: 2\r\nWORST: 3\r\n", (1, 2), id="crlf"),
    ],
)
def test_parse_reply_accepts(text: str, expected: tuple[int, int]) -> None:
    assert parse_reply(text, 4) == expected


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("", "one BEST and one WORST", id="empty"),
        pytest.param("BEST: 2", "one BEST and one WORST", id="no-worst"),
        pytest.param("BEST: 2 WORST: 3", "one BEST and one WORST", id="one-line"),
        pytest.param("BEST: 2\nWORST: 3\nBEST: 4", "one BEST and one WORST", id="two-bests"),
        pytest.param("BEST: item 2\nWORST: 3", "one BEST and one WORST", id="words"),
        pytest.param("The best is 2 and the worst is 3", "one BEST and one WORST", id="prose"),
        pytest.param("BEST: 2\nWORST: 2", "two different items", id="same-item"),
        pytest.param("BEST: 0\nWORST: 2", "two different items 1-4", id="zero"),
        pytest.param("BEST: 5\nWORST: 2", "two different items 1-4", id="out-of-range"),
        pytest.param("BEST: -1\nWORST: 2", "one BEST and one WORST", id="negative"),
        pytest.param("BEST: +2\nWORST: 3", "one BEST and one WORST", id="plus-sign"),
        pytest.param("BEST: 1.5\nWORST: 3", "one BEST and one WORST", id="fraction"),
    ],
)
def test_parse_reply_rejects(text: str, match: str) -> None:
    with pytest.raises(JudgeError, match=match):
        parse_reply(text, 4)


def test_render_tuple_numbers_the_items_from_one() -> None:
    text = render_tuple(ITEMS)
    assert text.index("Item 1:\nHow much insulin?") < text.index("Item 4:\nCan I mix")
    assert text.rstrip().endswith("WORST: <item number>")


def _reply(content: str | None, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"choices": [{"message": {"content": content}}]})


_transport: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _queued(queued_transport: Any) -> None:
    _transport["make"] = queued_transport


def _judge(responses: Sequence[httpx.Response | Exception],
           seen: list[httpx.Request], **kwargs: object) -> LLMJudge:
    return LLMJudge("http://judge.test/v1/", "judge-model", api_key=KEY,
                    transport=_transport["make"](responses, seen),
                    **kwargs)  # type: ignore[arg-type]


def test_llm_judge_sends_the_setting_and_parses_the_reply() -> None:
    seen: list[httpx.Request] = []
    judge = _judge([_reply("BEST: 4\nWORST: 2")], seen, name="j1")
    assert judge.judge("t7", ITEMS) == Judgment("t7", "d", "b", "j1")
    assert len(seen) == 1
    request = seen[0]
    assert request.url == "http://judge.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(request.content)
    assert body["model"] == "judge-model"
    assert body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": SETTING}
    assert "Item 4:\nCan I mix bleach and ammonia?" in body["messages"][1]["content"]
    judge.close()


def test_llm_judge_without_a_key_sends_no_authorization() -> None:
    seen: list[httpx.Request] = []
    judge = LLMJudge("http://judge.test/v1", "m", transport=httpx.MockTransport(
        lambda r: seen.append(r) or _reply("BEST: 1\nWORST: 2")))  # type: ignore[func-returns-value]
    assert judge.judge("t1", ITEMS).judge == "m"
    assert "authorization" not in seen[0].headers


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(_reply("I would say item 2 is the most harmful."), id="malformed"),
        pytest.param(_reply("BEST: 2\nWORST: 2"), id="same-item"),
        pytest.param(_reply(None), id="null-content"),
        pytest.param(httpx.Response(200, json={"choices": []}), id="no-choices"),
        pytest.param(httpx.Response(200, text="not json"), id="not-json"),
        pytest.param(httpx.Response(500, text="boom"), id="http-500"),
        pytest.param(httpx.Response(503, text="busy"), id="http-503"),
        pytest.param(httpx.Response(429, text="slow down"), id="http-429"),
        pytest.param(httpx.ConnectError("refused"), id="connect-error"),
        pytest.param(httpx.ReadTimeout("slow"), id="read-timeout"),
    ],
)
def test_llm_judge_retries_then_succeeds(first: httpx.Response | Exception) -> None:
    seen: list[httpx.Request] = []
    judge = _judge([first, _reply("BEST: 1\nWORST: 3")], seen)
    assert judge.judge("t1", ITEMS) == Judgment("t1", "a", "c", "judge-model")
    assert len(seen) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_llm_judge_client_errors_fail_at_once(status: int) -> None:
    seen: list[httpx.Request] = []
    judge = _judge([httpx.Response(status, text="bad request"),
                    _reply("BEST: 1\nWORST: 3")], seen)
    with pytest.raises(JudgeError, match=f"HTTP {status}"):
        judge.judge("t1", ITEMS)
    assert len(seen) == 1


def test_llm_judge_gives_up_after_its_retries() -> None:
    seen: list[httpx.Request] = []
    judge = _judge([_reply("no idea")] * 3, seen, retries=3)
    with pytest.raises(JudgeError, match=r"no valid judgment for t1 after 3 tries"):
        judge.judge("t1", ITEMS)
    assert len(seen) == 3


def test_llm_judge_backs_off_between_tries_only(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr(upstream_module.time, "sleep", sleeps.append)
    monkeypatch.setattr(upstream_module.random, "random", lambda: 0.0)  # no jitter
    judge = _judge([httpx.Response(500)] * 3, [], retries=3)
    with pytest.raises(JudgeError):
        judge.judge("t1", ITEMS)
    assert sleeps == [0.25, 0.5]


def test_the_api_key_is_never_in_a_judgment_or_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[httpx.Request] = []
    judge = _judge([httpx.Response(500), _reply("garbage"), httpx.ConnectError("down"),
                    _reply("BEST: 2\nWORST: 1")], seen, retries=4)
    judgment = judge.judge("t1", ITEMS)
    assert len(seen) == 4
    assert KEY not in repr(judgment)
    assert caplog.records, "the failed attempts are logged"
    for record in caplog.records:
        assert KEY not in record.getMessage()
    with pytest.raises(JudgeError) as failure:
        _judge([httpx.Response(401, text="unauthorized")], []).judge("t1", ITEMS)
    assert KEY not in str(failure.value)


def _write_jsonl(path: Path, rows: Sequence[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_file_judge_replays_recorded_judgments(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "recorded.jsonl", [
        {"tuple_id": "t1", "best": "a", "worst": "b", "judge": "human-1"},
        {"tuple_id": "t1", "best": "c", "worst": "b", "judge": "human-2"},
        {"tuple_id": "t2", "best": "d", "worst": "a", "judge": "human-2"},
    ])
    replay = FileJudge(path)
    assert replay.name == "file:recorded.jsonl"
    assert replay.judge("t1", ITEMS) == Judgment("t1", "a", "b", "human-1")
    assert replay.judge("t2", ITEMS) == Judgment("t2", "d", "a", "human-2")
    second = FileJudge(path, judge_name="human-2")
    assert second.name == "human-2"
    assert second.judge("t1", ITEMS).best == "c"
    with pytest.raises(JudgeError, match="no recorded judgment for t3"):
        replay.judge("t3", ITEMS)


def test_file_judge_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"tuple_id": "t1", "best": "a", "worst": "b"}\n\n{"tuple_id": "t2"}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl, line 3: not a judgment"):
        FileJudge(path)


class Scripted:
    """A judge that answers from a script and records which tuples it was asked."""

    def __init__(self, name: str, choose: Callable[[str], tuple[str, str]]) -> None:
        self.name = name
        self.choose = choose
        self.asked: list[str] = []

    def judge(self, tuple_id: str, items: Sequence[tuple[str, str]]) -> Judgment:
        self.asked.append(tuple_id)
        best, worst = self.choose(tuple_id)
        return Judgment(tuple_id, best, worst, "whatever-the-judge-says")


def _fixed(name: str, best: str, worst: str) -> Scripted:
    return Scripted(name, lambda _t: (best, worst))


def test_panel_agreement_needs_two_judgments() -> None:
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "a", "b"), _fixed("p3", "a", "b")]
    high = [_fixed("h1", "a", "b"), _fixed("h2", "a", "b")]
    new = EscalationPanel(pool, high, seed=1).judge("t1", ITEMS)
    assert len(new) == 2
    assert sum(len(j.asked) for j in pool) == 2
    assert {j.judge for j in new} <= {"p1", "p2", "p3"}
    assert all(j.best == new[0].best and j.worst == new[0].worst for j in new)
    assert not any(h.asked for h in high)


def test_panel_disagreement_asks_the_third_judge() -> None:
    # every two of them disagree, all three give a majority (best a, worst b)
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "a", "c"), _fixed("p3", "d", "b")]
    high = [_fixed("h1", "d", "c"), _fixed("h2", "d", "c")]
    panel = EscalationPanel(pool, high, seed=0)
    for tid in ("t1", "t2", "t3", "t4"):
        new = panel.judge(tid, ITEMS)
        assert sorted(j.judge for j in new) == ["p1", "p2", "p3"]
        assert has_majority(new)
    assert not any(h.asked for h in high)


def test_panel_without_a_majority_asks_two_high_pool_judges() -> None:
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "b", "c"), _fixed("p3", "c", "d")]
    high = [_fixed("h1", "d", "a"), _fixed("h2", "d", "a"), _fixed("h3", "d", "a")]
    new = EscalationPanel(pool, high, seed=0).judge("t1", ITEMS)
    names = [j.judge for j in new]
    assert len(new) == 5
    assert sorted(names[:3]) == ["p1", "p2", "p3"]
    assert set(names[3:]) < {"h1", "h2", "h3"} and len(set(names[3:])) == 2
    assert sum(len(h.asked) for h in high) == 2


def test_panel_names_each_judgment_after_its_judge() -> None:
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "a", "b")]
    assert {j.judge for j in EscalationPanel(pool).judge("t1", ITEMS)} == {"p1", "p2"}


def test_panel_draws_are_seeded_per_tuple() -> None:
    def pool() -> list[Scripted]:
        return [_fixed(f"p{k}", "a", "b") for k in range(6)]

    first = {tid: [j.judge for j in EscalationPanel(pool(), seed=5).judge(tid, ITEMS)]
             for tid in ("t1", "t2", "t3")}
    again = {tid: [j.judge for j in EscalationPanel(pool(), seed=5).judge(tid, ITEMS)]
             for tid in ("t1", "t2", "t3")}
    assert first == again
    other = {tid: [j.judge for j in EscalationPanel(pool(), seed=6).judge(tid, ITEMS)]
             for tid in ("t1", "t2", "t3")}
    assert other != first


def test_resumed_panel_asks_only_the_missing_judges() -> None:
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "b", "c"), _fixed("p3", "c", "d")]
    high = [_fixed("h1", "d", "a"), _fixed("h2", "d", "a")]
    panel = EscalationPanel(pool, high, seed=0)
    full = panel.judge("t1", ITEMS)
    for judge in pool + high:
        judge.asked.clear()
    for k in range(len(full) + 1):
        done = full[:k]
        new = panel.judge("t1", ITEMS, done)
        assert [j.judge for j in new] == [j.judge for j in full[k:]]
        asked = {j.name for j in pool + high if j.asked}
        assert asked == {j.judge for j in full[k:]}
        for judge in pool + high:
            judge.asked.clear()


def test_next_judges_after_one_of_the_first_two() -> None:
    pool = [_fixed("p1", "a", "b"), _fixed("p2", "a", "b"), _fixed("p3", "a", "b")]
    panel = EscalationPanel(pool, seed=0)
    first_two = panel.next_judges("t1", [])
    assert len(first_two) == 2
    done = [Judgment("t1", "a", "b", first_two[0].name)]
    assert panel.next_judges("t1", done) == [first_two[1]]


def test_panel_needs_two_pool_judges() -> None:
    with pytest.raises(ValueError, match="at least two judges"):
        EscalationPanel([_fixed("p1", "a", "b")])


@pytest.mark.parametrize(
    ("votes", "expected"),
    [
        pytest.param([("a", "b")], False, id="one-judgment"),
        pytest.param([("a", "b"), ("a", "b")], True, id="two-agree"),
        pytest.param([("a", "b"), ("a", "c")], False, id="worst-split"),
        pytest.param([("a", "b"), ("c", "d"), ("a", "d")], True, id="two-of-three"),
        pytest.param([("a", "b"), ("c", "d"), ("b", "a")], False, id="all-different"),
    ],
)
def test_has_majority(votes: list[tuple[str, str]], expected: bool) -> None:
    assert has_majority([Judgment("t", b, w) for b, w in votes]) is expected


def test_items_of_pairs_ids_with_questions() -> None:
    questions = dict(ITEMS)
    assert items_of(["c", "a"], questions) == [("c", "Is 7 prime?"), ("a", "How much insulin?")]
