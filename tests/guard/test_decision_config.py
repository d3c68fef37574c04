"""One validator per decision value: the settings, ``Guard.decide`` and the proxy's header
parser accept exactly the same values, and a bad header's 400 names the header."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from guard.core import Guard
from guard.exceptions import ConfigError, InvalidRequestError
from guard.proxy.overrides import (
    CONFIDENCE_HEADER,
    COST_HEADER,
    MODE_HEADER,
    REFUSAL_COST_HEADER,
    parse_overrides,
)
from guard.settings import Settings


def _accepted(call: Callable[[], Any], errors: tuple[type[Exception], ...]) -> bool:
    try:
        call()
    except errors:
        return False
    return True


def _settings(**values: Any) -> Settings:
    return Settings(**{"_env_file": None, **values})


def _decide(**kwargs: Any) -> Any:
    base: dict[str, Any] = {"cost": 4.0, "confidence": 0.5}
    return Guard().decide("q", "The answer is 42.", **{**base, **kwargs})


# (value as text, accepted?) — the rule written by hand: c_r is a finite number >= 0
C_R = [("0", True), ("2.5", True), ("1e308", True), ("-1", False), ("nan", False),
       ("inf", False), ("abc", False), ("", False)]
# cost is a finite number > 0
COST = [("4", True), ("0.001", True), ("0", False), ("-2", False), ("nan", False),
        ("-inf", False), ("x", False)]
# mode is exactly "enforce" or "shadow"
MODE = [("enforce", True), ("shadow", True), ("loud", False), ("", False),
        ("dry-run", False)]

PATHS: dict[str, dict[str, Callable[[str], Any]]] = {
    "c_r": {
        "settings": lambda v: _settings(c_r=v),
        "decide": lambda v: _decide(c_r=v),
        "header": lambda v: parse_overrides({REFUSAL_COST_HEADER: v}),
    },
    "mode": {
        "settings": lambda v: _settings(mode=v),
        "decide": lambda v: _decide(mode=v),
        "header": lambda v: parse_overrides({MODE_HEADER: v}),
    },
    # the settings hold no cost (it comes from the cost model or the caller)
    "cost": {
        "decide": lambda v: _decide(cost=v),
        "header": lambda v: parse_overrides({COST_HEADER: v}),
    },
}
ERRORS = (ValidationError, ConfigError, InvalidRequestError)


CASES = {"c_r": C_R, "mode": MODE, "cost": COST}


@pytest.mark.parametrize(("field", "path", "value", "ok"), [
    pytest.param(field, path, v, ok, id=f"{field}-{path}-{v or 'empty'}")
    for field, values in CASES.items() for path in PATHS[field] for v, ok in values
])
def test_a_value_accepted_by_one_path_is_accepted_by_all(field: str, path: str, value: str,
                                                         ok: bool) -> None:
    assert _accepted(lambda: PATHS[field][path](value), ERRORS) is ok


@pytest.mark.parametrize(("header", "value", "message"), [
    pytest.param(COST_HEADER, "0",
                 "header x-utilityguard-cost must be a finite number > 0; got '0'", id="cost"),
    pytest.param(COST_HEADER, "abc",
                 "header x-utilityguard-cost must be a number; got 'abc'", id="cost-text"),
    pytest.param(REFUSAL_COST_HEADER, "-1",
                 "header x-utilityguard-refusal-cost must be a finite number >= 0; got '-1'",
                 id="c_r"),
    pytest.param(MODE_HEADER, "loud",
                 "header x-utilityguard-mode must be 'enforce' or 'shadow'; got 'loud'",
                 id="mode"),
    pytest.param(CONFIDENCE_HEADER, "1.5",
                 "header x-utilityguard-confidence must be a finite number in [0.0, 1.0]; "
                 "got '1.5'", id="confidence"),
])
def test_header_errors_name_the_header(header: str, value: str, message: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        parse_overrides({header: value})
    assert str(info.value) == message
    assert info.value.param == header and info.value.code == "invalid_header"


def test_the_mode_header_is_a_case_insensitive_token() -> None:
    # the header's text is normalized before the shared check (as before the change)
    assert parse_overrides({MODE_HEADER: " Shadow "}).mode == "shadow"
    with pytest.raises(ConfigError, match="mode must be 'enforce' or 'shadow'"):
        _decide(mode="Shadow")
