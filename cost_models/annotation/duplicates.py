"""Near-duplicate questions: candidate pairs by similarity, and pooling the judgments of
confirmed duplicates into the copy that is kept.

Finding is mechanical, confirming is not: :func:`candidate_pairs` lists every pair above a
TF-IDF or an embedding cosine threshold, and a person reads each candidate to decide whether
the two ask the same thing (same information need, same correct response). The confirmed
list (``id``, ``duplicate_of``) then drives :func:`merge_duplicates`: the removed copy's
tuples and judgments count for the kept copy, so no judgment is lost and the kept question's
cost rests on every comparison made of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cost_models.annotation.fit import Judgment
from utilityguard_base.exceptions import InvalidValueError


def candidate_pairs(
    texts: Sequence[str], ids: Sequence[str], groups: Sequence[str] | None = None, *,
    tfidf_min: float = 0.28, embed_min: float | None = 0.60,
) -> list[dict[str, Any]]:
    """Pairs whose word 1-2-gram TF-IDF cosine is ``>= tfidf_min`` or whose wordllama
    embedding cosine is ``>= embed_min`` (``None``: TF-IDF only), most similar first.

    With ``groups`` (e.g. domains) only pairs from different groups are listed.
    """
    if len(texts) != len(ids) or (groups is not None and len(groups) != len(ids)):
        raise InvalidValueError("texts, ids and groups must have the same length")
    from sklearn.feature_extraction.text import TfidfVectorizer  # lazy: --help stays light

    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(texts)
    s_tfidf = np.asarray((vec @ vec.T).toarray(), dtype=np.float64)
    s_embed = None
    if embed_min is not None:
        from cost_models.embeddings import embed

        e = embed(texts)
        s_embed = e @ e.T
    i, j = np.triu_indices(len(texts), 1)
    keep = s_tfidf[i, j] >= tfidf_min
    if s_embed is not None and embed_min is not None:
        keep |= s_embed[i, j] >= embed_min
    if groups is not None:
        g = np.asarray(groups, dtype=object)
        keep &= g[i] != g[j]
    out = []
    for a, b in zip(i[keep], j[keep], strict=True):
        row: dict[str, Any] = {"a": ids[a], "b": ids[b],
                               "tfidf_cosine": round(float(s_tfidf[a, b]), 4)}
        if s_embed is not None:
            row["wordllama_cosine"] = round(float(s_embed[a, b]), 4)
        row["question_a"], row["question_b"] = texts[a], texts[b]
        out.append(row)
    out.sort(key=lambda r: -max(r["tfidf_cosine"], r.get("wordllama_cosine", 0.0)))
    return out


def read_aliases(rows: Sequence[Mapping[str, Any]], where: str) -> dict[str, str]:
    """``removed id -> kept id`` from rows with ``id`` and ``duplicate_of``."""
    alias: dict[str, str] = {}
    for n, r in enumerate(rows, start=1):
        if "id" not in r or "duplicate_of" not in r:
            raise InvalidValueError(f"{where}, line {n}: a duplicate needs 'id' and 'duplicate_of'")
        rid, kept = str(r["id"]), str(r["duplicate_of"])
        if rid == kept or rid in alias:
            raise InvalidValueError(
                f"{where}, line {n}: {rid!r} listed twice or as its own duplicate")
        alias[rid] = kept
    if chained := sorted(set(alias.values()) & set(alias)):
        raise InvalidValueError(
            f"{where}: kept ids that are themselves removed: {', '.join(chained)}")
    return alias


def merge_duplicates(
    tuples: Mapping[str, Sequence[str]], judgments: Sequence[Judgment], alias: Mapping[str, str],
) -> tuple[dict[str, list[str]], list[Judgment]]:
    """Tuples and judgments with every removed id replaced by the id it duplicates.

    A tuple that would hold the same item twice cannot be pooled: ``InvalidValueError`` names it.
    """
    merged: dict[str, list[str]] = {}
    for tid, members in tuples.items():
        new = [alias.get(m, m) for m in members]
        if len(set(new)) != len(new):
            raise InvalidValueError(f"tuple {tid} holds two copies of one question: {members}")
        merged[tid] = new
    pooled = [Judgment(j.tuple_id, alias.get(j.best, j.best), alias.get(j.worst, j.worst),
                       j.judge) for j in judgments]
    return merged, pooled
