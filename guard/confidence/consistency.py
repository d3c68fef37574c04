"""Self-consistency: how often independently sampled replies give the same answer.

Replies are compared after :func:`guard.answers.normalize_answer` (the choice letter, the number
rounded to 6 significant digits, or the normalized text), and every refusal counts as one and
the same answer, ``"<refusal>"``. Two shares are useful:

* the **modal share** (the default): the frequency of the most common answer;
* the **agreement** with a given reply (``reference=``): the share of replies that give the
  same answer as the one that will be delivered. This is what ``utilityguard collect``
  records as ``confidence.consistency`` (the greedy reply plus its samples), and what the
  runtime extractor computes, so a calibrator fitted on collected records applies at run time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from guard.answers import normalize_answer
from guard.exceptions import ConfidenceError
from guard.refusal_detection import is_refusal

#: The normalized form shared by every refusal.
REFUSAL_ANSWER = "<refusal>"
ANSWER_TYPES = ("choice", "number", "text", "code")


def normalized_answer(
    reply: str | None, answer_type: str = "text", question: str | None = None
) -> str:
    """The canonical answer of one reply; :data:`REFUSAL_ANSWER` for any refusal.

    Examples
    --------
    >>> normalized_answer("The answer is 1,200.", "number")
    '1200'
    >>> normalized_answer("I'm sorry, I cannot answer that.")
    '<refusal>'
    """
    if answer_type not in ANSWER_TYPES:
        raise ConfidenceError(
            f"answer_type must be one of {', '.join(ANSWER_TYPES)}; got {answer_type!r}"
        )
    if reply is None or is_refusal(reply):
        return REFUSAL_ANSWER
    return normalize_answer(reply, answer_type, question)


def consistency(
    answers: Sequence[str | None],
    answer_type: str = "text",
    question: str | None = None,
    *,
    reference: str | None = None,
) -> float | None:
    """The modal share of ``answers``, or their agreement with ``reference``.

    Parameters
    ----------
    answers : sequence of str or None
        The sampled replies (``None`` counts as a refusal).
    answer_type : {"choice", "number", "text", "code"}, default "text"
        How replies are normalized before comparison.
    question : str, optional
        The question, used to map option texts to choice letters.
    reference : str, optional
        When given, return the share of ``answers`` equal to ``reference`` after
        normalization (include the reference itself in ``answers`` to count it).

    Returns
    -------
    float or None
        A share in (0, 1]; ``None`` ("no signal") when ``answers`` is empty.

    Examples
    --------
    >>> consistency(["42", "The answer is 42.", "41", "42.0"], "number")
    0.75
    >>> consistency(["B", "(B)", "C) soap", "The answer is B"], "choice")
    0.75
    >>> consistency(["Paris", "paris!", "Lyon"], reference="Lyon")
    0.3333333333333333
    >>> consistency(["I cannot answer.", "I don't know.", "Paris"])
    0.6666666666666666
    >>> consistency([]) is None
    True
    """
    if not answers:
        return None
    normalized = [normalized_answer(a, answer_type, question) for a in answers]
    counts = Counter(normalized)
    if reference is not None:
        hits = counts[normalized_answer(reference, answer_type, question)]
    else:
        hits = counts.most_common(1)[0][1]
    return hits / len(normalized)
