"""The fake upstreams' scenario map: whole words, one explicit table (no prefix races)."""

from __future__ import annotations

from tests.guard.proxy.conftest import KeywordCost, Scenario, scenario_of


def test_a_plain_question_gets_the_default_scenario() -> None:
    # "pressure" holds "sure" and "sleeping" holds "sleep": neither is a scenario word
    assert scenario_of("Is it safe to stop my blood pressure pills? sleeping pills?") == Scenario()


def test_sure_and_unsure_are_two_words() -> None:
    assert scenario_of("a sure question").logprob == -0.01
    unsure = scenario_of("an unsure question")
    assert (unsure.logprob, unsure.confident) == (-2.0, False)
    assert scenario_of("sure? no: unsure").logprob == -2.0  # both given: unsure stands


def test_compound_words_and_parameters() -> None:
    sc = scenario_of("leak-sure status-429 huge-3 ignore-n")
    assert (sc.leak, sc.hostile_sure, sc.status, sc.huge_mib, sc.ignore_n) == (
        True, True, 429, 3, True)
    assert scenario_of("statuses-429").status is None


def test_the_fake_cost_reads_whole_words() -> None:
    assert [KeywordCost.cost(t) for t in ("max dose?", "a cheap one", "overdose", "x")] == [
        20.0, 0.5, 4.0, 4.0]
