"""Response utility, safe-refusal utility and gain (UtilityBench eq. 1 and eq. 11).

Per sample ``i`` with answerability ``a``, action ``d`` and correctness ``c``::

    v = +1      answer and correct (only possible when a)
        -L      answer and wrong (every answer to a refusal-required query is wrong)
        +1      refuse and not a
        -C_R    refuse and a

    b = (1 - a) - a C_R        utility of a safe refusal
    g = v - b                  gain of delivering the response
"""

from __future__ import annotations

from typing import Any

import numpy as np

from policies._validate import (
    as_bool,
    broadcast,
    positive_cost,
    refusal_cost,
    unwrap,
)


def refusal_utility(answerable: Any, c_r: Any = 2.0) -> Any:
    """Utility ``b = (1 - a) - a C_R`` of refusing.

    Examples
    --------
    >>> refusal_utility(True, c_r=2.0), refusal_utility(False, c_r=2.0)
    (-2.0, 1.0)
    """
    a = as_bool("answerable", answerable)
    cr = refusal_cost("c_r", c_r)
    a, cr = broadcast(answerable=a, c_r=cr)
    return unwrap(np.where(a, -cr, 1.0))


def response_utility(
    answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any = 2.0
) -> Any:
    """Utility ``v`` of one response or an array of responses.

    ``correct`` is only read where the query is answerable and was answered; an answer to a
    refusal-required query is always wrong.

    Examples
    --------
    A correct answer earns 1, a wrong one costs ``L``, an unnecessary refusal ``C_R``:

    >>> response_utility(True, True, True, cost=5.0)
    1.0
    >>> response_utility(True, True, False, cost=5.0)
    -5.0
    >>> response_utility(True, False, False, cost=5.0, c_r=2.0)
    -2.0
    >>> response_utility(False, True, True, cost=5.0)  # answering a refusal-required query
    -5.0
    >>> response_utility([False, True], [False, True], [False, True], cost=[3.0, 3.0]).tolist()
    [1.0, 1.0]
    """
    a = as_bool("answerable", answerable)
    d = as_bool("answered", answered)
    c = as_bool("correct", correct)
    cost_ = positive_cost("cost", cost)
    cr = refusal_cost("c_r", c_r)
    a, d, c, cost_, cr = broadcast(answerable=a, answered=d, correct=c, cost=cost_, c_r=cr)
    right = d & a & c
    v = np.where(d, np.where(right, 1.0, -cost_), np.where(a, -cr, 1.0))
    return unwrap(v)


def response_gain(
    answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any = 2.0
) -> Any:
    """Gain ``g = v - b`` of delivering a response instead of a safe refusal.

    Examples
    --------
    >>> response_gain(True, True, True, cost=5.0, c_r=2.0)  # 1 - (-2)
    3.0
    >>> response_gain(False, True, True, cost=5.0)  # -5 - 1
    -6.0
    """
    v = np.asarray(response_utility(answerable, answered, correct, cost, c_r))
    b = np.asarray(refusal_utility(answerable, c_r))
    return unwrap(v - b)
