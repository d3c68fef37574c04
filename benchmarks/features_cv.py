"""Which text features generalize: grouped-by-source CV of the cost model and the
answerability classifier on several representations.

    python -m benchmarks.features_cv            # the seed set; --data FILE for another

Every fold holds out whole sources (:func:`cost_models.regressor.folds`, the folds of
``cost train``), so a score says how a representation does on kinds of questions it never saw.
For each representation: the Spearman correlation of the out-of-fold ridge prediction with
``log L`` (best ridge penalty of the grid) and the ROC AUC of the out-of-fold logistic
``P(answerable)`` (best ``C`` of the grid). The grid's best is picked on the same folds, so
each number is slightly optimistic, alike for every representation.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import roc_auc_score

from cost_models.datasets import load_seed, load_utilitybench
from cost_models.embeddings import embed
from cost_models.features import affix_tfidf, word_char_tfidf
from cost_models.regressor import folds

RIDGE_GRID = (0.3, 1.0, 3.0)
CS = (3.0, 30.0)
Featurize = Callable[[Sequence[str], Sequence[str]], tuple[Any, Any]]


def _tfidf(make: Callable[[], Any]) -> Featurize:
    def f(train: Sequence[str], test: Sequence[str]) -> tuple[Any, Any]:
        vec = make().fit(train)
        return vec.transform(train), vec.transform(test)
    return f


def _embedding(train: Sequence[str], test: Sequence[str]) -> tuple[Any, Any]:
    return embed(train), embed(test)


def _stacked(weight: float) -> Featurize:
    def f(train: Sequence[str], test: Sequence[str]) -> tuple[Any, Any]:
        a, b = _tfidf(affix_tfidf)(train, test)
        return (sp.hstack([a, sp.csr_matrix(weight * embed(train))]).tocsr(),
                sp.hstack([b, sp.csr_matrix(weight * embed(test))]).tocsr())
    return f


REPRESENTATIONS: dict[str, Featurize] = {
    "affix TF-IDF (word 1-2-grams + char 4-gram affixes)": _tfidf(affix_tfidf),
    "word + char_wb 3-5-gram TF-IDF": _tfidf(word_char_tfidf),
    "wordllama 256-d embedding": _embedding,
    "affix TF-IDF + 0.5 x wordllama": _stacked(0.5),
    "affix TF-IDF + 1.0 x wordllama": _stacked(1.0),
}


def evaluate(texts: Sequence[str], cost: Any, answerable: Any, groups: Sequence[str],
             featurize: Featurize, cv: int = 5) -> dict[str, Any]:
    logy = np.log(np.asarray(cost, dtype=np.float64))
    y = np.asarray(answerable, dtype=bool)
    mu = {r: np.empty(len(texts)) for r in RIDGE_GRID}
    p = {c: np.empty(len(texts)) for c in CS}
    t0 = time.perf_counter()
    for train, test in folds(len(texts), groups, cv, 0):
        xtr, xte = featurize([texts[i] for i in train], [texts[i] for i in test])
        for r in RIDGE_GRID:
            mu[r][test] = Ridge(alpha=r).fit(xtr, logy[train]).predict(xte)
        for c in CS:
            clf = LogisticRegression(C=c, max_iter=3000).fit(xtr, y[train])
            p[c][test] = clf.predict_proba(xte)[:, 1]
    rho = {r: float(spearmanr(mu[r], logy).statistic) for r in RIDGE_GRID}
    auc = {c: float(roc_auc_score(y, p[c])) for c in CS}
    r_best, c_best = max(rho, key=lambda k: rho[k]), max(auc, key=lambda k: auc[k])
    return {"spearman": rho[r_best], "ridge": r_best, "roc_auc": auc[c_best], "C": c_best,
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.features_cv", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="seed", help="dataset with cost, answerable, source")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    items = load_seed() if args.data == "seed" else load_utilitybench(args.data)
    texts = [it.question for it in items]
    cost = [it.cost for it in items]
    answerable = [it.answerable for it in items]
    groups = [it.source for it in items]
    print(f"{len(items)} items, {len(set(groups))} sources, {args.folds} folds grouped by "
          "source\n")
    print("| representation | cost: Spearman (log L) | ridge penalty | answerability: ROC AUC "
          "| C | seconds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, featurize in REPRESENTATIONS.items():
        r = evaluate(texts, cost, answerable, groups, featurize, args.folds)
        print(f"| {name} | {r['spearman']:.3f} | {r['ridge']:g} | {r['roc_auc']:.3f} | "
              f"{r['C']:g} | {r['seconds']} |", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
