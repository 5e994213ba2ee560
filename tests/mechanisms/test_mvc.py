"""MVC (Feyisetan et al. 2020): exact output law in one dimension, identity at huge ε, guarantee."""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import textdp
from textdp.mechanisms import create
from textdp.mechanisms.word.mvc import MVC
from textdp.vocab import Vocabulary

ROOT = Path(__file__).resolve().parents[2]


def _line_vocab():
    # Words on a line: MVC's Voronoi cells are intervals, so its output law has a closed form.
    return Vocabulary(["a", "b", "c", "d"], np.array([[0.0], [1.0], [3.0], [3.5]]))


def _line_probabilities(x, eps):
    cuts = np.array([0.5, 2.0, 3.25])
    cdf = stats.laplace(loc=x, scale=1 / eps).cdf(cuts)
    return np.diff(np.concatenate([[0.0], cdf, [1.0]]))


@pytest.mark.statistical
@pytest.mark.parametrize("word,x", [("a", 0.0), ("c", 3.0)])
def test_output_law_in_one_dimension(word, x):
    eps, n = 1.3, 200_000
    mech = MVC(_line_vocab(), epsilon=eps)
    ids = np.full(n, mech.vocabulary.index(word))
    counts = np.bincount(mech.privatize_ids(ids, np.random.default_rng(1)), minlength=4)
    expected = _line_probabilities(x, eps) * n
    assert stats.chisquare(counts, expected).pvalue > 1e-6
    # Power: the law of a mechanism run at ε × 1.05 is rejected by the same test.
    wrong = MVC(_line_vocab(), epsilon=eps * 1.05)
    counts = np.bincount(wrong.privatize_ids(ids, np.random.default_rng(2)), minlength=4)
    assert stats.chisquare(counts, expected).pvalue < 1e-6


def test_log_ratio_within_metric_bound_one_dimension():
    eps = 0.7
    vocab = _line_vocab()
    xs = vocab.vectors[:, 0].astype(float)
    for i, xi in enumerate(xs):
        for j, xj in enumerate(xs):
            lr = np.abs(np.log(_line_probabilities(xi, eps)) - np.log(_line_probabilities(xj, eps)))
            assert lr.max() <= eps * abs(xi - xj) + 1e-9, (i, j)


def test_huge_epsilon_returns_every_text_byte_for_byte():
    texts = (ROOT / "examples" / "reviews.txt").read_text(encoding="utf-8").splitlines()
    texts += ["The FOOD was Great!!", "", "  \t", "naïve café 😀 İstanbul 1984"]
    # entities="none": the entity stage would label names before the mechanism sees them
    result = textdp.privatize(texts, mechanism="mvc", epsilon=1e6, oov="keep", entities="none")
    assert result.texts == texts
    assert result.report["tokens"]["by_policy"]["privatized_unchanged"] == \
        result.report["tokens"]["by_policy"]["privatized"]


def test_small_epsilon_changes_words():
    result = textdp.privatize(["the house is on the hill"] * 20, epsilon=1.0, seed=3)
    assert sum(t != "the house is on the hill" for t in result.texts) >= 15


def test_guarantee_and_registry():
    assert "mvc" in textdp.mechanisms.available()
    mech = create("mvc", _line_vocab(), epsilon=2.0)
    g = mech.guarantee
    assert g.notion.startswith("metric DP") and g.epsilon == 2.0 and g.delta == 0
    assert "Euclidean" in g.metric and "same number" in g.per_document
    with pytest.raises(ValueError, match="unknown mechanism 'nope'"):
        create("nope", epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        create("mvc", _line_vocab(), epsilon=-1)
    with pytest.raises(ValueError, match="mvc"):
        create("mvc", _line_vocab(), epsilon=1, bogus=3)
