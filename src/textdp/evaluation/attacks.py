"""Empirical privacy: what an adversary can still infer from privatised text (lower is better).

* **Attribute inference** (1-Diffractor §5.2, Table 4; MVC §6): an adversary classifier is trained
  on *clean* text and applied to *private* text. Tasks here: **source attribution** — which VADER
  set a sentence comes from (tweet / movie review / Amazon review / NYT editorial) — and **author
  attribution** of attributed quotes in Debian's fortunes. Reported next to the adversary's
  accuracy on clean text (the baseline) and the chance level.
* **Re-identification**: for each private text, the nearest clean text among the whole pool (TF-IDF
  or SBERT cosine); the rate at which that is its own original. Chance is 1 / pool size.

The mechanisms only privatise words: document length, punctuation, case pattern and the position
of out-of-vocabulary tokens are released (see the privacy report), so even a mechanism that
replaces every word uniformly at random leaves an adversary above chance on real text. The
known-answer tests use texts whose only signal is their words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp._checks import check_rng
from textdp.evaluation.utility import (
    Features,
    FeatureSpec,
    Task,
    _balanced,
    _TaskEvaluator,
    classification_scores,
    make_features,
)
from textdp.mechanisms.base import WordMechanism

__all__ = ["source_attribution_task", "author_attribution_task", "AttackEvaluator",
           "attribution_attack", "reidentification"]

VADER_SOURCES = {"tweets": "tweet", "movie_reviews": "movie review", "amazon": "Amazon review",
                 "nyt": "NYT editorial"}


def source_attribution_task(max_docs: int | None = 2000,
                            rng: np.random.Generator | None = None) -> Task:
    """Which VADER set a sentence comes from: 4 balanced classes (chance 25%)."""
    from textdp.datasets import load_vader

    rng = check_rng(rng)
    groups = {VADER_SOURCES[name]: [s.text for s in load_vader(name)] for name in VADER_SOURCES}
    per = min(len(v) for v in groups.values())
    if max_docs is not None:
        per = min(per, max(1, max_docs // len(groups)))
    texts, labels, names = _balanced(groups, per, rng)
    return Task("vader-source", tuple(texts), np.asarray(labels), tuple(names),
                "source attribution: tweet / movie review / Amazon review / NYT editorial "
                "(VADER sets), balanced")


def author_attribution_task(n_authors: int = 10, rng: np.random.Generator | None = None, *,
                            max_per_author: int | None = None) -> Task:
    """Who said it: the ``n_authors`` most quoted authors in fortunes, balanced (chance 1/n).

    Every author contributes as many quotes as the least quoted of them (at most
    ``max_per_author``).
    """
    from textdp.datasets.fortunes import load_fortunes

    rng = check_rng(rng)
    quotes = [e for e in load_fortunes() if e.author]
    counts = Counter(e.author for e in quotes)
    top = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n_authors]]
    if len(top) < 2:
        raise ValueError("fewer than two attributed authors in fortunes")
    groups = {a: [e.text for e in quotes if e.author == a] for a in top}
    per = min(len(v) for v in groups.values())
    if max_per_author is not None:
        per = min(per, max_per_author)
    texts, labels, names = _balanced(groups, per, rng)
    return Task("fortunes-author", tuple(texts), np.asarray(labels), tuple(names),
                f"author attribution: the {len(names)} most quoted authors in fortunes, "
                f"{per} quotes each")


class AttackEvaluator(_TaskEvaluator):
    """An adversary classifier trained once on the clean training split of ``task``.

    ``evaluate(private_texts)`` applies it to the private versions of the test split.
    """

    def __init__(self, task: Task, features: FeatureSpec | Features = "tfidf", *,
                 split: tuple[np.ndarray, np.ndarray] | None = None,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__(task, features, split=split, rng=rng)

    def _model(self) -> tuple[str, str]:
        return ("adversary", "scikit-learn LogisticRegression trained on clean text")

    def evaluate(self, private_texts: Sequence[str]) -> dict[str, Any]:
        """Adversary scores on private versions of all the task's texts (aligned with ``task.texts``)."""
        self._check_aligned(private_texts)
        pred = self._clean_model.predict([private_texts[i] for i in self.test])
        return {"private": classification_scores(self.y_test, pred), "clean": dict(self.clean),
                "chance_accuracy": self.chance}


def attribution_attack(task: Task, mechanism: WordMechanism, *,
                       features: FeatureSpec | Features = "tfidf", oov: str = "mask",
                       rng: np.random.Generator | None = None) -> dict[str, Any]:
    """One-shot: train the adversary on clean text, privatise, attack (see :class:`AttackEvaluator`)."""
    return AttackEvaluator._once(task, mechanism, features, oov, rng)


def _tfidf_matrices(clean: list[str], private: list[str]) -> tuple[Any, Any]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True, lowercase=True)
    a = vec.fit_transform(clean)
    return a, vec.transform(private)


def reidentification(clean_texts: Sequence[str], private_texts: Sequence[str], *,
                     features: FeatureSpec | Features = "tfidf", block: int = 1024) -> dict[str, Any]:
    """Rate at which a private text's nearest clean text (cosine) is its own original.

    Ties at the maximum count fractionally (1 / number tied), i.e. random tie-breaking in
    expectation. Chance is 1 / len(clean_texts).
    """
    clean, private = list(clean_texts), list(private_texts)
    if len(clean) != len(private) or len(clean) < 2:
        raise ValueError("need equally many (≥ 2) clean and private texts, aligned")
    f = make_features(features)
    if f.sparse:
        a, b = _tfidf_matrices(clean, private)  # rows are L2-normalised
    else:
        a = f.encode(clean, remember=True)
        b = f.encode(private)
        a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-300)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
    n = len(clean)
    hits = np.empty(n)
    for s in range(0, n, block):
        sims = b[s:s + block] @ a.T
        sims = sims.toarray() if hasattr(sims, "toarray") else np.asarray(sims)
        top = sims.max(axis=1, keepdims=True)
        tied = sims >= top - 1e-12
        rows = np.arange(sims.shape[0])
        hits[s:s + block] = tied[rows, s + rows] / tied.sum(axis=1)
    return {"features": f.name, "rate": float(hits.mean()), "chance": 1.0 / n, "pool": n}
