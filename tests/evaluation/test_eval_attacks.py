"""Empirical privacy with known answers.

* Uniform mechanism on texts whose only signal is their words: the adversary (trained on clean
  text) is at chance on private text, |accuracy − 1/k| ≤ √(ln(2/α)/(2n)) (Hoeffding, α = 1e-6);
  identity is far above (power).
* Re-identification: identity finds every original (rate 1); uniform: the hits are independent
  with mean 1/n, so by Bernstein the number of hits is at most 1 + √(2 ln(2/α)) + (2/3) ln(2/α).
* The real tasks (VADER sources, fortunes authors) are balanced with the advertised chance level.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from textdp.encoders import GloveMean
from textdp.evaluation.attacks import (
    AttackEvaluator,
    attribution_attack,
    author_attribution_task,
    reidentification,
    source_attribution_task,
)
from textdp.evaluation.utility import Task, privatize_texts

ALPHA = 1e-6


@pytest.fixture(scope="module")
def task(known):
    texts, labels = known.word_corpus(200, 4, 8, np.random.default_rng(7))
    return Task("toy-authors", tuple(texts), labels, ("a", "b", "c", "d"))


@pytest.mark.parametrize("features", ["tfidf", "glove"])
def test_uniform_mechanism_attack_at_chance(known, toy_vocab, task, features):
    spec = GloveMean(toy_vocab) if features == "glove" else "tfidf"
    ev = AttackEvaluator(task, spec, rng=np.random.default_rng(0))
    n = ev.test.size
    bound = math.sqrt(math.log(2 / ALPHA) / (2 * n))
    uni = ev.evaluate(privatize_texts(task.texts, known.Uniform(toy_vocab, epsilon=1.0),
                                      np.random.default_rng(1)))
    assert uni["chance_accuracy"] == pytest.approx(0.25)
    assert abs(uni["private"]["accuracy"] - 0.25) <= bound
    ident = ev.evaluate(privatize_texts(task.texts, known.Identity(toy_vocab, epsilon=1.0),
                                        np.random.default_rng(1), oov="keep"))
    assert ident["private"] == ident["clean"]
    assert ident["private"]["accuracy"] > 0.25 + bound  # power


def test_attribution_attack_one_shot(known, toy_vocab, task):
    r = attribution_attack(task, known.Identity(toy_vocab, epsilon=1.0), oov="keep",
                           rng=np.random.default_rng(3))
    assert r["private"] == r["clean"] and r["clean"]["accuracy"] > 0.9


@pytest.mark.parametrize("features", ["tfidf", "glove"])
def test_reidentification_known_answers(known, toy_vocab, task, features):
    spec = GloveMean(toy_vocab) if features == "glove" else "tfidf"
    # Distinct bags of words (both features ignore word order): identity re-identifies them all.
    texts = list({tuple(sorted(t.split())): t for t in task.texts}.values())
    n = len(texts)
    same = reidentification(texts, texts, features=spec)
    assert same["rate"] == pytest.approx(1.0) and same["chance"] == pytest.approx(1 / n)
    private = privatize_texts(texts, known.Uniform(toy_vocab, epsilon=1.0), np.random.default_rng(4))
    r = reidentification(texts, private, features=spec)
    log_term = math.log(2 / ALPHA)
    assert r["rate"] * n <= 1 + math.sqrt(2 * log_term) + 2 / 3 * log_term


def test_reidentification_ties_count_fractionally():
    r = reidentification(["bano reli", "bano reli", "kumi"], ["bano reli", "bano reli", "kumi"])
    assert r["rate"] == pytest.approx((0.5 + 0.5 + 1) / 3)
    with pytest.raises(ValueError):
        reidentification(["a"], ["a"])


def test_source_attribution_task():
    t = source_attribution_task(80, np.random.default_rng(0))
    assert len(t) == 80 and t.n_classes == 4 and np.bincount(t.labels).tolist() == [20] * 4


def test_author_attribution_task():
    from textdp.datasets.fortunes import FortunesUnavailable

    try:
        t = author_attribution_task(5, np.random.default_rng(0), max_per_author=10)
    except FortunesUnavailable as exc:
        pytest.skip(str(exc))
    assert t.n_classes == 5 and np.bincount(t.labels).tolist() == [10] * 5
