"""1-Diffractor's N_w = Pr[M(w) = w] in closed form agrees with its output law for every word,
the ends of every list included (issue 12: a wrong end case survived the suite)."""

import numpy as np
import pytest

from textdp.mechanisms.word.diffractor import Diffractor
from textdp.vocab import Vocabulary, load_default


@pytest.fixture(scope="module")
def vocabs():
    glove = load_default()
    small = Vocabulary(glove.words[:80], glove.vectors[:80], name="glove-top80")
    rng = np.random.default_rng(8)
    order = rng.permutation(len(small))
    other = Vocabulary([small.words[i] for i in order],
                       small.vectors[order] + rng.standard_normal((80, 50)).astype(np.float32),
                       name="other-80")
    return small, other


@pytest.mark.parametrize("method", ["geometric", "tem"])
@pytest.mark.parametrize("eps", [0.3, 2.0])
@pytest.mark.parametrize("lists", ["one", "two models", "three per model"])
def test_probability_unchanged_equals_output_law_for_every_word(vocabs, method, eps, lists):
    small, other = vocabs
    kw = {"one": {}, "two models": {"models": [small, other], "n_lists": 2},
          "three per model": {"n_lists": 3}}[lists]
    m = Diffractor(small, epsilon=eps, method=method, cache=False, **kw)
    words = np.arange(len(small))
    ends = np.unique(np.concatenate([m.lists[:, 0], m.lists[:, -1]]))
    assert ends.size >= 2  # the list ends are among the words checked
    got = m.probability_unchanged(words)
    want = np.array([m.output_distribution(int(w))[w] for w in words])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
    # The ends of a list differ from its interior (the clamp adds the tail there).
    if method == "geometric" and lists == "one":
        interior = m.lists[0, len(small) // 2]
        assert got[m.lists[0, 0]] > got[interior] * 1.01
