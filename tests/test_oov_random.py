"""``oov="random"`` draws a vocabulary word uniformly (χ² on a 5-word vocabulary), and the same test
rejects a sampler that never draws the last word (power check)."""

import numpy as np
import pytest
from scipy import stats

import textdp
from textdp.vocab import Vocabulary

ALPHA = 1e-6
WORDS = ["alpha", "bravo", "charlie", "delta", "echo"]
N = 20_000


def _vocabulary():
    rng = np.random.default_rng(0)
    return Vocabulary(WORDS, rng.standard_normal((5, 4)), name="five")


def _uniform_p(samples):
    counts = np.array([samples.count(w) for w in WORDS])
    assert counts.sum() == len(samples), "an output outside the vocabulary"
    return stats.chisquare(counts).pvalue  # uniform expected counts


def _random_words(seed):
    # One document of N out-of-vocabulary tokens, and N documents of one: both seeded paths.
    texts = [" ".join(["zzq"] * (N // 2))] + ["qqz"] * (N // 2)
    out = textdp.privatize(texts, "mvc", 1.0, vocabulary=_vocabulary(), oov="random", seed=seed)
    return " ".join(out.texts).split()


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [None, 3])
def test_oov_random_is_uniform_over_the_vocabulary(seed):
    assert _uniform_p(_random_words(seed)) > ALPHA


@pytest.mark.statistical
def test_power_a_sampler_missing_the_last_word_is_rejected():
    rng = np.random.default_rng(1)
    wrong = [WORDS[i] for i in rng.integers(len(WORDS) - 1, size=N)]
    assert _uniform_p(wrong) < ALPHA
    slightly = [WORDS[i] for i in rng.choice(5, size=N, p=[0.21, 0.21, 0.21, 0.21, 0.16])]
    assert _uniform_p(slightly) < ALPHA
