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
from numpy.typing import NDArray

from policies.decision import DEFAULT_C_R
from policies.validation import (
    as_bool,
    broadcast,
    positive_cost,
    refusal_cost,
    unwrap,
)

FloatArray = NDArray[np.float64]


def refusal_utility_values(answerable: Any, c_r: Any) -> FloatArray:
    """``b = (1 - a) - a C_R`` of already-validated arrays (no checks): the one place the
    formula is written; :func:`refusal_utility` validates and calls it, the bench calls it
    on arrays it validated once.

    Examples
    --------
    >>> refusal_utility_values(np.array([True, False]), 2.0).tolist()
    [-2.0, 1.0]
    """
    out: FloatArray = np.where(answerable, -np.asarray(c_r, dtype=np.float64), 1.0)
    return out


def response_utility_values(answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any
                            ) -> FloatArray:
    """``v`` of already-validated arrays (no checks, numpy broadcasting): ``+1`` for a correct
    answer to an answerable query, ``-L`` for any other answer, ``b`` for a refusal.

    Examples
    --------
    >>> a, d, c = np.array([True, True, False]), np.array([True, False, True]), np.ones(3, bool)
    >>> response_utility_values(a, d, c, np.array([5.0, 5.0, 5.0]), 2.0).tolist()
    [1.0, -2.0, -5.0]
    """
    right = np.asarray(answered) & np.asarray(answerable) & np.asarray(correct)
    out: FloatArray = np.where(answered, np.where(right, 1.0, -np.asarray(cost)),
                               refusal_utility_values(answerable, c_r))
    return out


def response_gain_values(answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any
                         ) -> FloatArray:
    """``g = v - b`` of already-validated arrays (0 for a refusal: it earns exactly ``b``).

    Examples
    --------
    >>> a, d, c = np.array([True, True, False]), np.array([True, False, True]), np.ones(3, bool)
    >>> response_gain_values(a, d, c, np.array([5.0, 5.0, 5.0]), 2.0).tolist()
    [3.0, 0.0, -6.0]
    """
    out: FloatArray = (response_utility_values(answerable, answered, correct, cost, c_r)
                       - refusal_utility_values(answerable, c_r))
    return out


def refusal_utility(answerable: Any, c_r: Any = DEFAULT_C_R) -> Any:
    """Utility ``b = (1 - a) - a C_R`` of refusing.

    Examples
    --------
    >>> refusal_utility(True, c_r=2.0), refusal_utility(False, c_r=2.0)
    (-2.0, 1.0)
    """
    a = as_bool("answerable", answerable)
    cr = refusal_cost("c_r", c_r)
    a, cr = broadcast(answerable=a, c_r=cr)
    return unwrap(refusal_utility_values(a, cr))


def response_utility(
    answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any = DEFAULT_C_R
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
    return unwrap(response_utility_values(a, d, c, cost_, cr))


def response_gain(
    answerable: Any, answered: Any, correct: Any, cost: Any, c_r: Any = DEFAULT_C_R
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
