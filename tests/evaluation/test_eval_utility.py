"""Utility with known answers on a corpus whose only signal is its words.

* Identity mechanism (oov="keep"): private text is the clean text, so both settings equal the
  clean baseline exactly, and the SBERT-style similarity is 1.
* Uniform mechanism: private text is independent of the label, so a clean-trained classifier on
  private text is at chance: |accuracy − 1/k| ≤ √(ln(2/α)/(2n)) (Hoeffding, α = 1e-6), and the
  identity mechanism is far above that bound (power).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from textdp.encoders import GloveMean
from textdp.evaluation.utility import (
    Features,
    Task,
    UtilityEvaluator,
    chance_accuracy,
    classification_scores,
    downstream_utility,
    privatize_texts,
    semantic_similarity,
    split_indices,
)

ALPHA = 1e-6


@pytest.fixture(scope="module")
def task(known):
    texts, labels = known.word_corpus(150, 4, 6, np.random.default_rng(5))
    return Task("toy", tuple(texts), labels, ("a", "b", "c", "d"))


@pytest.mark.parametrize("features", ["glove", "tfidf"])
def test_identity_gives_clean_baseline(known, toy_vocab, task, features):
    spec = GloveMean(toy_vocab) if features == "glove" else "tfidf"
    ev = UtilityEvaluator(task, spec, rng=np.random.default_rng(0))
    private = privatize_texts(task.texts, known.Identity(toy_vocab, epsilon=1.0),
                              np.random.default_rng(1), oov="keep")
    assert private == list(task.texts)
    r = ev.evaluate(private)
    assert r["train_private"] == r["clean"] == r["test_private"] == r["both_private"]
    assert r["clean"]["accuracy"] > 0.6 and r["chance_accuracy"] == pytest.approx(0.25)


def test_uniform_gives_chance(known, toy_vocab, task):
    ev = UtilityEvaluator(task, GloveMean(toy_vocab), rng=np.random.default_rng(2))
    n = ev.test.size
    bound = math.sqrt(math.log(2 / ALPHA) / (2 * n))
    r = ev.evaluate(privatize_texts(task.texts, known.Uniform(toy_vocab, epsilon=1.0),
                                    np.random.default_rng(3)))
    assert abs(r["test_private"]["accuracy"] - 0.25) <= bound
    assert abs(r["train_private"]["accuracy"] - 0.25) <= bound
    assert r["clean"]["accuracy"] > 0.25 + bound  # power: clean text is far from chance


def test_downstream_utility_one_shot(known, toy_vocab, task):
    r = downstream_utility(task, known.Identity(toy_vocab, epsilon=1.0),
                           features=GloveMean(toy_vocab), oov="keep", rng=np.random.default_rng(4))
    assert r["train_private"] == r["clean"]


def test_semantic_similarity(known, toy_vocab, task):
    f = Features(GloveMean(toy_vocab))
    same = semantic_similarity(task.texts[:20], task.texts[:20], features=f)
    assert same["mean"] == pytest.approx(1.0) and same["n"] == 20
    other = semantic_similarity(["bano bano", "zzz"], ["reli reli", "zzz"], features=f)
    assert other["n"] == 1 and np.isnan(other["per_text"][1])  # no known word: left out
    with pytest.raises(ValueError, match="sentence encoder"):
        semantic_similarity(["a"], ["b"], features="tfidf")
    with pytest.raises(ValueError):
        semantic_similarity(["a"], [], features=f)


def test_split_and_scores():
    labels = np.array([0] * 10 + [1] * 30)
    tr, te = split_indices(labels, 0.3, np.random.default_rng(0))
    assert np.intersect1d(tr, te).size == 0 and tr.size + te.size == 40
    assert (labels[te] == 0).sum() == 3 and (labels[te] == 1).sum() == 9
    assert chance_accuracy(labels[tr], labels[te]) == 0.75
    s = classification_scores(np.array([0, 1, 1]), np.array([0, 1, 0]))
    assert s["accuracy"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        split_indices(labels, 1.5)


def test_evaluator_checks_lengths(known, toy_vocab, task):
    ev = UtilityEvaluator(task, "tfidf", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="private texts"):
        ev.evaluate(["x"])
    assert ev.describe()["task"]["classes"] == 4


def test_vader_sentiment_task_is_balanced():
    from textdp.evaluation.utility import vader_sentiment_task

    t = vader_sentiment_task(200, np.random.default_rng(0))
    assert len(t) == 200 and t.label_names == ("negative", "positive")
    assert np.bincount(t.labels).tolist() == [100, 100]


def test_classifier_seed_keeps_the_high_bits():
    """Issue 37: the SAGA classifier's seed was ``seed % 2**32``, so two textdp seeds that
    differ only above bit 32 gave the same passes; it comes from ``library_seed`` now (in
    scikit-learn's range for every seed, distinct per seed)."""
    from textdp.evaluation.utility import _Classifier

    def state(seed):
        model = _Classifier(Features("tfidf"), seed).model
        return model.steps[-1][1].random_state

    low, high = state(7), state(7 + 2**40)
    assert low != high and 0 <= high < 2**32
    assert state(2**63 - 1) < 2**32
